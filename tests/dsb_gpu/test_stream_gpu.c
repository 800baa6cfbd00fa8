/* The GPU streaming solver (include/dsb/stream_gpu.h) against the CPU
 * reference (dsb_stream_run_cpu), record by record and bit for bit: every
 * pass's energies, checksums, best replica and energy, frame counts and the
 * updated flag, for both instances and both frame sources (host: the pass
 * resident in the pinned buffer, and a ring of chunks when it does not fit),
 * n not a multiple of 32, n = 2, several column blocks (n > 32256), one and a
 * few worker blocks.  Mattis runs reach the known ground state 2E = -n(n-1).
 * A corrupted frame of the host source is counted as bad, never consumed,
 * and every other frame still is: the final pass's energies differ from the
 * CPU's by exactly the missing frame's mismatches.  Label `gpu`. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "dsb/stream.h"
#include "dsb/stream_gpu.h"

#define MAXP 16u

typedef struct {
    uint32_t B, count, n;
    int spins_ok; /* the final pass's best spins: given, and the best replica's checksum */
    uint32_t pass[MAXP], best_rep[MAXP];
    int updated[MAXP];
    int64_t best[MAXP];
    uint64_t frames[MAXP], bad[MAXP];
    int64_t e[MAXP][DSB_STREAM_MAX_REPLICAS];
    uint64_t c[MAXP][DSB_STREAM_MAX_REPLICAS];
} run_rec;

static int keep(const dsb_stream_record *r, void *ctx)
{
    run_rec *k = ctx;
    if (k->count >= MAXP) return 1;
    uint32_t i = k->count++;
    k->pass[i] = r->pass;
    k->updated[i] = r->updated;
    k->best_rep[i] = r->best_replica;
    k->best[i] = r->best_energy2;
    k->frames[i] = r->frames;
    k->bad[i] = r->bad_frames;
    for (uint32_t b = 0; b < k->B; b++) {
        k->e[i][b] = r->energy2[b];
        k->c[i][b] = r->checksum[b];
    }
    if (r->best_signs)
        k->spins_ok = dsb_stream_checksum(r->best_signs, k->n) == r->checksum[r->best_replica];
    return 0;
}

static const char *label(const dsb_stream_params *p, const dsb_stream_gpu_opts *o, char *buf,
                         size_t len)
{
    snprintf(buf, len, "%s n=%u B=%u K=%u source=%s blocks=%u host_bytes=%llu",
             dsb_stream_instance_name(p->instance), p->n, p->replicas, p->updates,
             dsb_stream_source_name(o->source), o->blocks, (unsigned long long)o->host_bytes);
    return buf;
}

/* Every field of passes [0, upto) equal; the first mismatch of each kind printed. */
static void compare(const run_rec *cpu, const run_rec *gpu, uint32_t upto, const char *what)
{
    int e_ok = 1, c_ok = 1, meta_ok = 1;
    for (uint32_t i = 0; i < upto && i < cpu->count && i < gpu->count; i++) {
        if (meta_ok && (gpu->pass[i] != cpu->pass[i] || gpu->updated[i] != cpu->updated[i] ||
                        gpu->best_rep[i] != cpu->best_rep[i] || gpu->best[i] != cpu->best[i] ||
                        gpu->frames[i] != cpu->frames[i] || gpu->bad[i] != cpu->bad[i])) {
            meta_ok = 0;
            fprintf(stderr,
                    "%s pass %u: gpu pass %u upd %d best %u/%" PRId64 " frames %" PRIu64
                    " bad %" PRIu64 "; cpu pass %u upd %d best %u/%" PRId64 " frames %" PRIu64
                    " bad %" PRIu64 "\n",
                    what, i, gpu->pass[i], gpu->updated[i], gpu->best_rep[i], gpu->best[i],
                    gpu->frames[i], gpu->bad[i], cpu->pass[i], cpu->updated[i],
                    cpu->best_rep[i], cpu->best[i], cpu->frames[i], cpu->bad[i]);
        }
        for (uint32_t b = 0; b < cpu->B; b++) {
            if (e_ok && gpu->e[i][b] != cpu->e[i][b]) {
                e_ok = 0;
                fprintf(stderr, "%s pass %u replica %u: 2E gpu %" PRId64 " cpu %" PRId64 "\n",
                        what, i, b, gpu->e[i][b], cpu->e[i][b]);
            }
            if (c_ok && gpu->c[i][b] != cpu->c[i][b]) {
                c_ok = 0;
                fprintf(stderr, "%s pass %u replica %u: checksum gpu %016" PRIx64 " cpu %016" PRIx64 "\n",
                        what, i, b, gpu->c[i][b], cpu->c[i][b]);
            }
        }
    }
    CHECK(meta_ok, "%s: pass, updated, best replica/energy or frame counts differ", what);
    CHECK(e_ok, "%s: energies differ", what);
    CHECK(c_ok, "%s: checksums differ", what);
}

