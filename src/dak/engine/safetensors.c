/* safetensors checkpoints: reading (one file or an index of shards) and writing (include/dak/safetensors.h). */
#define _POSIX_C_SOURCE 200809L /* pread, fstat */
#include "dak/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json_read.h"
#include "common/threads.h"
#include "dak/bf16.h"

struct dak_st {
    char **files;
    int *fds;
    uint32_t nfiles;
    dak_st_tensor *t;
    size_t n, cap;
};

static const struct {
    const char *name;
    dak_st_dtype dt;
    uint32_t bytes;
} DTYPES[] = {{"BF16", DAK_ST_BF16, 2}, {"F16", DAK_ST_F16, 2},     {"F32", DAK_ST_F32, 4},
              {"F64", DAK_ST_OTHER, 8}, {"I64", DAK_ST_OTHER, 8},   {"U64", DAK_ST_OTHER, 8},
              {"I32", DAK_ST_OTHER, 4}, {"U32", DAK_ST_OTHER, 4},   {"I16", DAK_ST_OTHER, 2},
              {"U16", DAK_ST_OTHER, 2}, {"I8", DAK_ST_OTHER, 1},    {"U8", DAK_ST_OTHER, 1},
              {"BOOL", DAK_ST_OTHER, 1}, {"F8_E4M3", DAK_ST_OTHER, 1}, {"F8_E5M2", DAK_ST_OTHER, 1}};
#define NDTYPES (sizeof DTYPES / sizeof DTYPES[0])

uint64_t dak_st_elems(const dak_st_tensor *t)
{
    uint64_t e = 1;
    for (uint32_t d = 0; d < t->ndim; d++) e *= t->shape[d];
    return e;
}

float dak_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t u;
    if (ex == 0x1f) {
        u = sign | 0x7f800000u | (man << 13); /* infinity, or NaN with its payload */
    } else if (ex) {
        u = sign | ((ex + 112u) << 23) | (man << 13); /* normal: rebias 15 -> 127 */
    } else if (man) {
        /* subnormal: man x 2^-24, normalised */
        int e = -1;
        uint32_t m = man;
        do {
            m <<= 1;
            e++;
        } while (!(m & 0x400u));
        u = sign | ((uint32_t)(112 - e) << 23) | ((m & 0x3ffu) << 13);
    } else {
        u = sign; /* +-0 */
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* every byte of [off, off + n) of fd, or -1 with errno (0 at the end of the file) */
static int read_full(int fd, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            return -1;
        }
        p += r, off += (uint64_t)r, n -= (size_t)r;
    }
    return 0;
}

static int read_fail(cm_err *err, const char *path, uint64_t off, size_t n)
{
    return cm_fail(err, "%s: reading %zu bytes at offset %llu: %s", path, n, (unsigned long long)off,
                   errno ? strerror(errno) : "unexpected end of the file");
}

/* a JSON number that is a whole number in [0, 2^53] into *out */
static int get_index(const jr_doc *doc, const jr_val *v, const char *tensor, const char *what, uint64_t *out,
                     cm_err *err)
{
    if (!v || v->type != JR_NUMBER || !v->is_integer || v->num < 0 || v->num > 9007199254740992.0)
        return cm_fail(err, "%s:%d:%d: tensor '%s': %s: expected a whole number >= 0, got %s", doc->name,
                       v ? v->line : 0, v ? v->col : 0, tensor, what, v ? jr_type_name(v->type) : "nothing");
    *out = (uint64_t)v->num;
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    const dak_st_tensor *x = *(const dak_st_tensor *const *)a, *y = *(const dak_st_tensor *const *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const dak_st_tensor *)a)->name, ((const dak_st_tensor *)b)->name);
}

