/* Stream files and frame sources of the streaming solver (include/dsb/stream.h;
 * the format in docs/formats.md).  A stream file is one pass of the matrix as
 * its STREAM frames, so a user's own dense +-1 couplings, written once by any
 * tool, stream like the generated instances: from the CPU, into the GPU's
 * pinned frame buffer, or over the network. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bench.h"
#include "dsb/stream.h"
#include "dsb/wire.h"

struct dsb_stream_feed {
    dsb_stream_params p;
    uint32_t *eta; /* Mattis */
    int fd;        /* file, else -1 */
    char *path;    /* file: a copy of its path */
};

/* Reads frame f of a file into out and checks that it is frame f of pass 0 of
 * the file's run; then sets its pass field. */
static int read_file_frame(int fd, const char *path, uint32_t n, uint32_t run_id, uint64_t f,
                           uint32_t pass, uint8_t *out, cm_err *err)
{
    size_t got = 0;
    while (got < DSB_STREAM_FRAME) {
        ssize_t r = pread(fd, out + got, DSB_STREAM_FRAME - got,
                          (off_t)(f * DSB_STREAM_FRAME + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return cm_fail(err, "%s: frame %llu (offset %llu): %s", path, (unsigned long long)f,
                           (unsigned long long)(f * DSB_STREAM_FRAME),
                           r < 0 ? strerror(errno) : "the file ends early");
        got += (size_t)r;
    }
    dsb_wire_stream v;
    dsb_wire_reason why = dsb_wire_stream_check(out, DSB_STREAM_FRAME, n, 0, &v);
    uint32_t row, block;
    dsb_stream_frame_coords(f, n, &row, &block);
    if (why != DSB_WR_NONE)
        return cm_fail(err, "%s: frame %llu (offset %llu): %s (a frame of pass 0 of an n = %u run "
                            "expected)",
                       path, (unsigned long long)f, (unsigned long long)(f * DSB_STREAM_FRAME),
                       dsb_wire_reason_name(why), n);
    if (v.row != row || v.block != block)
        return cm_fail(err, "%s: frame %llu is row %u, column block %u; column-block-major order "
                            "puts row %u, block %u there",
                       path, (unsigned long long)f, v.row, v.block, row, block);
    if (v.request_id != run_id)
        return cm_fail(err, "%s: frame %llu carries run id %08x, the file's first frame %08x", path,
                       (unsigned long long)f, v.request_id, run_id);
    memcpy(out + offsetof(dsb_wire_stream, pass), &pass, sizeof pass);
    return 0;
}

int dsb_stream_params_from_file(dsb_stream_params *p, const char *path, cm_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cm_fail(err, "%s: %s", path, strerror(errno));
    struct stat st;
    uint8_t first[DSB_STREAM_FRAME];
    ssize_t r = fstat(fd, &st) == 0 ? pread(fd, first, sizeof first, 0) : -1;
    int rc = 0;
    if (r != (ssize_t)sizeof first) {
        rc = cm_fail(err, "%s: shorter than one 4096-byte frame (a stream file is one pass of "
                          "STREAM frames)",
                     path);
    } else {
        dsb_wire_stream v;
        memcpy(&v, first, sizeof v);
        uint32_t n = v.n;
        dsb_wire_reason why = n >= 2 && n <= DSB_STREAM_MAX_N
                                  ? dsb_wire_stream_check(first, sizeof first, n, 0, &v)
                                  : DSB_WR_BAD_N;
        if (why != DSB_WR_NONE) {
            rc = cm_fail(err, "%s: the first frame: %s (a STREAM frame of pass 0 expected)", path,
                         dsb_wire_reason_name(why));
        } else if ((uint64_t)st.st_size != dsb_stream_frames(n) * DSB_STREAM_FRAME) {
            rc = cm_fail(err, "%s: %llu bytes; n = %u takes %llu frames of 4096 bytes = %llu", path,
                         (unsigned long long)st.st_size, n,
                         (unsigned long long)dsb_stream_frames(n),
                         (unsigned long long)(dsb_stream_frames(n) * DSB_STREAM_FRAME));
        } else if (v.row != 0 || v.block != 0) {
            rc = cm_fail(err, "%s: the first frame is row %u, block %u; expected row 0, block 0",
                         path, v.row, v.block);
        } else {
            p->instance = DSB_STREAM_FILE;
            p->file = path;
            p->n = n;
            p->file_run_id = v.request_id;
        }
    }
    close(fd);
    return rc;
}

int dsb_stream_feed_open(const dsb_stream_params *p, dsb_stream_feed **out, cm_err *err)
{
    *out = NULL;
    dsb_stream_feed *s = cm_calloc(1, sizeof *s);
    s->p = *p;
    s->fd = -1;
    if (p->instance == DSB_STREAM_MATTIS) s->eta = dsb_stream_eta_bitmap(p);
    if (p->instance == DSB_STREAM_FILE) {
        /* a run of someone else's frames (a receiver given --run-id) has no file to read */
        if (!p->file) {
            free(s);
            return cm_fail(err, "the run's frames come from a file or a generator elsewhere "
                                "(--run-id), and no file was given to read them from");
        }
        s->fd = open(p->file, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            int e = errno;
            free(s);
            return cm_fail(err, "%s: %s", p->file, strerror(e));
        }
        s->path = cm_malloc(strlen(p->file) + 1);
        strcpy(s->path, p->file);
        s->p.file = s->path;
    }
    *out = s;
    return 0;
}

int dsb_stream_feed_get(dsb_stream_feed *s, uint32_t pass, uint64_t f, uint16_t queue,
                        uint8_t *out, cm_err *err)
{
    if (s->fd >= 0) {
        if (read_file_frame(s->fd, s->path, s->p.n, s->p.file_run_id, f, pass, out, err)) return -1;
        memcpy(out + offsetof(dsb_wire_stream, queue), &queue, sizeof queue);
        memcpy(out + offsetof(dsb_wire_stream, seq), &f, sizeof f);
        return 0;
    }
    uint32_t row, block;
    dsb_stream_frame_coords(f, s->p.n, &row, &block);
    dsb_stream_build_frame(out, &s->p, s->eta, pass, row, block, queue, f);
    return 0;
}

void dsb_stream_feed_close(dsb_stream_feed *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    free(s->eta);
    free(s->path);
    free(s);
}

/* ---- writers ------------------------------------------------------------------------ */

static int write_all(FILE *f, const char *path, const uint8_t *buf, size_t len, cm_err *err)
{
    if (fwrite(buf, 1, len, f) != len) return cm_fail(err, "%s: write: %s", path, strerror(errno));
    return 0;
}

int dsb_stream_write_instance(const dsb_stream_params *p, const char *path, int progress,
                              cm_err *err)
{
    if (dsb_stream_params_check(p, err)) return -1;
    if (p->instance == DSB_STREAM_FILE) return cm_fail(err, "the run's matrix is a file already");
    dsb_stream_feed *src;
    if (dsb_stream_feed_open(p, &src, err)) return -1;
    FILE *f = fopen(path, "wb");
    if (!f) {
        dsb_stream_feed_close(src);
        return cm_fail(err, "%s: %s", path, strerror(errno));
    }
    const uint64_t T = dsb_stream_frames(p->n);
    bench_progress_t bar;
    bench_progress_start(&bar, "stream file frames", T);
    uint8_t frame[DSB_STREAM_FRAME];
    int rc = 0;
    for (uint64_t i = 0; i < T && rc == 0; i++) {
        rc = dsb_stream_feed_get(src, 0, i, 0, frame, err) ||
             write_all(f, path, frame, sizeof frame, err);
        if (progress && (i & 4095u) == 0) bench_progress(&bar, i);
    }
    if (progress) bench_progress_end(&bar, T);
    if (fclose(f) != 0 && rc == 0) rc = cm_fail(err, "%s: close: %s", path, strerror(errno));
    dsb_stream_feed_close(src);
    return rc ? -1 : 0;
}

int dsb_stream_write_matrix(const int8_t *J, uint32_t n, uint32_t run_id, const char *path,
                            cm_err *err)
{
    if (n < 2 || n > DSB_STREAM_MAX_N)
        return cm_fail(err, "n = %u: expected 2 .. %u", n, DSB_STREAM_MAX_N);
    for (uint32_t i = 0; i < n; i++) /* one-bit rows: +-1 couplings, symmetric, zero diagonal */
        for (uint32_t j = 0; j < n; j++) {
            int8_t v = J[(size_t)i * n + j];
            if (i == j ? v != 0 : (v != 1 && v != -1))
                return cm_fail(err, "J[%u][%u] = %d: a stream file holds dense +-1 couplings with a "
                                    "zero diagonal",
                               i, j, v);
            if (j < i && v != J[(size_t)j * n + i])
                return cm_fail(err, "J[%u][%u] = %d but J[%u][%u] = %d: J must be symmetric", i, j,
                               v, j, i, J[(size_t)j * n + i]);
        }
    FILE *f = fopen(path, "wb");
    if (!f) return cm_fail(err, "%s: %s", path, strerror(errno));
    uint8_t frame[DSB_STREAM_FRAME];
    int rc = 0;
    const uint32_t blocks = dsb_stream_blocks(n);
    for (uint32_t block = 0; block < blocks && rc == 0; block++)
        for (uint32_t row = 0; row < n && rc == 0; row++) {
            dsb_stream_put_header(frame, n, run_id, 0, row, block, 0, (uint64_t)block * n + row);
            uint8_t *payload = frame + DSB_WIRE_HDR_BYTES;
            memset(payload, 0, DSB_STREAM_PAYLOAD);
            const uint64_t c0 = (uint64_t)block * DSB_STREAM_COLS;
            for (uint32_t c = 0; c < DSB_STREAM_COLS && c0 + c < n; c++) {
                uint64_t j = c0 + c; /* u_ij = 1 for J_ij = +1; the transmitted diagonal is +1 */
                if (j == row || J[(size_t)row * n + j] > 0) payload[c / 8u] |= (uint8_t)(1u << (c % 8u));
            }
            rc = write_all(f, path, frame, sizeof frame, err);
        }
    if (fclose(f) != 0 && rc == 0) rc = cm_fail(err, "%s: close: %s", path, strerror(errno));
    return rc ? -1 : 0;
}