static int run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o, run_rec *r,
                   dsb_stream_gpu_info *info, const char *what)
{
    memset(r, 0, sizeof *r);
    r->B = p->replicas;
    r->n = p->n;
    dsb_stream_gpu_opts oo = *o;
    oo.info = info;
    cm_err err;
    int rc = dsb_stream_run_gpu(p, &oo, keep, r, &err);
    CHECK(rc == 0, "%s: dsb_stream_run_gpu failed: %s", what, rc ? err.msg : "");
    CHECK(r->count == p->updates + 1u, "%s: %u records, expected %u", what, r->count,
          p->updates + 1u);
    CHECK(rc != 0 || r->spins_ok, "%s: the final pass's best spins missing or not the best "
                                  "replica's", what);
    return rc;
}

typedef struct {
    dsb_stream_instance inst;
    uint32_t n, B, K;
    int ground; /* Mattis: the last pass must be at 2E = -n(n-1) */
} config;

static void run_config(const config *c)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.instance = c->inst;
    p.n = c->n;
    p.replicas = c->B;
    p.updates = c->K;
    char what[160];
    static run_rec cpu, gpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.B = c->B;
    cm_err err;
    int rc = dsb_stream_run_cpu(&p, 0, 0, keep, &cpu, &err);
    CHECK(rc == 0, "cpu reference failed: %s", rc ? err.msg : "");
    if (rc) return;
    const uint64_t T = dsb_stream_frames(c->n);
    int64_t ground = 0;
    int known = dsb_stream_known_ground(&p, &ground);
    if (c->ground) {
        CHECK(known && cpu.best[cpu.count - 1] == ground,
              "%s n=%u: the CPU's final 2E %" PRId64 " is not the ground %" PRId64,
              dsb_stream_instance_name(c->inst), c->n, cpu.best[cpu.count - 1], ground);
    }

    /* sources: gen (default blocks, one block), host resident, host ring */
    dsb_stream_gpu_opts o[4];
    uint32_t nv = 0;
    dsb_stream_gpu_opts_default(&o[nv++]);
    dsb_stream_gpu_opts_default(&o[nv]);
    o[nv++].blocks = 1;
    dsb_stream_gpu_opts_default(&o[nv]);
    o[nv].source = DSB_STREAM_SRC_HOST;
    o[nv++].blocks = 3;
    dsb_stream_gpu_opts_default(&o[nv]);
    o[nv].source = DSB_STREAM_SRC_HOST;
    o[nv++].host_bytes = 1u << 20; /* 256 frames: a ring of 2 x 128 once T > 256 */
    for (uint32_t v = 0; v < nv; v++) {
        label(&p, &o[v], what, sizeof what);
        dsb_stream_gpu_info info;
        if (run_gpu(&p, &o[v], &gpu, &info, what)) continue;
        compare(&cpu, &gpu, cpu.count, what);
        for (uint32_t i = 0; i < gpu.count; i++) {
            CHECK(gpu.frames[i] == T && gpu.bad[i] == 0,
                  "%s pass %u: %" PRIu64 " frames (%" PRIu64 " bad), expected %" PRIu64, what, i,
                  gpu.frames[i], gpu.bad[i], T);
        }
        if (c->ground && known)
            CHECK(gpu.best[gpu.count - 1] == ground,
                  "%s: final 2E %" PRId64 " is not the ground %" PRId64, what,
                  gpu.best[gpu.count - 1], ground);
        if (o[v].source == DSB_STREAM_SRC_HOST) {
            int want = T * DSB_STREAM_FRAME <= (o[v].host_bytes ? o[v].host_bytes : 64ull << 20) ? 1 : 2;
            CHECK(info.host_mode == want, "%s: host mode %d, expected %d", what, info.host_mode,
                  want);
        }
        CHECK(o[v].blocks == 0 || info.blocks == o[v].blocks, "%s: %u blocks ran, asked %u",
              what, info.blocks, o[v].blocks);
    }
}

/* Mismatches of frame f of the final pass against the signs that pass
 * evaluated, per replica, and the row's sign: from the CPU state driven by
 * hand through passes 0 .. K-1. */