/* One tensor's entry of file fi's header (key name, value v; data section of dsize bytes from byte base). */
static int parse_entry(dak_st *st, const jr_doc *doc, const char *name, const jr_val *v, uint32_t fi, uint64_t base,
                       uint64_t dsize, cm_err *err)
{
    if (v->type != JR_OBJECT)
        return cm_fail(err, "%s:%d:%d: tensor '%s': expected an object with dtype, shape and data_offsets, got %s",
                       doc->name, v->line, v->col, name, jr_type_name(v->type));
    for (size_t k = 0; k < v->len; k++)
        if (strcmp(v->keys[k], "dtype") && strcmp(v->keys[k], "shape") && strcmp(v->keys[k], "data_offsets"))
            return cm_fail(err, "%s:%d:%d: tensor '%s': unexpected key '%s' (expected dtype, shape, data_offsets)",
                           doc->name, v->items[k].line, v->items[k].col, name, v->keys[k]);
    const char *dt;
    if (jr_get_str(doc, v, "dtype", 1, NULL, &dt, err)) return -1;
    const jr_val *sh = jr_obj_get(v, "shape"), *off = jr_obj_get(v, "data_offsets");
    if (!sh || sh->type != JR_ARRAY || sh->len > DAK_ST_MAX_DIM)
        return cm_fail(err, "%s:%d:%d: tensor '%s': shape: expected an array of at most %d sizes", doc->name,
                       sh ? sh->line : v->line, sh ? sh->col : v->col, name, DAK_ST_MAX_DIM);
    if (!off || off->type != JR_ARRAY || off->len != 2)
        return cm_fail(err, "%s:%d:%d: tensor '%s': data_offsets: expected [begin, end]", doc->name,
                       off ? off->line : v->line, off ? off->col : v->col, name);
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 256;
        st->t = realloc(st->t, st->cap * sizeof *st->t);
        if (!st->t) return cm_fail(err, "safetensors: out of memory");
    }
    dak_st_tensor *t = &st->t[st->n];
    memset(t, 0, sizeof *t);
    t->dtype = DAK_ST_OTHER;
    for (size_t d = 0; d < NDTYPES; d++)
        if (!strcmp(dt, DTYPES[d].name)) t->dtype = DTYPES[d].dt, t->elem_bytes = DTYPES[d].bytes;
    if (strlen(dt) >= sizeof t->dtype_name || !t->elem_bytes) {
        const jr_val *dv = jr_obj_get(v, "dtype");
        return cm_fail(err, "%s:%d:%d: tensor '%s': dtype \"%s\": expected one of the safetensors types (BF16, F16, "
                       "F32, F64, I8..I64, U8..U64, BOOL, F8_E4M3, F8_E5M2)",
                       doc->name, dv->line, dv->col, name, dt);
    }
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dt);
    t->ndim = (uint32_t)sh->len;
    uint64_t elems = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        if (get_index(doc, &sh->items[d], name, "shape", &t->shape[d], err)) return -1;
        if (t->shape[d] && elems > UINT64_MAX / 16 / t->shape[d])
            return cm_fail(err, "%s:%d:%d: tensor '%s': shape: too many elements", doc->name, sh->line, sh->col, name);
        elems *= t->shape[d];
    }
    uint64_t b, e;
    if (get_index(doc, &off->items[0], name, "data_offsets[0]", &b, err) ||
        get_index(doc, &off->items[1], name, "data_offsets[1]", &e, err))
        return -1;
    if (b > e || e > dsize)
        return cm_fail(err, "%s:%d:%d: tensor '%s': data_offsets [%llu, %llu]: expected begin <= end <= %llu (the "
                       "data's bytes)",
                       doc->name, off->line, off->col, name, (unsigned long long)b, (unsigned long long)e,
                       (unsigned long long)dsize);
    if (e - b != elems * t->elem_bytes)
        return cm_fail(err, "%s:%d:%d: tensor '%s': %llu bytes [%llu, %llu), but %s x %llu elements are %llu bytes",
                       doc->name, off->line, off->col, name, (unsigned long long)(e - b), (unsigned long long)b,
                       (unsigned long long)e, dt, (unsigned long long)elems,
                       (unsigned long long)(elems * t->elem_bytes));
    t->name = strdup(name);
    if (!t->name) return cm_fail(err, "safetensors: out of memory");
    t->file = fi, t->offset = base + b, t->bytes = e - b;
    st->n++;
    return 0;
}

