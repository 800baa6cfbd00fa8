/* File readers: Gset/rudy edge lists, MatrixMarket coordinate matrices and
 * qbsolv-style QUBO text (formats as accepted: docs/formats.md).
 *
 * Every malformed input is rejected with "path:line: reason".  A reader
 * either returns 0 with a complete instance or -1 with `out` zeroed (nothing
 * to free). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/instances.h"

/* ---- line reader and tokens ------------------------------------------------- */

typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap;
    unsigned long line; /* number of the line last returned (1-based) */
} rd_lines;

#define RD_MAX_LINE (1u << 20)

/* 1: a line in r->buf (without its end-of-line), 0: end of file, -1: error
 * (read error, NUL byte, over-long line). */
static int rd_next(rd_lines *r, cm_err *err)
{
    size_t len = 0;
    int c, got = 0;
    while ((c = getc(r->f)) != EOF) {
        got = 1;
        if (c == '\n') break;
        if (c == 0)
            return cm_fail(err, "%s:%lu: NUL byte in a text file", r->path, r->line + 1);
        if (len + 2 > r->cap) {
            if (r->cap >= RD_MAX_LINE)
                return cm_fail(err, "%s:%lu: line longer than %u bytes", r->path, r->line + 1,
                               RD_MAX_LINE);
            r->cap = r->cap ? 2 * r->cap : 256;
            char *nb = realloc(r->buf, r->cap);
            if (!nb) return cm_fail(err, "%s: out of memory reading a line", r->path);
            r->buf = nb;
        }
        r->buf[len++] = (char)c;
    }
    if (ferror(r->f)) return cm_fail(err, "%s:%lu: read error", r->path, r->line + 1);
    if (!got) return 0;
    if (!r->buf) {
        r->cap = 256;
        r->buf = cm_malloc(r->cap);
    }
    r->line++;
    while (len && r->buf[len - 1] == '\r') len--;
    r->buf[len] = 0;
    return 1;
}

/* Splits s in place at whitespace; stores at most `max` tokens, returns how
 * many there are in all. */
static int rd_split(char *s, char **tok, int max)
{
    int n = 0;
    for (;;) {
        while (*s && isspace((unsigned char)*s)) s++;
        if (!*s) break;
        if (n < max) tok[n] = s;
        n++;
        while (*s && !isspace((unsigned char)*s)) s++;
        if (!*s) break;
        *s++ = 0;
    }
    return n;
}

/* Decimal integer with optional sign, whole token, no overflow. */
static int rd_i64(const char *t, int64_t *out)
{
    const char *s = t;
    int neg = 0;
    if (*s == '+' || *s == '-') neg = *s++ == '-';
    if (!*s) return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (((uint64_t)1 << 63) - d) / 10u) return -1;
        v = v * 10u + d;
    }
    if (!neg && v > (uint64_t)INT64_MAX) return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Finite real number, whole token. */
static int rd_f64(const char *t, double *out)
{
    char *e = NULL;
    errno = 0;
    double v = strtod(t, &e);
    if (e == t || *e || !isfinite(v) || errno == ERANGE) return -1;
    *out = v;
    return 0;
}

static int rd_open(rd_lines *r, const char *path, dsb_instance *out, cm_err *err)
{
    memset(out, 0, sizeof *out);
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "rb");
    if (!r->f) return cm_fail(err, "%s: cannot open: %s", path, strerror(errno));
    return 0;
}

static void rd_close(rd_lines *r)
{
    if (r->f) fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}

/* Next line that is neither blank nor a comment (first non-blank character
 * in `comments`).  1: tokens in tok, 0: end of file, -1: error. */
static int rd_data(rd_lines *r, const char *comments, char **tok, int max, int *ntok, cm_err *err)
{
    for (;;) {
        int rc = rd_next(r, err);
        if (rc <= 0) return rc;
        const char *s = r->buf;
        while (*s && isspace((unsigned char)*s)) s++;
        if (!*s || strchr(comments, *s)) continue;
        *ntok = rd_split(r->buf, tok, max);
        return 1;
    }
}