static void missing_frame(const dsb_stream_params *p, uint64_t f, int32_t *dc, int32_t *s_row)
{
    dsb_stream_state *s;
    cm_err err;
    if (dsb_stream_state_create(p, &s, &err)) {
        CHECK(0, "state: %s", err.msg);
        return;
    }
    const uint64_t T = dsb_stream_frames(p->n);
    uint32_t *eta = p->instance == DSB_STREAM_MATTIS ? dsb_stream_eta_bitmap(p) : NULL;
    static uint8_t frame[DSB_STREAM_FRAME] __attribute__((aligned(16)));
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, p->replicas);
    for (uint32_t pass = 0; pass < p->updates; pass++) {
        for (uint64_t g = 0; g < T; g++) {
            uint32_t row, block;
            dsb_stream_frame_coords(g, p->n, &row, &block);
            dsb_stream_build_frame(frame, p, eta, pass, row, block, 0, g);
            dsb_stream_consume(s, pass, frame, sizeof frame);
        }
        dsb_stream_end_pass(s, pass, 1, 1, &rec);
    }
    uint32_t row, block;
    dsb_stream_frame_coords(f, p->n, &row, &block);
    dsb_stream_build_frame(frame, p, eta, p->updates, row, block, 0, f);
    for (uint32_t b = 0; b < p->replicas; b++) {
        const uint32_t *v = dsb_stream_signs(s, b) + (uint64_t)block * DSB_STREAM_WORDS;
        int32_t c = 0;
        for (uint32_t w = 0; w < DSB_STREAM_WORDS; w++) {
            uint32_t u;
            memcpy(&u, frame + 64 + 4u * w, 4);
            c += __builtin_popcount(u ^ v[w]);
        }
        dc[b] = c;
        s_row[b] = (dsb_stream_signs(s, b)[row / 32u] >> (row % 32u) & 1u) ? 1 : -1;
    }
    dsb_stream_record_free(&rec);
    free(eta);
    dsb_stream_state_free(s);
}

/* One corrupted frame of the final pass, host source, resident and ring. */
static void bad_frame(dsb_stream_instance inst, uint32_t n, uint64_t host_bytes, uint64_t f)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.instance = inst;
    p.n = n;
    p.replicas = 3;
    p.updates = 2;
    static run_rec cpu, gpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.B = p.replicas;
    cm_err err;
    if (dsb_stream_run_cpu(&p, 0, 0, keep, &cpu, &err)) {
        CHECK(0, "cpu reference failed: %s", err.msg);
        return;
    }
    dsb_stream_gpu_opts o;
    dsb_stream_gpu_opts_default(&o);
    o.source = DSB_STREAM_SRC_HOST;
    o.host_bytes = host_bytes;
    o.corrupt_frame = f + 1u;
    char what[160];
    label(&p, &o, what, sizeof what);
    strncat(what, " corrupt", sizeof what - strlen(what) - 1);
    dsb_stream_gpu_info info;
    if (run_gpu(&p, &o, &gpu, &info, what)) return;
    const uint64_t T = dsb_stream_frames(n);
    const uint32_t K = p.updates;
    compare(&cpu, &gpu, K, what); /* the passes before the corrupted one */
    CHECK(gpu.frames[K] == T - 1u && gpu.bad[K] == 1u,
          "%s: final pass consumed %" PRIu64 " frames, %" PRIu64 " bad; expected %" PRIu64 " and 1",
          what, gpu.frames[K], gpu.bad[K], T - 1u);
    int32_t dc[DSB_STREAM_MAX_REPLICAS], s_row[DSB_STREAM_MAX_REPLICAS];
    missing_frame(&p, f, dc, s_row);
    int e_ok = 1, c_ok = 1, seen = 0;
    for (uint32_t b = 0; b < p.replicas; b++) seen |= dc[b] != 0;
    CHECK(seen, "%s: frame %" PRIu64 " has no mismatches in any replica: it could be consumed "
                "unnoticed; pick another", what, f);
    for (uint32_t b = 0; b < p.replicas; b++) {
        /* c_i lacks dc: a_i grows by 2 dc, 2E = -sum s_i a_i drops by 2 s_i dc */
        int64_t want = cpu.e[K][b] - 2 * (int64_t)s_row[b] * dc[b];
        if (gpu.e[K][b] != want) {
            e_ok = 0;
            fprintf(stderr, "%s replica %u: 2E %" PRId64 ", expected %" PRId64 " (cpu %" PRId64
                            ", missing %d mismatches)\n",
                    what, b, gpu.e[K][b], want, cpu.e[K][b], dc[b]);
        }
        if (gpu.c[K][b] != cpu.c[K][b]) c_ok = 0;
    }
    CHECK(e_ok, "%s: final energies are not the CPU's less the corrupted frame's", what);
    CHECK(c_ok, "%s: final checksums differ", what);
    const uint64_t cap = host_bytes ? host_bytes : 64ull << 20; /* 0: the default 64 MiB */
    CHECK(info.host_mode == (T * DSB_STREAM_FRAME <= cap ? 1 : 2), "%s: host mode %d", what,
          info.host_mode);
}