/* Reads and checks file fi's header, adding its tensors. */
static int parse_file(dak_st *st, uint32_t fi, cm_err *err)
{
    const char *path = st->files[fi];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return cm_fail(err, "%s: cannot open: %s", path, strerror(errno));
    st->fds[fi] = fd;
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) return cm_fail(err, "%s: not a regular file", path);
    const uint64_t size = (uint64_t)sb.st_size;
    uint8_t len8[8];
    if (size < 8)
        return cm_fail(err, "%s: %llu bytes: expected at least the 8-byte header length of a safetensors file", path,
                       (unsigned long long)size);
    if (read_full(fd, len8, 8, 0)) return read_fail(err, path, 0, 8);
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--) hn = hn << 8 | len8[i];
    if (hn < 2 || hn > DAK_ST_MAX_HEADER || hn > size - 8)
        return cm_fail(err, "%s: header length %llu: expected 2..%llu bytes within the file's %llu", path,
                       (unsigned long long)hn, (unsigned long long)DAK_ST_MAX_HEADER, (unsigned long long)size);
    char *text = malloc(hn);
    if (!text) return cm_fail(err, "%s: out of memory for a %llu-byte header", path, (unsigned long long)hn);
    if (read_full(fd, text, hn, 8)) {
        free(text);
        return read_fail(err, path, 8, hn);
    }
    jr_doc doc;
    int rc = jr_parse(&doc, text, hn, path, err);
    free(text);
    if (rc) return -1;
    const size_t first = st->n;
    const uint64_t base = 8 + hn, dsize = size - base;
    rc = jr_expect(&doc, doc.root, JR_OBJECT, "safetensors header", err);
    for (size_t k = 0; !rc && k < doc.root->len; k++) {
        const jr_val *v = &doc.root->items[k];
        if (!strcmp(doc.root->keys[k], "__metadata__")) {
            rc = jr_expect(&doc, v, JR_OBJECT, "__metadata__", err);
            for (size_t j = 0; !rc && j < v->len; j++)
                if (v->items[j].type != JR_STRING)
                    rc = cm_fail(err, "%s:%d:%d: __metadata__ '%s': expected a string, got %s", path, v->items[j].line,
                                 v->items[j].col, v->keys[j], jr_type_name(v->items[j].type));
            continue;
        }
        rc = parse_entry(st, &doc, doc.root->keys[k], v, fi, base, dsize, err);
    }
    jr_free(&doc);
    if (rc) return -1;
    /* the data covered without holes or overlaps (the format's rule; a reader must not trust the rest) */
    size_t nt = st->n - first;
    dak_st_tensor **o = malloc((nt ? nt : 1) * sizeof *o);
    if (!o) return cm_fail(err, "safetensors: out of memory");
    for (size_t i = 0; i < nt; i++) o[i] = &st->t[first + i];
    qsort(o, nt, sizeof *o, by_offset);
    uint64_t at = base;
    for (size_t i = 0; i < nt && !rc; i++) {
        if (o[i]->offset > at)
            rc = cm_fail(err, "%s: data bytes [%llu, %llu) belong to no tensor (before '%s'): expected the tensors to "
                         "cover the data without holes",
                         path, (unsigned long long)(at - base), (unsigned long long)(o[i]->offset - base), o[i]->name);
        else if (o[i]->offset < at)
            rc = cm_fail(err, "%s: tensor '%s' (bytes from %llu) overlaps '%s' (to %llu)", path, o[i]->name,
                         (unsigned long long)(o[i]->offset - base), o[i - 1]->name, (unsigned long long)(at - base));
        at = o[i]->offset + o[i]->bytes;
    }
    free(o);
    if (!rc && at != size)
        rc = cm_fail(err, "%s: data bytes [%llu, %llu) at the end belong to no tensor", path,
                     (unsigned long long)(at - base), (unsigned long long)dsize);
    return rc;
}

static int add_file(dak_st *st, const char *path, cm_err *err)
{
    for (uint32_t i = 0; i < st->nfiles; i++)
        if (!strcmp(st->files[i], path)) return 0;
    char **f = realloc(st->files, (st->nfiles + 1) * sizeof *f);
    int *fd = realloc(st->fds, (st->nfiles + 1) * sizeof *fd);
    if (f) st->files = f;
    if (fd) st->fds = fd;
    if (!f || !fd || !(st->files[st->nfiles] = strdup(path))) return cm_fail(err, "safetensors: out of memory");
    st->fds[st->nfiles++] = -1;
    return 0;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}