/* Bitmap of unordered pairs {i, j}, i != j, for duplicate detection. */
typedef struct {
    uint8_t *bits;
    uint32_t n;
} rd_pairs;
static void pairs_init(rd_pairs *p, uint32_t n)
{
    p->n = n;
    p->bits = cm_calloc(((size_t)n * n + 7) / 8, 1);
}
/* Marks {i, j}; returns 1 when it was marked already. */
static int pairs_mark(rd_pairs *p, uint32_t i, uint32_t j)
{
    if (i > j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    size_t b = (size_t)i * p->n + j;
    int was = (p->bits[b >> 3] >> (b & 7)) & 1;
    p->bits[b >> 3] |= (uint8_t)(1u << (b & 7));
    return was;
}

static void name_from_path(dsb_instance *out, const char *path)
{
    size_t len = strlen(path);
    if (len < sizeof out->name) {
        memcpy(out->name, path, len + 1);
    } else { /* keep the tail, which names the file */
        out->name[0] = out->name[1] = out->name[2] = '.';
        memcpy(out->name + 3, path + len - (sizeof out->name - 4), sizeof out->name - 3);
    }
}

static void inst_base(dsb_instance *out, uint32_t n)
{
    out->n = n;
    out->J = cm_calloc((size_t)n * n, 1);
    out->h = cm_calloc(n, sizeof(int16_t));
    out->qubo_scale = 1.0;
    out->quant_scale = 1.0;
}

/* ---- Gset / rudy ---------------------------------------------------------------- */

int dsb_read_gset(const char *path, dsb_instance *out, cm_err *err)
{
    rd_lines r;
    if (rd_open(&r, path, out, err)) return -1;
    char *tok[4];
    int nt = 0, rc;
    rd_pairs seen = {0};
    int64_t n = 0, m = 0;
    rc = rd_data(&r, "#%", tok, 4, &nt, err);
    if (rc == 0) {
        rc = cm_fail(err, "%s:%lu: empty file, expected the header line 'n m'", path, r.line + 1);
        goto fail;
    }
    if (rc < 0) goto fail;
    if (nt != 2) {
        rc = cm_fail(err, "%s:%lu: header: expected 2 fields 'n m' (vertices, edges), got %d",
                     path, r.line, nt);
        goto fail;
    }
    if (rd_i64(tok[0], &n) || n < 1 || n > DSB_INSTANCE_MAX_N) {
        rc = cm_fail(err, "%s:%lu: header: vertex count: expected an integer in [1, %u], got '%s'",
                     path, r.line, DSB_INSTANCE_MAX_N, tok[0]);
        goto fail;
    }
    int64_t max_m = n * (n - 1) / 2;
    if (rd_i64(tok[1], &m) || m < 0 || m > max_m) {
        rc = cm_fail(err,
                     "%s:%lu: header: edge count: expected an integer in [0, %lld] for n = "
                     "%lld, got '%s'",
                     path, r.line, (long long)max_m, (long long)n, tok[1]);
        goto fail;
    }
    inst_base(out, (uint32_t)n);
    pairs_init(&seen, (uint32_t)n);
    int64_t wsum = 0;
    for (int64_t e = 0; e < m; e++) {
        rc = rd_data(&r, "#%", tok, 4, &nt, err);
        if (rc == 0) {
            rc = cm_fail(err,
                         "%s:%lu: unexpected end of file: the header declares %lld edges, found "
                         "%lld",
                         path, r.line + 1, (long long)m, (long long)e);
            goto fail;
        }
        if (rc < 0) goto fail;
        if (nt != 3) {
            rc = cm_fail(err, "%s:%lu: edge: expected 3 fields 'u v w', got %d", path, r.line, nt);
            goto fail;
        }
        int64_t u, v, w;
        for (int k = 0; k < 2; k++) {
            int64_t *x = k ? &v : &u;
            if (rd_i64(tok[k], x) || *x < 1 || *x > n) {
                rc = cm_fail(err,
                             "%s:%lu: edge: vertex %s: expected an integer in [1, %lld] "
                             "(1-based), got '%s'",
                             path, r.line, k ? "v" : "u", (long long)n, tok[k]);
                goto fail;
            }
        }
        if (rd_i64(tok[2], &w)) {
            double d;
            rc = cm_fail(err, "%s:%lu: edge: weight: expected an integer, got '%s'%s", path, r.line,
                         tok[2], rd_f64(tok[2], &d) ? "" : " (weights must be integers)");
            goto fail;
        }
        if (w < -127 || w > 127) {
            rc = cm_fail(err,
                         "%s:%lu: edge: weight %lld out of range: J = -w must fit int8, expected "
                         "-127 <= w <= 127",
                         path, r.line, (long long)w);
            goto fail;
        }
        if (u == v) {
            rc = cm_fail(err, "%s:%lu: edge: self-loop %lld-%lld (the Ising J has zero diagonal)",
                         path, r.line, (long long)u, (long long)v);
            goto fail;
        }
        uint32_t i = (uint32_t)(u - 1), j = (uint32_t)(v - 1);
        if (pairs_mark(&seen, i, j)) {
            rc = cm_fail(err, "%s:%lu: edge: duplicate edge %lld-%lld", path, r.line, (long long)u,
                         (long long)v);
            goto fail;
        }
        out->J[(size_t)i * (size_t)n + j] = (int8_t)(-w);
        out->J[(size_t)j * (size_t)n + i] = (int8_t)(-w);
        wsum += w;
    }
    rc = rd_data(&r, "#%", tok, 4, &nt, err);
    if (rc > 0) {
        rc = cm_fail(err, "%s:%lu: extra line after the %lld edges the header declares", path,
                     r.line, (long long)m);
        goto fail;
    }
    if (rc < 0) goto fail;
    out->objective = DSB_OBJ_MAXCUT;
    out->weight_total = wsum;
    name_from_path(out, path);
    free(seen.bits);
    rd_close(&r);
    return 0;
fail:
    free(seen.bits);
    rd_close(&r);
    dsb_instance_free(out);
    return -1;
}

/* ---- MatrixMarket ---------------------------------------------------------------- */

static int str_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

typedef struct {
    uint32_t i, j;
    unsigned long line;
} mtx_entry;

int dsb_read_mtx(const char *path, dsb_instance *out, cm_err *err)
{
    rd_lines r;
    if (rd_open(&r, path, out, err)) return -1;
    char *tok[8];
    int nt = 0, rc;
    rd_pairs seen = {0};
    mtx_entry *ent = NULL;
    rc = rd_next(&r, err);
    if (rc == 0) {
        rc = cm_fail(err, "%s:1: empty file, expected the '%%%%MatrixMarket matrix coordinate "
                     "<field> <symmetry>' banner", path);
        goto fail;
    }
    if (rc < 0) goto fail;
    nt = rd_split(r.buf, tok, 8);
    if (nt < 1 || strcmp(tok[0], "%%MatrixMarket")) {
        rc = cm_fail(err, "%s:1: expected the banner '%%%%MatrixMarket matrix coordinate <field> "
                     "<symmetry>' as the first line", path);
        goto fail;
    }
    if (nt != 5) {
        rc = cm_fail(err, "%s:1: banner: expected 5 fields '%%%%MatrixMarket matrix coordinate "
                     "<field> <symmetry>', got %d", path, nt);
        goto fail;
    }
    if (!str_ieq(tok[1], "matrix")) {
        rc = cm_fail(err, "%s:1: banner: object '%s' not supported, expected 'matrix'", path,
                     tok[1]);
        goto fail;
    }
    if (!str_ieq(tok[2], "coordinate")) {
        rc = cm_fail(err, "%s:1: banner: format '%s' not supported, expected 'coordinate'", path,
                     tok[2]);
        goto fail;
    }
    enum { F_INT, F_REAL, F_PATTERN } field;
    if (str_ieq(tok[3], "integer")) {
        field = F_INT;
    } else if (str_ieq(tok[3], "real")) {
        field = F_REAL;
    } else if (str_ieq(tok[3], "pattern")) {
        field = F_PATTERN;
    } else {
        rc = cm_fail(err, "%s:1: banner: field '%s' not supported, expected integer, real or "
                     "pattern", path, tok[3]);
        goto fail;
    }
    int symmetric;
    if (str_ieq(tok[4], "symmetric")) {
        symmetric = 1;
    } else if (str_ieq(tok[4], "general")) {
        symmetric = 0;
    } else {
        rc = cm_fail(err, "%s:1: banner: symmetry '%s' not supported, expected symmetric or "
                     "general", path, tok[4]);
        goto fail;
    }
    rc = rd_data(&r, "%", tok, 8, &nt, err);
    if (rc == 0) {
        rc = cm_fail(err, "%s:%lu: unexpected end of file, expected the size line 'rows cols "
                     "entries'", path, r.line + 1);
        goto fail;
    }
    if (rc < 0) goto fail;
    int64_t rows, cols, nnz;
    if (nt != 3) {
        rc = cm_fail(err, "%s:%lu: size line: expected 3 fields 'rows cols entries', got %d", path,
                     r.line, nt);
        goto fail;
    }
    if (rd_i64(tok[0], &rows) || rows < 1 || rows > DSB_INSTANCE_MAX_N || rd_i64(tok[1], &cols) ||
        cols < 1 || cols > DSB_INSTANCE_MAX_N) {
        rc = cm_fail(err, "%s:%lu: size line: rows and cols: expected integers in [1, %u], got "
                     "'%s' '%s'", path, r.line, DSB_INSTANCE_MAX_N, tok[0], tok[1]);
        goto fail;
    }
    if (rows != cols) {
        rc = cm_fail(err, "%s:%lu: size line: matrix is %lld x %lld, expected a square coupling "
                     "matrix", path, r.line, (long long)rows, (long long)cols);
        goto fail;
    }
    const int64_t n = rows;
    const int64_t max_nnz = symmetric ? n * (n + 1) / 2 : n * n;
    if (rd_i64(tok[2], &nnz) || nnz < 0 || nnz > max_nnz) {
        rc = cm_fail(err, "%s:%lu: size line: entries: expected an integer in [0, %lld], got '%s'",
                     path, r.line, (long long)max_nnz, tok[2]);
        goto fail;
    }
    inst_base(out, (uint32_t)n);
    pairs_init(&seen, (uint32_t)n);
    const int want = field == F_PATTERN ? 2 : 3;
    if (!symmetric) ent = cm_malloc((size_t)(nnz ? nnz : 1) * sizeof *ent);
    size_t n_ent = 0;
    /* general: seen marks the ordered pair (i, j) in a bitmap of n*n bits */
    for (int64_t e = 0; e < nnz; e++) {
        rc = rd_data(&r, "%", tok, 8, &nt, err);
        if (rc == 0) {
            rc = cm_fail(err, "%s:%lu: unexpected end of file: the size line declares %lld "
                         "entries, found %lld", path, r.line + 1, (long long)nnz, (long long)e);
            goto fail;
        }
        if (rc < 0) goto fail;
        if (nt != want) {
            rc = cm_fail(err, "%s:%lu: entry: expected %d fields '%s', got %d", path, r.line, want,
                         want == 2 ? "i j" : "i j value", nt);
            goto fail;
        }
        int64_t ii, jj;
        if (rd_i64(tok[0], &ii) || ii < 1 || ii > n || rd_i64(tok[1], &jj) || jj < 1 || jj > n) {
            rc = cm_fail(err, "%s:%lu: entry: indices: expected integers in [1, %lld] (1-based), "
                         "got '%s' '%s'", path, r.line, (long long)n, tok[0], tok[1]);
            goto fail;
        }
        int64_t v = 1;
        if (field == F_INT) {
            if (rd_i64(tok[2], &v)) {
                rc = cm_fail(err, "%s:%lu: entry: value: expected an integer, got '%s'", path,
                             r.line, tok[2]);
                goto fail;
            }
        } else if (field == F_REAL) {
            double d;
            if (rd_f64(tok[2], &d)) {
                rc = cm_fail(err, "%s:%lu: entry: value: expected a finite real number, got '%s'",
                             path, r.line, tok[2]);
                goto fail;
            }
            if (d != floor(d) || fabs(d) > 127.0) {
                rc = cm_fail(err, "%s:%lu: entry: value %s is not an integer in [-127, 127] "
                             "(J is stored as int8; scale the matrix to integers first)",
                             path, r.line, tok[2]);
                goto fail;
            }
            v = (int64_t)d;
        }
        if (v < -127 || v > 127) {
            rc = cm_fail(err, "%s:%lu: entry: value %lld out of range, J must fit int8: expected "
                         "-127 <= value <= 127", path, r.line, (long long)v);
            goto fail;
        }
        uint32_t i = (uint32_t)(ii - 1), j = (uint32_t)(jj - 1);
        if (i == j) {
            if (v != 0) {
                rc = cm_fail(err, "%s:%lu: entry: diagonal entry (%lld,%lld) = %lld is nonzero; the "
                             "Ising J has zero diagonal (move it into a field)", path, r.line,
                             (long long)ii, (long long)jj, (long long)v);
                goto fail;
            }
        }
        int dup;
        if (symmetric) {
            dup = pairs_mark(&seen, i, j);
        } else {
            size_t b = (size_t)i * (size_t)n + j;
            dup = (seen.bits[b >> 3] >> (b & 7)) & 1;
            seen.bits[b >> 3] |= (uint8_t)(1u << (b & 7));
        }
        if (dup) {
            rc = cm_fail(err, "%s:%lu: entry: duplicate entry (%lld,%lld)%s", path, r.line,
                         (long long)ii, (long long)jj,
                         symmetric ? " (a symmetric file gives each pair once)" : "");
            goto fail;
        }
        out->J[(size_t)i * (size_t)n + j] = (int8_t)v;
        if (symmetric) {
            out->J[(size_t)j * (size_t)n + i] = (int8_t)v;
        } else {
            ent[n_ent].i = i;
            ent[n_ent].j = j;
            ent[n_ent].line = r.line;
            n_ent++;
        }
    }
    rc = rd_data(&r, "%", tok, 8, &nt, err);
    if (rc > 0) {
        rc = cm_fail(err, "%s:%lu: extra line after the %lld entries the size line declares", path,
                     r.line, (long long)nnz);
        goto fail;
    }
    if (rc < 0) goto fail;
    /* general: J must be symmetric; an absent entry is 0. */
    for (size_t e = 0; e < n_ent; e++) {
        uint32_t i = ent[e].i, j = ent[e].j;
        int8_t a = out->J[(size_t)i * (size_t)n + j], b = out->J[(size_t)j * (size_t)n + i];
        if (a != b) {
            size_t bit = (size_t)j * (size_t)n + i;
            int present = (seen.bits[bit >> 3] >> (bit & 7)) & 1;
            rc = cm_fail(err, "%s:%lu: entry: matrix is not symmetric: (%u,%u) = %d but (%u,%u) = "
                         "%d%s", path, ent[e].line, i + 1, j + 1, a, j + 1, i + 1, b,
                         present ? "" : " (absent)");
            goto fail;
        }
    }
    out->objective = DSB_OBJ_ISING;
    name_from_path(out, path);
    free(ent);
    free(seen.bits);
    rd_close(&r);
    return 0;
fail:
    free(ent);
    free(seen.bits);
    rd_close(&r);
    dsb_instance_free(out);
    return -1;
}

/* ---- QUBO (qbsolv text) -------------------------------------------------------------
 * f(x) = sum_i Q_ii x_i + sum_{i<j} P_ij x_i x_j with P_ij = Q_ij + Q_ji (the
 * file gives each pair once, in either order).  x = (1 + s)/2 gives
 *   4 f(x) = E'(s) + C,  J'_ij = -P_ij,  h'_i = -(2 Q_ii + sum_{j != i} P_ij),
 *   C = sum_i 2 Q_ii + sum_{i<j} P_ij.
 * Integer coefficients whose J', h' fit int8/int16 are kept exactly; other
 * files are quantized with one common scale S (the largest with |J| <= 127,
 * |h| <= 32767) and quant_scale = 1/S:  f = (E + C S) / (4 S). */

typedef struct {
    uint32_t i, j;
    double v;
} qubo_coupler;

int dsb_read_qubo(const char *path, dsb_instance *out, cm_err *err)
{
    rd_lines r;
    if (rd_open(&r, path, out, err)) return -1;
    char *tok[8];
    int nt = 0, rc;
    rd_pairs seen = {0};
    double *diag = NULL, *hr = NULL;
    uint8_t *node_seen = NULL;
    qubo_coupler *cp = NULL;
    int64_t n = 0, n_nodes = 0, n_coup = 0, got_nodes = 0, got_coup = 0;
    unsigned long p_line = 0;
    int all_int = 1;
    for (;;) {
        rc = rd_data(&r, "c", tok, 8, &nt, err);
        if (rc < 0) goto fail;
        if (rc == 0) break;
        if (!strcmp(tok[0], "p")) {
            if (p_line) {
                rc = cm_fail(err, "%s:%lu: second 'p' line (the first is line %lu)", path, r.line,
                             p_line);
                goto fail;
            }
            p_line = r.line;
            if (nt != 6) {
                rc = cm_fail(err, "%s:%lu: expected 'p qubo <topology> <maxNodes> <nNodes> "
                             "<nCouplers>' (6 fields), got %d fields", path, r.line, nt);
                goto fail;
            }
            if (strcmp(tok[1], "qubo")) {
                rc = cm_fail(err, "%s:%lu: problem type '%s' not supported, expected 'qubo'", path,
                             r.line, tok[1]);
                goto fail;
            }
            if (strcmp(tok[2], "0") && strcmp(tok[2], "unconstrained")) {
                rc = cm_fail(err, "%s:%lu: topology '%s' not supported, expected 0 or "
                             "unconstrained", path, r.line, tok[2]);
                goto fail;
            }
            if (rd_i64(tok[3], &n) || n < 1 || n > DSB_INSTANCE_MAX_N) {
                rc = cm_fail(err, "%s:%lu: maxNodes: expected an integer in [1, %u], got '%s'",
                             path, r.line, DSB_INSTANCE_MAX_N, tok[3]);
                goto fail;
            }
            if (rd_i64(tok[4], &n_nodes) || n_nodes < 0 || n_nodes > n) {
                rc = cm_fail(err, "%s:%lu: nNodes: expected an integer in [0, %lld], got '%s'",
                             path, r.line, (long long)n, tok[4]);
                goto fail;
            }
            if (rd_i64(tok[5], &n_coup) || n_coup < 0 || n_coup > n * (n - 1) / 2) {
                rc = cm_fail(err, "%s:%lu: nCouplers: expected an integer in [0, %lld], got '%s'",
                             path, r.line, (long long)(n * (n - 1) / 2), tok[5]);
                goto fail;
            }
            diag = cm_calloc((size_t)n, sizeof(double));
            node_seen = cm_calloc((size_t)n, 1);
            cp = cm_malloc((size_t)(n_coup ? n_coup : 1) * sizeof *cp);
            pairs_init(&seen, (uint32_t)n);
            continue;
        }
        if (!p_line) {
            rc = cm_fail(err, "%s:%lu: expected the 'p qubo 0 <maxNodes> <nNodes> <nCouplers>' "
                         "line before any data line", path, r.line);
            goto fail;
        }
        if (nt != 3) {
            rc = cm_fail(err, "%s:%lu: expected 3 fields 'i j value', got %d", path, r.line, nt);
            goto fail;
        }
        int64_t i, j;
        double v;
        if (rd_i64(tok[0], &i) || i < 0 || i >= n || rd_i64(tok[1], &j) || j < 0 || j >= n) {
            rc = cm_fail(err, "%s:%lu: indices: expected integers in [0, %lld] (0-based, below "
                         "maxNodes), got '%s' '%s'", path, r.line, (long long)(n - 1), tok[0],
                         tok[1]);
            goto fail;
        }
        if (rd_f64(tok[2], &v)) {
            rc = cm_fail(err, "%s:%lu: value: expected a finite real number, got '%s'", path,
                         r.line, tok[2]);
            goto fail;
        }
        if (fabs(v) > 0x1p40) {
            rc = cm_fail(err, "%s:%lu: value %s too large in magnitude (limit 2^40)", path, r.line,
                         tok[2]);
            goto fail;
        }
        if (v != floor(v)) all_int = 0;
        if (i == j) {
            if (node_seen[i]) {
                rc = cm_fail(err, "%s:%lu: duplicate diagonal entry (%lld,%lld)", path, r.line,
                             (long long)i, (long long)j);
                goto fail;
            }
            if (got_nodes == n_nodes) {
                rc = cm_fail(err, "%s:%lu: more diagonal lines than the %lld nNodes of line %lu",
                             path, r.line, (long long)n_nodes, p_line);
                goto fail;
            }
            node_seen[i] = 1;
            diag[i] = v;
            got_nodes++;
        } else {
            if (pairs_mark(&seen, (uint32_t)i, (uint32_t)j)) {
                rc = cm_fail(err, "%s:%lu: duplicate coupler (%lld,%lld) (each pair is given "
                             "once, in either order)", path, r.line, (long long)i, (long long)j);
                goto fail;
            }
            if (got_coup == n_coup) {
                rc = cm_fail(err, "%s:%lu: more coupler lines than the %lld nCouplers of line %lu",
                             path, r.line, (long long)n_coup, p_line);
                goto fail;
            }
            cp[got_coup].i = (uint32_t)i;
            cp[got_coup].j = (uint32_t)j;
            cp[got_coup].v = v;
            got_coup++;
        }
    }
    if (!p_line) {
        rc = cm_fail(err, "%s:%lu: no 'p qubo 0 <maxNodes> <nNodes> <nCouplers>' line", path,
                     r.line + 1);
        goto fail;
    }
    if (got_nodes != n_nodes || got_coup != n_coup) {
        rc = cm_fail(err, "%s:%lu: end of file: line %lu declares %lld diagonal and %lld coupler "
                     "lines, found %lld and %lld", path, r.line + 1, p_line, (long long)n_nodes,
                     (long long)n_coup, (long long)got_nodes, (long long)got_coup);
        goto fail;
    }
    hr = cm_calloc((size_t)n, sizeof(double));
    double C = 0.0, maxJ = 0.0, maxH = 0.0;
    for (int64_t i = 0; i < n; i++) {
        hr[i] = -2.0 * diag[i];
        C += 2.0 * diag[i];
    }
    for (int64_t e = 0; e < got_coup; e++) {
        hr[cp[e].i] -= cp[e].v;
        hr[cp[e].j] -= cp[e].v;
        C += cp[e].v;
        if (fabs(cp[e].v) > maxJ) maxJ = fabs(cp[e].v);
    }
    for (int64_t i = 0; i < n; i++)
        if (fabs(hr[i]) > maxH) maxH = fabs(hr[i]);
    double S = 1.0;
    if (!all_int || maxJ > 127.0 || maxH > 32767.0) {
        S = 0.0;
        if (maxJ > 0.0) S = 127.0 / maxJ;
        if (maxH > 0.0 && (S == 0.0 || 32767.0 / maxH < S)) S = 32767.0 / maxH;
        if (S == 0.0) S = 1.0; /* all coefficients zero */
    }
    inst_base(out, (uint32_t)n);
    for (int64_t e = 0; e < got_coup; e++) {
        long q = lround(-cp[e].v * S);
        if (q > 127) q = 127;
        if (q < -127) q = -127;
        out->J[(size_t)cp[e].i * (size_t)n + cp[e].j] = (int8_t)q;
        out->J[(size_t)cp[e].j * (size_t)n + cp[e].i] = (int8_t)q;
    }
    for (int64_t i = 0; i < n; i++) {
        long q = lround(hr[i] * S);
        if (q > 32767) q = 32767;
        if (q < -32767) q = -32767;
        out->h[i] = (int16_t)q;
    }
    out->objective = DSB_OBJ_QUBO;
    out->quant_scale = 1.0 / S;
    out->qubo_offset = C * S;
    out->qubo_scale = 1.0 / (4.0 * S);
    name_from_path(out, path);
    free(diag), free(hr), free(node_seen), free(cp), free(seen.bits);
    rd_close(&r);
    return 0;
fail:
    free(diag), free(hr), free(node_seen), free(cp), free(seen.bits);
    rd_close(&r);
    dsb_instance_free(out);
    return -1;
}

/* ---- by extension -------------------------------------------------------------------- */

static int has_ext(const char *path, const char *ext)
{
    size_t lp = strlen(path), le = strlen(ext);
    return lp > le && str_ieq(path + lp - le, ext);
}

int dsb_read_file(const char *path, dsb_instance *out, cm_err *err)
{
    if (has_ext(path, ".mtx")) return dsb_read_mtx(path, out, err);
    if (has_ext(path, ".qubo")) return dsb_read_qubo(path, out, err);
    return dsb_read_gset(path, out, err);
}

int dsb_write_spins(const char *path, const uint32_t *bits, uint32_t n, cm_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return cm_fail(err, "%s: cannot open for writing: %s", path, strerror(errno));
    for (uint32_t i = 0; i < n; i++) fputs((bits[i / 32u] >> (i % 32u) & 1u) ? "1\n" : "-1\n", f);
    if (fclose(f) != 0) return cm_fail(err, "%s: error writing: %s", path, strerror(errno));
    return 0;
}