/* A stream file (docs/formats.md) through the host source, resident and as a
 * ring: the CPU reference's records on the same file; the gen source refuses it. */
static void file_case(void)
{
    char path[] = "/tmp/test_stream_gpu_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temp file");
    if (fd < 0) return;
    close(fd);
    dsb_stream_params g;
    dsb_stream_params_default(&g);
    g.instance = DSB_STREAM_RANDOM;
    g.n = 1500;
    g.replicas = 3;
    g.updates = 3;
    cm_err err;
    CHECK(dsb_stream_write_instance(&g, path, 0, &err) == 0, "write: %s", err.msg);
    dsb_stream_params p = g;
    CHECK(dsb_stream_params_from_file(&p, path, &err) == 0, "open: %s", err.msg);
    static run_rec cpu, gpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.B = p.replicas;
    CHECK(dsb_stream_run_cpu(&p, 0, 0, keep, &cpu, &err) == 0, "cpu on the file: %s", err.msg);
    dsb_stream_gpu_opts o;
    for (int ring = 0; ring < 2; ring++) {
        dsb_stream_gpu_opts_default(&o);
        o.source = DSB_STREAM_SRC_HOST;
        o.host_bytes = ring ? 1u << 20 : 0; /* 1500 frames: 6 MB resident, or a 1 MiB ring */
        char what[160];
        label(&p, &o, what, sizeof what);
        dsb_stream_gpu_info info;
        if (run_gpu(&p, &o, &gpu, &info, what)) continue;
        compare(&cpu, &gpu, cpu.count, what);
        CHECK(info.host_mode == (ring ? 2 : 1), "%s: host mode %d", what, info.host_mode);
    }
    dsb_stream_gpu_opts_default(&o); /* gen: the GPU cannot make a file's frames */
    CHECK(dsb_stream_run_gpu(&p, &o, NULL, NULL, &err) == -1 && strstr(err.msg, "--source host"),
          "gen source with a file refused: %s", err.msg);
    remove(path);
}

int main(void)
{
    /* argument checks, no GPU work */
    {
        dsb_stream_params p;
        dsb_stream_params_default(&p);
        dsb_stream_gpu_opts o;
        dsb_stream_gpu_opts_default(&o);
        cm_err err;
        p.n = 1;
        CHECK(dsb_stream_run_gpu(&p, &o, NULL, NULL, &err) == -1, "n = 1 accepted");
        p.n = 100;
        o.corrupt_frame = 1; /* gen source */
        CHECK(dsb_stream_run_gpu(&p, &o, NULL, NULL, &err) == -1, "corrupt_frame with gen accepted");
        dsb_stream_source s;
        CHECK(dsb_stream_source_parse("host", &s) == 0 && s == DSB_STREAM_SRC_HOST, "parse host");
        CHECK(dsb_stream_source_parse("gen", &s) == 0 && s == DSB_STREAM_SRC_GEN, "parse gen");
        CHECK(dsb_stream_source_parse("nic", &s) == -1, "parse nic accepted");
    }
    static const config cfgs[] = {
        {DSB_STREAM_MATTIS, 2, 1, 1, 0},
        {DSB_STREAM_MATTIS, 100, 3, 4, 1},
        {DSB_STREAM_MATTIS, 1000, 8, 3, 1},
        {DSB_STREAM_MATTIS, 4099, 5, 2, 1},     /* n % 32 = 3, one column block */
        {DSB_STREAM_MATTIS, 40000, 2, 2, 1},    /* two column blocks */
        {DSB_STREAM_MATTIS, 300, 32, 2, 1},     /* the most replicas: 1 worker block an SM */
        {DSB_STREAM_RANDOM, 2, 2, 1, 0},
        {DSB_STREAM_RANDOM, 77, 3, 5, 0},
        {DSB_STREAM_RANDOM, 1000, 8, 4, 0},
        {DSB_STREAM_RANDOM, 32300, 2, 1, 0},    /* two column blocks, the second 44 columns */
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) run_config(&cfgs[i]);
    bad_frame(DSB_STREAM_MATTIS, 300, 0, 123);            /* resident pass */
    bad_frame(DSB_STREAM_RANDOM, 300, 1u << 20, 299);     /* ring: the last frame, a partial chunk */
    bad_frame(DSB_STREAM_MATTIS, 40000, 0, 40000 + 7);    /* ring (64 MiB), second column block */
    file_case();
    return check_done();
}