/* The shards of folder dir's index (weight_map's files), or its model.safetensors. */
static int open_folder(dak_st *st, const char *dir, jr_doc *idx, int *have_idx, cm_err *err)
{
    char *ip = join(dir, "model.safetensors.index.json"), *one = join(dir, "model.safetensors");
    int rc = 0;
    if (!ip || !one) {
        rc = cm_fail(err, "safetensors: out of memory");
    } else if (cm_is_file(ip)) {
        rc = jr_parse_file(idx, ip, err);
        if (!rc) *have_idx = 1;
        const jr_val *wm = rc ? NULL : jr_obj_get(idx->root, "weight_map");
        if (!rc && (!wm || wm->type != JR_OBJECT))
            rc = cm_fail(err, "%s: expected an object \"weight_map\" (tensor name -> shard file)", ip);
        for (size_t k = 0; !rc && k < wm->len; k++) {
            const jr_val *f = &wm->items[k];
            if (f->type != JR_STRING || !f->len || strchr(f->str, '/') || !strcmp(f->str, "..") || !strcmp(f->str, "."))
                rc = cm_fail(err, "%s:%d:%d: weight_map '%s': expected a file name in the same folder", ip, f->line,
                             f->col, wm->keys[k]);
            char *p = rc ? NULL : join(dir, f->str);
            if (!rc && !p) rc = cm_fail(err, "safetensors: out of memory");
            if (!rc) rc = add_file(st, p, err);
            free(p);
        }
        if (!rc && !st->nfiles) rc = cm_fail(err, "%s: weight_map is empty", ip);
    } else if (cm_is_file(one)) {
        rc = add_file(st, one, err);
    } else {
        rc = cm_fail(err, "%s: no model.safetensors.index.json or model.safetensors in this folder", dir);
    }
    free(ip), free(one);
    return rc;
}

int dak_st_open(dak_st **out, const char *path, cm_err *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb)) return cm_fail(err, "%s: %s", path, strerror(errno));
    dak_st *st = calloc(1, sizeof *st);
    if (!st) return cm_fail(err, "safetensors: out of memory");
    jr_doc idx;
    memset(&idx, 0, sizeof idx);
    int have_idx = 0;
    int rc = S_ISDIR(sb.st_mode) ? open_folder(st, path, &idx, &have_idx, err) : add_file(st, path, err);
    for (uint32_t i = 0; !rc && i < st->nfiles; i++) rc = parse_file(st, i, err);
    if (!rc && st->n) qsort(st->t, st->n, sizeof *st->t, by_name);
    for (size_t i = 1; !rc && i < st->n; i++)
        if (!strcmp(st->t[i - 1].name, st->t[i].name))
            rc = cm_fail(err, "tensor '%s' is in %s and in %s: expected each name once", st->t[i].name,
                         st->files[st->t[i - 1].file], st->files[st->t[i].file]);
    if (!rc && have_idx) { /* every name of the index in the shard it names */
        const jr_val *wm = jr_obj_get(idx.root, "weight_map");
        for (size_t k = 0; !rc && k < wm->len; k++) {
            const dak_st_tensor *t = dak_st_find(st, wm->keys[k]);
            const char *f = st->files[t ? t->file : 0], *slash = strrchr(f, '/');
            if (!t || strcmp(slash ? slash + 1 : f, wm->items[k].str))
                rc = cm_fail(err, "%s/model.safetensors.index.json: tensor '%s' is listed in %s but %s%s", path,
                             wm->keys[k], wm->items[k].str, t ? "stored in " : "is in no shard",
                             t ? st->files[t->file] : "");
        }
    }
    if (have_idx) jr_free(&idx);
    if (rc) {
        dak_st_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

void dak_st_close(dak_st *st)
{
    if (!st) return;
    for (uint32_t i = 0; i < st->nfiles; i++) {
        if (st->fds[i] >= 0) close(st->fds[i]);
        free(st->files[i]);
    }
    for (size_t i = 0; i < st->n; i++) free(st->t[i].name);
    free(st->files), free(st->fds), free(st->t), free(st);
}

size_t dak_st_count(const dak_st *st) { return st->n; }
const dak_st_tensor *dak_st_at(const dak_st *st, size_t i) { return i < st->n ? &st->t[i] : NULL; }
const char *dak_st_file(const dak_st *st, uint32_t i) { return i < st->nfiles ? st->files[i] : NULL; }

const dak_st_tensor *dak_st_find(const dak_st *st, const char *name)
{
    dak_st_tensor key;
    key.name = (char *)name;
    return st->n ? bsearch(&key, st->t, st->n, sizeof *st->t, by_name) : NULL;
}

#define CHUNK_ELEMS ((size_t)1 << 20)

/* Elements [first, first + n) of t (its type checked) into dst as bf16 (f32 == 0) or fp32 (f32 == 1), on the
 * calling thread: one pread when bf16 is read as stored, else through a staging buffer, converted. */
static int read_range(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, void *dst, int f32,
                      cm_err *err)
{
    const char *path = st->files[t->file];
    const int fd = st->fds[t->file];
    const uint32_t eb = t->elem_bytes;
    uint64_t off = t->offset + first * eb;
    if (t->dtype == DAK_ST_BF16 && !f32) { /* as stored */
        if (read_full(fd, dst, (size_t)n * 2, off)) return read_fail(err, path, off, (size_t)n * 2);
        return 0;
    }
    if (!n) return 0;
    uint8_t *buf = malloc((n < CHUNK_ELEMS ? (size_t)n : CHUNK_ELEMS) * eb); /* a piece's share, at most */
    if (!buf) return cm_fail(err, "safetensors: out of memory");
    for (uint64_t i = 0; i < n;) {
        size_t m = n - i < CHUNK_ELEMS ? (size_t)(n - i) : CHUNK_ELEMS;
        if (read_full(fd, buf, m * eb, off)) {
            free(buf);
            return read_fail(err, path, off, m * eb);
        }
        for (size_t j = 0; j < m; j++) {
            float v;
            if (t->dtype == DAK_ST_F32) {
                memcpy(&v, buf + 4 * j, 4);
            } else {
                uint16_t h = (uint16_t)(buf[2 * j] | buf[2 * j + 1] << 8);
                v = t->dtype == DAK_ST_F16 ? dak_f16_to_f32(h) : dak_bf16_to_f32(h);
            }
            if (f32) ((float *)dst)[i + j] = v;
            else ((uint16_t *)dst)[i + j] = dak_f32_to_bf16(v);
        }
        i += m, off += (uint64_t)m * eb;
    }
    free(buf);
    return 0;
}

/* ---- parallel reads ----------------------------------------------------------------------------
 * Threads are started per read (cm_run_threads) rather than kept in a pool: only reads of 8 MiB and more are
 * split, into pieces of at least 2 MiB, and starting and joining a thread costs ~35 us on the 2-core dev VM (less
 * on bare metal) against the 0.2 to 0.7 ms a 2 MiB piece takes even from the page cache (3 to 10 GB/s a thread),
 * a few percent at worst; a pool would add a shutdown call and locking to save that.  Below 8 MiB (small tensors,
 * a tensor's last rows) the read stays on the caller's thread: no thread cost at all. */

static _Atomic unsigned read_threads_setting; /* 0: the default */

int dak_st_set_threads(unsigned n, cm_err *err)
{
    if (n > DAK_ST_MAX_THREADS)
        return cm_fail(err, "safetensors: read threads %u: expected 0 (the default, min(8, online CPUs)) to %u", n,
                       DAK_ST_MAX_THREADS);
    atomic_store_explicit(&read_threads_setting, n, memory_order_relaxed);
    return 0;
}

unsigned dak_st_threads(void)
{
    const unsigned n = atomic_load_explicit(&read_threads_setting, memory_order_relaxed);
    if (n) return n;
    const uint32_t cpus = cm_online_cpus();
    return cpus > 8u ? 8u : cpus;
}

unsigned dak_st_read_pieces(uint64_t bytes)
{
    if (bytes < DAK_ST_PARALLEL_MIN) return 1;
    const uint64_t most = bytes / DAK_ST_PIECE_MIN, threads = dak_st_threads();
    return (unsigned)(most < threads ? most : threads);
}

/* one thread's share of a split read, and what became of it */
typedef struct {
    const dak_st *st;
    const dak_st_tensor *t;
    uint64_t first, n;
    void *dst; /* already at the piece's first element */
    int f32, rc;
    cm_err err;
} read_piece;

static void *read_piece_run(void *arg)
{
    read_piece *p = arg;
    p->rc = read_range(p->st, p->t, p->first, p->n, p->dst, p->f32, &p->err);
    return NULL;
}

/* Elements [first, first + n) of t into dst as bf16 (f32 == 0) or fp32 (f32 == 1): checked, then read on this
 * thread or split across several (dak_st_read_pieces). */
static int read_conv(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, void *dst, int f32,
                     cm_err *err)
{
    const char *path = st->files[t->file];
    if (t->dtype == DAK_ST_OTHER)
        return cm_fail(err, "%s: tensor '%s' is %s: expected BF16, F16 or F32", path, t->name, t->dtype_name);
    const uint64_t el = dak_st_elems(t);
    if (first > el || n > el - first)
        return cm_fail(err, "%s: tensor '%s': elements [%llu, %llu) asked, it has %llu", path, t->name,
                       (unsigned long long)first, (unsigned long long)(first + n), (unsigned long long)el);
    const unsigned k = dak_st_read_pieces(n * t->elem_bytes);
    if (k <= 1) return read_range(st, t, first, n, dst, f32, err);
    read_piece *pieces = cm_calloc(k, sizeof *pieces);
    const size_t out_bytes = f32 ? 4 : 2;
    const uint64_t share = n / k, rest = n % k; /* the first `rest` pieces one element longer */
    for (unsigned i = 0; i < k; i++) {
        const uint64_t at = i * share + (i < rest ? i : rest);
        pieces[i] = (read_piece){st, t, first + at, share + (i < rest), (uint8_t *)dst + at * out_bytes, f32, 0, {{0}}};
    }
    cm_run_threads(k, read_piece_run, pieces, sizeof *pieces);
    int rc = 0;
    for (unsigned i = 0; i < k && !rc; i++)
        if (pieces[i].rc) rc = cm_fail(err, "%s", pieces[i].err.msg);
    free(pieces);
    return rc;
}

int dak_st_read_bf16(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, uint16_t *dst, cm_err *err)
{
    return read_conv(st, t, first, n, dst, 0, err);
}

int dak_st_read_f32(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, float *dst, cm_err *err)
{
    return read_conv(st, t, first, n, dst, 1, err);
}

/* ---- writing ---------------------------------------------------------------------------------- */

static uint32_t out_elem_bytes(dak_st_dtype d) { return d == DAK_ST_F32 ? 4u : 2u; }

int dak_st_write(const char *path, const dak_st_out *t, size_t n, dak_st_fill_fn fill, void *arg, cm_err *err)
{
    /* the header: names are written as given, so they must need no JSON escape */
    size_t cap = 64 + n * 512, len = 0; /* an entry: <= 160 + 60 + 10 x 21 bytes */
    char *h = malloc(cap);
    if (!h) return cm_fail(err, "safetensors: out of memory");
    uint64_t off = 0;
    len += (size_t)snprintf(h + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (size_t i = 0; i < n; i++) {
        if (t[i].dtype == DAK_ST_OTHER || t[i].ndim > DAK_ST_MAX_DIM || strlen(t[i].name) > 160 ||
            strpbrk(t[i].name, "\"\\")) {
            free(h);
            return cm_fail(err, "%s: tensor %zu ('%.40s'): expected BF16/F16/F32, at most %d dimensions and a plain "
                           "name of at most 160 bytes",
                           path, i, t[i].name, DAK_ST_MAX_DIM);
        }
        uint64_t el = 1;
        for (uint32_t d = 0; d < t[i].ndim; d++) el *= t[i].shape[d];
        uint64_t b = el * out_elem_bytes(t[i].dtype);
        len += (size_t)snprintf(h + len, cap - len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t[i].name,
                                t[i].dtype == DAK_ST_BF16 ? "BF16" : t[i].dtype == DAK_ST_F16 ? "F16" : "F32");
        for (uint32_t d = 0; d < t[i].ndim; d++)
            len += (size_t)snprintf(h + len, cap - len, "%s%llu", d ? "," : "", (unsigned long long)t[i].shape[d]);
        len += (size_t)snprintf(h + len, cap - len, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                                (unsigned long long)(off + b));
        off += b;
    }
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8) h[len++] = ' '; /* the data 8-byte aligned, as the reference writer pads */
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(h);
        return cm_fail(err, "%s: cannot create: %s", path, strerror(errno));
    }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)len >> (8 * i));
    int rc = fwrite(len8, 1, 8, f) != 8 || fwrite(h, 1, len, f) != len ? cm_fail(err, "%s: write failed", path) : 0;
    free(h);
    for (size_t i = 0; !rc && i < n; i++) {
        uint64_t el = 1;
        for (uint32_t d = 0; d < t[i].ndim; d++) el *= t[i].shape[d];
        size_t b = (size_t)(el * out_elem_bytes(t[i].dtype));
        void *buf = malloc(b ? b : 1);
        if (!buf) rc = cm_fail(err, "safetensors: out of memory for tensor '%s'", t[i].name);
        else if (!(rc = fill(arg, i, buf, err)) && fwrite(buf, 1, b, f) != b)
            rc = cm_fail(err, "%s: write failed", path);
        free(buf);
    }
    if (fclose(f) && !rc) rc = cm_fail(err, "%s: write failed", path);
    if (rc) remove(path);
    return rc;
}
