/* dak engine, CPU: safetensors reading against hand-made files (element conversions against hand-computed bits;
 * every malformed header refused with its reason; shards through an index), and checkpoints bound to the engine
 * (a synthetic checkpoint written and read back gives the CPU reference the same logits, bit for bit, as the
 * synthetic parameters; a checkpoint of the wrong model, a missing tensor or a wrong shape refused), and large
 * reads split across threads (the values written, whatever the thread count and range; a file cut under the
 * reader fails with the one-thread message), and the packed layout written on the CPU (dak_eng_pack_rows: every
 * element where the layout's inverse says, rows outside the range untouched, on 1 to 4 threads), and the layout's one
 * formula (dak/tile_layout.h: hand-computed offsets, and every element of four shapes through it and through
 * dak_eng_pack_rows against the layout re-derived here element by element, where three wrong swizzles fail). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "../tmpdir.h"
#include "dak/engine.h"
#include "dak/safetensors.h"
#include "dak/tile_layout.h"

static char dir[64];

static const char *path_of(const char *name)
{
    static char p[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* a safetensors file: header text as given (its length written before it), then `data` */
static const char *write_raw(const char *name, const char *header, const void *data, size_t n)
{
    const char *p = path_of(name);
    FILE *f = fopen(p, "wb");
    uint64_t hn = strlen(header);
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)(hn >> (8 * i));
    fwrite(len8, 1, 8, f);
    fwrite(header, 1, hn, f);
    if (n) fwrite(data, 1, n, f);
    fclose(f);
    return p;
}

static void expect_open_fails(const char *p, const char *needle, const char *what)
{
    dak_st *st;
    cm_err err = {{0}};
    int rc = dak_st_open(&st, p, &err);
    CHECK(rc != 0 && strstr(err.msg, needle), "%s: expected a refusal naming '%s', got %s", what, needle,
          rc ? err.msg : "success");
    if (!rc) dak_st_close(st);
}

static void conversions(void)
{
    /* F16 [2, 3]: 1.0, -2.0, 2^-24 (the smallest subnormal), +inf, 0.333251953125 (0x3555), -0.0;
     * F32 [4]: 1.5, 1 + 2^-8 (a tie, even: down), 1 + 3 x 2^-8 (a tie, odd: up), NaN; BF16 [2]: 0x4049 (3.140625),
     * 0xbf80 (-1); I8 [2] */
    const uint16_t h[6] = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x3555, 0x8000};
    const uint32_t fbits[4] = {0x3fc00000u, 0x3f808000u, 0x3f818000u, 0x7fc00001u};
    const uint16_t b[2] = {0x4049, 0xbf80};
    uint8_t data[12 + 16 + 4 + 2];
    memcpy(data, h, 12), memcpy(data + 12, fbits, 16), memcpy(data + 28, b, 4);
    data[32] = 0x7f, data[33] = 0x80;
    const char *p = write_raw("conv.safetensors",
                              "{\"h\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]},"
                              "\"f\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[12,28]},"
                              "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[28,32]},"
                              "\"q\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[32,34]},"
                              "\"__metadata__\":{\"format\":\"pt\"}}   ",
                              data, sizeof data);
    dak_st *st;
    cm_err err = {{0}};
    if (dak_st_open(&st, p, &err)) {
        CHECK(0, "open: %s", err.msg);
        return;
    }
    CHECK(dak_st_count(st) == 4, "4 tensors, got %zu", dak_st_count(st));
    CHECK(!strcmp(dak_st_at(st, 0)->name, "b") && !strcmp(dak_st_at(st, 3)->name, "q"), "tensors in name order");
    const dak_st_tensor *th = dak_st_find(st, "h"), *tf = dak_st_find(st, "f"), *tb = dak_st_find(st, "b"),
                        *tq = dak_st_find(st, "q");
    CHECK(th && tf && tb && tq && !dak_st_find(st, "__metadata__") && !dak_st_find(st, "x"), "find");
    if (!th || !tf || !tb || !tq) return;
    CHECK(th->ndim == 2 && th->shape[0] == 2 && th->shape[1] == 3 && dak_st_elems(th) == 6 && th->dtype == DAK_ST_F16,
          "h's shape and type");
    uint16_t o16[6];
    float o32[6];
    const uint16_t want16[6] = {0x3f80, 0xc000, 0x3380, 0x7f80, 0x3eab, 0x8000};
    const float want32[6] = {1.0f, -2.0f, 5.9604644775390625e-08f, INFINITY, 0.333251953125f, -0.0f};
    CHECK(dak_st_read_bf16(st, th, 0, 6, o16, &err) == 0, "read h: %s", err.msg);
    CHECK(dak_st_read_f32(st, th, 0, 6, o32, &err) == 0, "read h: %s", err.msg);
    for (int i = 0; i < 6; i++) {
        CHECK(o16[i] == want16[i], "F16 %04x -> bf16 %04x, expected %04x", h[i], o16[i], want16[i]);
        CHECK(o32[i] == want32[i] && signbit(o32[i]) == signbit(want32[i]), "F16 %04x -> %a, expected %a", h[i],
              o32[i], want32[i]);
    }
    CHECK(dak_st_read_bf16(st, th, 4, 2, o16, &err) == 0 && o16[0] == 0x3eab && o16[1] == 0x8000, "h[4..6)");
    const uint16_t wantf[4] = {0x3fc0, 0x3f80, 0x3f82};
    CHECK(dak_st_read_bf16(st, tf, 0, 4, o16, &err) == 0, "read f: %s", err.msg);
    for (int i = 0; i < 3; i++) CHECK(o16[i] == wantf[i], "F32 %08x -> bf16 %04x, expected %04x", fbits[i], o16[i], wantf[i]);
    CHECK((o16[3] & 0x7f80) == 0x7f80 && (o16[3] & 0x7f), "F32 NaN -> bf16 %04x, not a NaN", o16[3]);
    CHECK(dak_st_read_bf16(st, tb, 0, 2, o16, &err) == 0 && o16[0] == 0x4049 && o16[1] == 0xbf80, "BF16 as stored");
    CHECK(dak_st_read_f32(st, tb, 0, 2, o32, &err) == 0 && o32[0] == 3.140625f && o32[1] == -1.0f, "BF16 -> f32");
    int rc = dak_st_read_bf16(st, tq, 0, 2, o16, &err);
    CHECK(rc != 0 && strstr(err.msg, "is I8"), "I8 read: %s", rc ? err.msg : "accepted");
    rc = dak_st_read_bf16(st, th, 5, 2, o16, &err);
    CHECK(rc != 0 && strstr(err.msg, "elements [5, 7)"), "read past the end: %s", rc ? err.msg : "accepted");
    dak_st_close(st);
    /* dak_f16_to_f32 over every finite half against ldexp (an independent route) */
    int bad = 0;
    for (uint32_t x = 0; x < 0x7c00; x++) {
        const uint32_t e = x >> 10, m = x & 0x3ff;
        const double v = e ? ldexp(1.0 + m / 1024.0, (int)e - 15) : ldexp(m / 1024.0, -14);
        bad += dak_f16_to_f32((uint16_t)x) != (float)v || dak_f16_to_f32((uint16_t)(x | 0x8000)) != (float)-v;
    }
    CHECK(bad == 0, "%d halves converted wrongly", bad);
}

static void malformed(void)
{
    const uint8_t z[64] = {0};
    {
        const char *p = path_of("short.safetensors");
        FILE *f = fopen(p, "wb");
        fwrite(z, 1, 5, f);
        fclose(f);
        expect_open_fails(p, "expected at least the 8-byte", "a 5-byte file");
    }
    {
        const char *p = path_of("long-header.safetensors");
        FILE *f = fopen(p, "wb");
        const uint8_t len8[8] = {0x00, 0x10, 0, 0, 0, 0, 0, 0}; /* 4096 bytes, the file has 4 */
        fwrite(len8, 1, 8, f);
        fwrite("{}  ", 1, 4, f);
        fclose(f);
        expect_open_fails(p, "header length 4096", "a header past the end");
    }
    static const struct {
        const char *header, *needle, *what;
        size_t data;
    } cases[] = {
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}", "", "unterminated JSON", 4},
        {"{\"a\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,4]}}", "dtype \"Q4\"", "an unknown dtype", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,4]}}", "elements are 6 bytes", "shape against bytes",
         4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", "expected begin <= end <= 4",
         "offsets past the data", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[4,0]}}", "expected begin <= end", "begin > end", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[2,4]}}", "belong to no tensor", "a hole", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F16\",\"shape\":[1],"
         "\"data_offsets\":[2,4]}}",
         "overlaps", "overlapping tensors", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}", "at the end belong to no tensor",
         "trailing bytes", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4],\"x\":1}}", "unexpected key 'x'",
         "an extra key", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":2,\"data_offsets\":[0,4]}}", "shape: expected an array", "a scalar shape",
         4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[-2],\"data_offsets\":[0,4]}}", "expected a whole number", "a negative size",
         4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0]}}", "data_offsets: expected [begin, end]",
         "one offset", 4},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F16\",\"shape\":[2],"
         "\"data_offsets\":[0,4]}}",
         "duplicate", "a name twice", 4},
        {"{\"__metadata__\":{\"n\":1}}", "expected a string", "a metadata number", 0},
        {"[1,2]", "expected object", "an array header", 0},
        {"{\"a\":[1]}", "expected an object with dtype", "a tensor as an array", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.safetensors", i);
        expect_open_fails(write_raw(name, cases[i].header, z, cases[i].data), cases[i].needle, cases[i].what);
    }
    expect_open_fails(path_of("nothing-here"), "nothing-here", "a missing file");
}

/* two shards and an index; then an index that names the wrong shard, one that leaves the folder, a folder with
 * neither an index nor model.safetensors */
static void shards(void)
{
    const uint16_t d[4] = {0x3f80, 0x4000, 0x4040, 0x4080}; /* bf16 1, 2, 3, 4 */
    char sub[96];
    snprintf(sub, sizeof sub, "%s/sharded", dir);
    mkdir(sub, 0700);
    write_raw("sharded/one.safetensors", "{\"x\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}", d, 4);
    write_raw("sharded/two.safetensors", "{\"y\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[0,4]}}", d + 2,
              4);
    const char *ip = path_of("sharded/model.safetensors.index.json");
    FILE *f = fopen(ip, "w");
    fputs("{\"metadata\":{\"total_size\":8},\"weight_map\":{\"x\":\"one.safetensors\",\"y\":\"two.safetensors\"}}", f);
    fclose(f);
    dak_st *st;
    cm_err err = {{0}};
    if (dak_st_open(&st, sub, &err)) {
        CHECK(0, "sharded open: %s", err.msg);
    } else {
        const dak_st_tensor *x = dak_st_find(st, "x"), *y = dak_st_find(st, "y");
        float v[2];
        CHECK(x && y && x->file != y->file, "x and y in two shards");
        CHECK(y && dak_st_read_f32(st, y, 0, 2, v, &err) == 0 && v[0] == 3.0f && v[1] == 4.0f, "y's values");
        dak_st_close(st);
    }
    f = fopen(ip, "w");
    fputs("{\"weight_map\":{\"x\":\"two.safetensors\",\"y\":\"one.safetensors\"}}", f);
    fclose(f);
    expect_open_fails(sub, "tensor 'x' is listed in two.safetensors but stored in", "an index naming the wrong shards");
    f = fopen(ip, "w");
    fputs("{\"weight_map\":{\"x\":\"two.safetensors\",\"y\":\"two.safetensors\"}}", f);
    fclose(f);
    expect_open_fails(sub, "tensor 'x' is listed in two.safetensors but is in no shard", "a name in no shard");
    f = fopen(ip, "w");
    fputs("{\"weight_map\":{\"x\":\"../conv.safetensors\"}}", f);
    fclose(f);
    expect_open_fails(sub, "expected a file name in the same folder", "an index leaving the folder");
    char empty[96];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    mkdir(empty, 0700);
    expect_open_fails(empty, "no model.safetensors.index.json or model.safetensors", "an empty folder");
}

typedef struct {
    const uint16_t *v;
} wr_arg;

static int wr_fill(void *arg, size_t i, void *buf, cm_err *err)
{
    (void)err;
    const wr_arg *a = arg;
    if (i == 0) memcpy(buf, a->v, 6 * 2);
    else memcpy(buf, a->v + 6, 2 * 2);
    return 0;
}

static void writer(void)
{
    const uint16_t v[8] = {1, 2, 3, 4, 5, 6, 0x3f80, 0xc000};
    const dak_st_out out[2] = {{"w.a", DAK_ST_BF16, 2, {3, 2}}, {"w.b", DAK_ST_F16, 1, {2}}};
    wr_arg a = {v};
    cm_err err = {{0}};
    const char *p = path_of("written.safetensors");
    CHECK(dak_st_write(p, out, 2, wr_fill, &a, &err) == 0, "write: %s", err.msg);
    dak_st *st;
    if (dak_st_open(&st, p, &err)) {
        CHECK(0, "written file: %s", err.msg);
        return;
    }
    const dak_st_tensor *ta = dak_st_find(st, "w.a"), *tb = dak_st_find(st, "w.b");
    uint16_t r[6];
    float fb[2];
    CHECK(ta && ta->ndim == 2 && ta->shape[0] == 3 && ta->shape[1] == 2 && ta->offset % 8 == 0, "w.a's entry");
    CHECK(ta && dak_st_read_bf16(st, ta, 0, 6, r, &err) == 0 && !memcmp(r, v, 12), "w.a's bytes");
    CHECK(tb && dak_st_read_f32(st, tb, 0, 2, fb, &err) == 0 && fb[0] == 1.875f && fb[1] == -2.0f,
          "w.b: F16 3f80 = 1.875, c000 = -2");
    dak_st_close(st);
    const dak_st_out bad = {"a\"b", DAK_ST_BF16, 1, {1}};
    int rc = dak_st_write(path_of("bad-name.safetensors"), &bad, 1, wr_fill, &a, &err);
    CHECK(rc != 0 && strstr(err.msg, "plain name"), "a name with a quote: %s", rc ? err.msg : "accepted");
}

/* ---- parallel reads: large reads split across threads give the one-thread values and messages ---------- */

/* element i's stored bits in tensor `which` (any pattern: NaNs, infinities, subnormals included) */
static uint64_t bits_of(size_t which, uint64_t i)
{
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull + which * 0xbf58476d1ce4e5b9ull; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* BF16 [4099, 2311] (19 MB: up to 9 pieces), F16 [2999, 1409] (8.45 MB, just over DAK_ST_PARALLEL_MIN), F32
 * [1031, 2087] (8.6 MB): sizes that share no factor with any thread count */
static const dak_st_out BIG[3] = {{"big.bf16", DAK_ST_BF16, 2, {4099, 2311}},
                                  {"big.f16", DAK_ST_F16, 2, {2999, 1409}},
                                  {"big.f32", DAK_ST_F32, 2, {1031, 2087}}};

static int big_fill(void *arg, size_t i, void *buf, cm_err *err)
{
    (void)arg, (void)err;
    const uint64_t n = BIG[i].shape[0] * BIG[i].shape[1];
    for (uint64_t j = 0; j < n; j++) {
        if (BIG[i].dtype == DAK_ST_F32) ((uint32_t *)buf)[j] = (uint32_t)bits_of(i, j);
        else ((uint16_t *)buf)[j] = (uint16_t)bits_of(i, j);
    }
    return 0;
}

/* The values written, converted here by another route than the reader's: fp32 bits and bf16 bits (round to
 * nearest even on the bits). */
static uint32_t want_f32_bits(size_t which, uint64_t i)
{
    const uint64_t b = bits_of(which, i);
    if (BIG[which].dtype == DAK_ST_F32) return (uint32_t)b;
    if (BIG[which].dtype == DAK_ST_BF16) return (uint32_t)(uint16_t)b << 16;
    const uint32_t h = (uint16_t)b, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0x1f ? (m ? NAN : INFINITY) : e ? (float)ldexp(1.0 + m / 1024.0, (int)e - 15)
                                                   : (float)ldexp(m / 1024.0, -14);
    if (h & 0x8000) v = -v;
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

static int is_nan32(uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu); }
static int is_nan16(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu); }

static uint16_t want_bf16_bits(size_t which, uint64_t i)
{
    const uint32_t u = want_f32_bits(which, i);
    return is_nan32(u) ? 0x7fc0 : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#define GUARD 64 /* bytes before and after every destination, which a read must leave alone */

/* elements [first, first + n) of BIG[which] with `threads` threads, as bf16 (f32 0) or fp32 into out (n elements,
 * GUARD bytes of 0xa5 either side); 0 if the read succeeded, its guards are intact and (with `values`) every
 * element is the value written (NaN for NaN) */
static int read_checked(const dak_st *st, size_t which, unsigned threads, uint64_t first, uint64_t n, int f32,
                        int values, uint8_t *out)
{
    const dak_st_tensor *t = dak_st_find(st, BIG[which].name);
    const size_t eb = f32 ? 4 : 2;
    cm_err err = {{0}};
    memset(out, 0xa5, n * eb + 2 * GUARD);
    CHECK(dak_st_set_threads(threads, &err) == 0 && dak_st_threads() == threads, "set %u threads: %s", threads,
          err.msg);
    int rc = f32 ? dak_st_read_f32(st, t, first, n, (float *)(out + GUARD), &err)
                 : dak_st_read_bf16(st, t, first, n, (uint16_t *)(out + GUARD), &err);
    if (rc) {
        CHECK(0, "%s [%llu, +%llu) with %u threads: %s", BIG[which].name, (unsigned long long)first,
              (unsigned long long)n, threads, err.msg);
        return -1;
    }
    int guards = 1;
    for (size_t g = 0; g < GUARD; g++) guards &= out[g] == 0xa5 && out[GUARD + n * eb + g] == 0xa5;
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t j = 0; values && j < n; j++) {
        int ok;
        if (f32) {
            uint32_t got, want = want_f32_bits(which, first + j);
            memcpy(&got, out + GUARD + 4 * j, 4);
            ok = is_nan32(want) ? is_nan32(got) : got == want;
        } else {
            uint16_t got, want = want_bf16_bits(which, first + j);
            memcpy(&got, out + GUARD + 2 * j, 2);
            ok = is_nan16(want) ? is_nan16(got) : got == want;
        }
        if (!ok && !bad++) first_bad = first + j;
    }
    CHECK(guards && !bad, "%s as %s, [%llu, +%llu), %u threads: guards %s, %llu elements differ from the values "
          "written (the first: %llu)",
          BIG[which].name, f32 ? "f32" : "bf16", (unsigned long long)first, (unsigned long long)n, threads,
          guards ? "intact" : "overwritten", (unsigned long long)bad, (unsigned long long)first_bad);
    return guards && !bad ? 0 : -1;
}

static void thread_setting(void)
{
    cm_err err = {{0}};
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned dflt = cpus < 1 ? 1u : cpus > 8 ? 8u : (unsigned)cpus;
    CHECK(dak_st_set_threads(0, &err) == 0 && dak_st_threads() == dflt, "the default: %u threads, expected %u",
          dak_st_threads(), dflt);
    CHECK(dak_st_set_threads(4, &err) == 0 && dak_st_threads() == 4, "4 threads");
    CHECK(dak_st_read_pieces(DAK_ST_PARALLEL_MIN - 1) == 1 && dak_st_read_pieces(DAK_ST_PARALLEL_MIN) == 4 &&
              dak_st_read_pieces(32u << 20) == 4,
          "4 threads: 1 piece below 8 MiB, 4 from there: %u %u %u", dak_st_read_pieces(DAK_ST_PARALLEL_MIN - 1),
          dak_st_read_pieces(DAK_ST_PARALLEL_MIN), dak_st_read_pieces(32u << 20));
    CHECK(dak_st_set_threads(DAK_ST_MAX_THREADS, &err) == 0 && dak_st_read_pieces(32u << 20) == 16 &&
              dak_st_read_pieces((5u << 20) * 2) == 5,
          "64 threads: pieces of at least 2 MiB (32 MiB: 16 pieces, 10 MiB: 5)");
    CHECK(dak_st_set_threads(1, &err) == 0 && dak_st_read_pieces(UINT64_C(1) << 40) == 1, "1 thread: never split");
    int rc = dak_st_set_threads(DAK_ST_MAX_THREADS + 1, &err);
    CHECK(rc != 0 && strstr(err.msg, "read threads 65: expected 0") && dak_st_threads() == 1,
          "65 threads refused, the setting kept: %s", rc ? err.msg : "accepted");
}

/* A file cut after it was opened: every thread count fails with the one-thread message, naming a range that
 * holds the cut. */
static void truncated(const char *src, size_t which, uint64_t cut_elem)
{
    char name[48];
    snprintf(name, sizeof name, "cut-%zu.safetensors", which);
    const char *p = path_of(name);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    dak_st *st;
    cm_err err = {{0}};
    if (system(cmd) != 0 || dak_st_open(&st, p, &err)) {
        CHECK(0, "copy %s: %s", src, err.msg);
        return;
    }
    const dak_st_tensor *t = dak_st_find(st, BIG[which].name);
    const uint64_t n = dak_st_elems(t), cut = t->offset + cut_elem * t->elem_bytes;
    CHECK(truncate(p, (off_t)cut) == 0, "truncate %s", p);
    uint8_t *out = malloc(n * 4);
    const unsigned counts[3] = {1, 3, 7};
    for (int c = 0; c < 3; c++) {
        dak_st_set_threads(counts[c], &err);
        for (int f32 = 0; f32 < 2; f32++) {
            err.msg[0] = '\0';
            int rc = f32 ? dak_st_read_f32(st, t, 0, n, (float *)out, &err)
                         : dak_st_read_bf16(st, t, 0, n, (uint16_t *)out, &err);
            unsigned long long bytes = 0, off = 0;
            char prefix[200];
            snprintf(prefix, sizeof prefix, "%s: reading ", p);
            const int parsed = !strncmp(err.msg, prefix, strlen(prefix)) &&
                               sscanf(err.msg + strlen(prefix), "%llu bytes at offset %llu", &bytes, &off) == 2;
            CHECK(rc != 0 && parsed && strstr(err.msg, ": unexpected end of the file") && off >= t->offset &&
                      off <= cut && cut < off + bytes && off + bytes <= t->offset + t->bytes,
                  "%s cut at byte %llu, read as %s with %u threads: %s", BIG[which].name, (unsigned long long)cut,
                  f32 ? "f32" : "bf16", counts[c], rc ? err.msg : "accepted");
        }
    }
    free(out);
    dak_st_close(st);
}

static void parallel_reads(void)
{
    thread_setting();
    cm_err err = {{0}};
    char p[160]; /* path_of's buffers are reused */
    snprintf(p, sizeof p, "%s", path_of("big.safetensors"));
    dak_st *st;
    if (dak_st_write(p, BIG, 3, big_fill, NULL, &err) || dak_st_open(&st, p, &err)) {
        CHECK(0, "%s: %s", p, err.msg);
        return;
    }
    const unsigned counts[5] = {1, 2, 3, 4, 7};
    for (size_t w = 0; w < 3; w++) {
        const dak_st_tensor *t = dak_st_find(st, BIG[w].name);
        const uint64_t el = dak_st_elems(t), eb = t->elem_bytes, at_min = DAK_ST_PARALLEL_MIN / eb;
        /* the whole; odd ranges inside; exactly at the threshold and one element under; fewer elements than
         * threads; nothing */
        const uint64_t ranges[][2] = {{0, el},           {1, el - 1},      {12345, el - 12345 - 777}, {7, at_min},
                                      {8, at_min - 1},   {el - at_min - 3, at_min + 2}, {17, 5}, {el, 0}};
        const size_t nr = sizeof ranges / sizeof ranges[0];
        uint8_t *one = malloc(el * 4 + 2 * GUARD), *many = malloc(el * 4 + 2 * GUARD);
        for (size_t r = 0; r < nr; r++) {
            const uint64_t first = ranges[r][0], n = ranges[r][1];
            for (int f32 = 0; f32 < 2; f32++) {
                const size_t ob = f32 ? 4 : 2;
                if (read_checked(st, w, 1, first, n, f32, 1, one)) continue;
                for (int c = 1; c < 5; c++) {
                    dak_st_set_threads(counts[c], &err);
                    const unsigned pieces = dak_st_read_pieces(n * eb);
                    /* split exactly when the read reaches the threshold, into no more pieces than threads */
                    CHECK((pieces > 1) == (n * eb >= DAK_ST_PARALLEL_MIN) && pieces <= counts[c],
                          "%s [%llu, +%llu) with %u threads: %u pieces", BIG[w].name, (unsigned long long)first,
                          (unsigned long long)n, counts[c], pieces);
                    /* the same bytes as one thread's, which are the values written */
                    if (read_checked(st, w, counts[c], first, n, f32, 0, many)) continue;
                    CHECK(!memcmp(one, many, n * ob + 2 * GUARD), "%s as %s [%llu, +%llu): %u threads (%u pieces) "
                          "differ from 1 thread",
                          BIG[w].name, f32 ? "f32" : "bf16", (unsigned long long)first, (unsigned long long)n,
                          counts[c], pieces);
                }
            }
        }
        free(one), free(many);
    }
    dak_st_close(st);
    /* the cut in the middle of a late piece (earlier pieces succeed), and near the start (later ones fail too) */
    truncated(p, 0, 7000001);
    truncated(p, 0, 1000);
    truncated(p, 1, 3000000);
    truncated(p, 2, 2000000);
    dak_st_set_threads(0, &err);
}

/* The model's table against its config: shapes and presence. */
static void table(dak_arch arch)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    dak_eng_model m;
    cm_err err = {{0}};
    CHECK(dak_eng_model_make(&c, 0, &m, &err) == 0, "model: %s", err.msg);
    const int opt = arch == DAK_ARCH_OPT;
    dak_eng_param p;
    CHECK(dak_eng_param_of(&m, DAK_ENG_T_EMBED, &p) == 0 && p.present && p.weight && p.rows == c.vocab &&
              p.cols == c.hidden,
          "embedding [vocab, hidden]");
    CHECK(dak_eng_param_of(&m, DAK_ENG_T_POS, &p) == 0 && p.present == opt && (!opt || p.rows == c.max_pos + 2),
          "positions: OPT only, max_pos + 2 rows");
    CHECK(dak_eng_param_of(&m, DAK_ENG_T_LM, &p) == 0 && p.present == !opt, "lm_head: Llama only");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(1, DAK_ENG_FC1), &p) == 0 && p.rows == c.ffn && p.cols == c.hidden,
          "fc1 / gate [ffn, hidden]");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(1, DAK_ENG_I_BIAS0 + DAK_ENG_K), &p) == 0 && p.present == opt &&
              !p.weight && p.cols == c.kv_heads * 128,
          "k's bias: OPT only, [kv_heads x 128]");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(0, DAK_ENG_UP), &p) == 0 && p.present == !opt, "up: Llama only");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(0, DAK_ENG_I_N2_B), &p) == 0 && p.present == opt, "norm betas: OPT");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(2, DAK_ENG_Q), &p) != 0, "layer 2 of 2: no parameter");
    CHECK(dak_eng_param_of(&m, dak_eng_tensor(0, 30), &p) != 0 && dak_eng_param_of(&m, DAK_ENG_T_PROMPT, &p) != 0,
          "ids that name no parameter");
}

/* the reference over a checkpoint of its own synthetic parameters equals the synthetic reference, bit for bit */
static void ref_roundtrip(dak_arch arch, dak_st_dtype dt, uint32_t layers_used)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    dak_eng_model m, mu;
    cm_err err = {{0}};
    const char *an = arch == DAK_ARCH_OPT ? "opt" : "llama";
    if (dak_eng_model_make(&c, 0, &m, &err) || dak_eng_model_make(&c, layers_used, &mu, &err)) {
        CHECK(0, "model: %s", err.msg);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "%s-%s.safetensors", an, dt == DAK_ST_BF16 ? "bf16" : "f32");
    const char *p = path_of(name);
    const uint64_t seed = 11;
    if (dak_eng_ckpt_write_synthetic(&m, seed, dt, p, 0, &err)) {
        CHECK(0, "write %s: %s", p, err.msg);
        return;
    }
    dak_eng_ckpt *ck;
    if (dak_eng_ckpt_open(&ck, p, &mu, &err)) {
        CHECK(0, "open %s as %u layers: %s", p, layers_used, err.msg);
        return;
    }
    const char *qn = dak_eng_ckpt_name(ck, dak_eng_tensor(layers_used - 1, DAK_ENG_Q));
    char want[96];
    snprintf(want, sizeof want, "%slayers.%u.self_attn.q_proj.weight", arch == DAK_ARCH_OPT ? "model.decoder." : "model.",
             layers_used - 1);
    CHECK(qn && !strcmp(qn, want), "%s: q's name '%s', expected '%s'", an, qn ? qn : "(none)", want);
    CHECK(!dak_eng_ckpt_name(ck, dak_eng_tensor(layers_used, DAK_ENG_Q)), "%s: a layer past --layers is not bound", an);
    const char *lm = dak_eng_ckpt_name(ck, DAK_ENG_T_LM);
    CHECK(arch == DAK_ARCH_OPT ? lm == NULL : lm && !strcmp(lm, "lm_head.weight"), "%s: lm_head's binding", an);
    const uint32_t B = 2, S = 4, V = (uint32_t)c.vocab;
    dak_eng_ref *rs = NULL, *rc = NULL;
    int ok = dak_eng_ref_create(&rs, &mu, B, S, seed, NULL, &err) == 0 &&
             dak_eng_ref_create(&rc, &mu, B, S, 999 /* unused */, ck, &err) == 0;
    CHECK(ok, "%s refs: %s", an, err.msg);
    float *ls = malloc((size_t)B * V * 4), *lc = malloc((size_t)B * V * 4);
    int32_t tok[2] = {3, 17};
    int same = 1;
    for (uint32_t t = 0; ok && t < S; t++) {
        ok = dak_eng_ref_step(rs, t, tok, ls, &err) == 0 && dak_eng_ref_step(rc, t, tok, lc, &err) == 0;
        same &= ok && !memcmp(ls, lc, (size_t)B * V * 4);
        tok[0] = (int32_t)dak_eng_ref_argmax(ls, V), tok[1] = (int32_t)dak_eng_ref_argmax(ls + V, V);
    }
    CHECK(ok && same, "%s %s, %u of %u layers: logits from the checkpoint differ from the synthetic ones (%s)", an,
          dt == DAK_ST_BF16 ? "BF16" : "F32", layers_used, (unsigned)c.layers, err.msg);
    dak_eng_ref_destroy(rs), dak_eng_ref_destroy(rc), free(ls), free(lc);
    dak_eng_ckpt_close(ck);
}

/* dak_st_write's fill: the source tensors' elements as bf16 (every tensor copied here is BF16) */
typedef struct {
    dak_st *st;
    const dak_st_tensor **src;
} copy_arg;

static int copy_fill(void *arg, size_t i, void *buf, cm_err *e)
{
    const copy_arg *a = arg;
    return dak_st_read_bf16(a->st, a->src[i], 0, dak_st_elems(a->src[i]), buf, e);
}

/* a checkpoint of one model bound to another: the wrong architecture, a wider model, a missing tensor */
static void binding_refusals(void)
{
    dak_model_config co, cl, cw;
    dak_eng_tiny_config(DAK_ARCH_OPT, &co);
    dak_eng_tiny_config(DAK_ARCH_LLAMA, &cl);
    cw = co, cw.hidden = 384, cw.heads = 3, cw.kv_heads = 3;
    dak_eng_model mo, ml, mw;
    cm_err err = {{0}};
    if (dak_eng_model_make(&co, 0, &mo, &err) || dak_eng_model_make(&cl, 0, &ml, &err) ||
        dak_eng_model_make(&cw, 0, &mw, &err)) {
        CHECK(0, "models: %s", err.msg);
        return;
    }
    const char *p = path_of("opt-bf16.safetensors"); /* written by ref_roundtrip */
    dak_eng_ckpt *ck;
    int rc = dak_eng_ckpt_open(&ck, p, &ml, &err);
    CHECK(rc != 0 && strstr(err.msg, "no token embedding"), "OPT checkpoint as Llama: %s", rc ? err.msg : "accepted");
    if (!rc) dak_eng_ckpt_close(ck);
    rc = dak_eng_ckpt_open(&ck, p, &mw, &err);
    CHECK(rc != 0 && strstr(err.msg, "has shape [1000, 256]: expected [1000, 384]"), "a wider model: %s",
          rc ? err.msg : "accepted");
    if (!rc) dak_eng_ckpt_close(ck);
    /* the OPT checkpoint without one layer's fc2 bias: rewritten from the checkpoint's own tensors */
    dak_st *st;
    if (dak_st_open(&st, p, &err)) {
        CHECK(0, "%s", err.msg);
        return;
    }
    size_t n = dak_st_count(st), k = 0;
    dak_st_out *out = calloc(n, sizeof *out);
    const dak_st_tensor **src = calloc(n, sizeof *src);
    for (size_t i = 0; i < n; i++) {
        const dak_st_tensor *t = dak_st_at(st, i);
        if (!strcmp(t->name, "model.decoder.layers.1.fc2.bias")) continue;
        out[k].name = t->name, out[k].dtype = t->dtype, out[k].ndim = t->ndim;
        memcpy(out[k].shape, t->shape, sizeof t->shape);
        src[k++] = t;
    }
    CHECK(k == n - 1, "the bias to leave out is in the checkpoint");
    copy_arg a = {st, src};
    const char *q = path_of("opt-no-bias.safetensors");
    CHECK(dak_st_write(q, out, k, copy_fill, &a, &err) == 0, "rewrite: %s", err.msg);
    rc = dak_eng_ckpt_open(&ck, q, &mo, &err);
    CHECK(rc != 0 && strstr(err.msg, "no tensor 'model.decoder.layers.1.fc2.bias'"), "a missing bias: %s",
          rc ? err.msg : "accepted");
    if (!rc) dak_eng_ckpt_close(ck);
    free(out), free(src);
    dak_st_close(st);
}

/* The packed layout read backwards, element by element: dst element q is block q / 4096 (tile row mt, column block
 * kc), row rr of it, 16-byte position p, element w; it holds source row mt * 64 + rr, chunk kc * 8 + (p ^ (rr % 8)). */
static uint64_t packed_source(uint64_t q, uint32_t K)
{
    const uint64_t b = q / 4096u, rr = q % 4096u / 64u, p = q % 64u / 8u, w = q % 8u;
    const uint64_t mt = b / (K / 64u), kc = b % (K / 64u);
    return (mt * 64u + rr) * K + (kc * 8u + (p ^ (rr % 8u))) * 8u + w;
}

/* rows [r0, r0 + n) of an M x K matrix (src: the whole matrix, element i holding i's hash; NULL: zeros) packed into
 * a dst prefilled with 0xFFFF: each element of the range where the inverse says, the rest still 0xFFFF */
static void pack_case(uint32_t M, uint32_t K, uint64_t r0, uint64_t n, unsigned threads, int zeros)
{
    const size_t e = (size_t)M * K;
    uint16_t *src = malloc(e * 2), *dst = malloc(e * 2);
    for (size_t i = 0; i < e; i++) src[i] = (uint16_t)((i * 2654435761u >> 7) ^ i) | 1u; /* never 0 or 0xFFFF */
    for (size_t i = 0; i < e; i++) src[i] = src[i] == 0xFFFFu ? 0x1234u : src[i];
    memset(dst, 0xFF, e * 2);
    cm_err err = {{0}};
    CHECK(dak_eng_pack_rows(dst, zeros ? NULL : src + r0 * K, r0, n, K, threads, &err) == 0, "pack: %s", err.msg);
    size_t bad = 0, first = e;
    for (size_t q = 0; q < e; q++) {
        const uint64_t s = packed_source(q, K), row = s / K;
        const uint16_t want = row >= r0 && row < r0 + n ? (zeros ? 0 : src[s]) : 0xFFFFu;
        if (dst[q] != want && bad++ == 0) first = q;
    }
    CHECK(bad == 0, "pack %u x %u rows [%llu, %llu) on %u threads%s: %zu elements wrong, the first at %zu", M, K,
          (unsigned long long)r0, (unsigned long long)(r0 + n), threads, zeros ? " (zeros)" : "", bad, first);
    free(src), free(dst);
}

static void host_pack(void)
{
    pack_case(320, 256, 0, 320, 1, 0);   /* whole */
    pack_case(320, 256, 5, 70, 1, 0);    /* a range across tile rows, unaligned at both ends */
    pack_case(192, 64, 63, 2, 1, 0);     /* one block a tile row, a range across one boundary */
    pack_case(1152, 4096, 37, 1100, 4, 0); /* 8.6 MiB: split over 4 threads */
    pack_case(1152, 4096, 0, 1152, 3, 0);
    pack_case(1152, 4096, 100, 1030, 4, 1); /* zeros, on threads */
    pack_case(320, 256, 100, 30, 2, 1);
    cm_err err = {{0}};
    uint16_t d[64];
    CHECK(dak_eng_pack_rows(d, NULL, 0, 1, 100, 1, &err) != 0 && strstr(err.msg, "K = 100"), "K 100: %s", err.msg);
}

/* ---- the layout's one formula (dak/tile_layout.h) against the layout worked out here -------------------------- */

/* Where element (row, col) of a row-major M x K matrix goes, read straight off dak/tiered.h's words, one element at a
 * time: tile row mt = row / 64 starts at element mt * 64 * K; inside it, block col / 64 (8 KiB = 4096 elements) in
 * column order; inside the block, row row % 64 of 64 elements; its 16-byte chunk j = (col % 64) / 8 stored at
 * position swz(j, row % 64) (8 elements a position); then element col % 8 of the chunk.  swz: the right swizzle
 * (j ^ (rr % 8)) or a wrong one, to show that the checks below would catch it. */
typedef uint64_t (*swz_fn)(uint64_t j, uint64_t rr);
static uint64_t swz_right(uint64_t j, uint64_t rr) { return j ^ (rr % 8u); }
static uint64_t swz_none(uint64_t j, uint64_t rr) { return (void)rr, j; }
static uint64_t swz_mod4(uint64_t j, uint64_t rr) { return j ^ (rr % 4u); }      /* a swizzle over 4 rows */
static uint64_t swz_group(uint64_t j, uint64_t rr) { return j ^ (rr / 8u % 8u); } /* by 8-row group, not row */

static uint64_t naive_off(uint64_t row, uint64_t col, uint32_t K, swz_fn swz)
{
    const uint64_t mt = row / 64u, rr = row % 64u, kc = col / 64u, j = col % 64u / 8u;
    return mt * 64u * K + kc * 4096u + rr * 64u + swz(j, rr) * 8u + col % 8u;
}

/* elements of an M x K matrix where the naive layout (with swz) and dak_tile_elem_off disagree, and where
 * dak_eng_pack_rows' output of the whole matrix does not hold at naive_off what the source holds */
static size_t layout_sweep(uint32_t M, uint32_t K, swz_fn swz, size_t *pack_bad)
{
    const size_t e = (size_t)M * K;
    uint16_t *src = malloc(e * 2), *dst = malloc(e * 2);
    for (size_t i = 0; i < e; i++) src[i] = (uint16_t)(i * 40503u ^ i >> 16); /* the first 65536 distinct */
    memset(dst, 0xFF, e * 2);
    cm_err err = {{0}};
    CHECK(dak_eng_pack_rows(dst, src, 0, M, K, 1, &err) == 0, "pack %u x %u: %s", M, K, err.msg);
    size_t bad = 0;
    *pack_bad = 0;
    for (uint64_t r = 0; r < M; r++)
        for (uint64_t c = 0; c < K; c++) {
            const uint64_t o = naive_off(r, c, K, swz);
            bad += dak_tile_elem_off(r, c, K) != o;
            *pack_bad += o >= e || dst[o] != src[r * K + c];
        }
    free(src), free(dst);
    return bad;
}

static void layout_formula(void)
{
    /* By hand (K = 128: two 64 x 64 blocks a tile row; 4096 elements = 512 chunks a block, 8 chunks a block row):
     * (0, 0): block 0, row 0, chunk 0 at 0 ^ 0 = 0                                -> element 0.
     * (1, 0): block 0, row 1 (chunks 8..15), chunk 0 at 0 ^ 1 = 1: chunk 9         -> element 72.
     * (1, 8): chunk 1 of row 1 at 1 ^ 1 = 0: chunk 8                               -> element 64.
     * (3, 70): block 1 (column 70 = 64 + 6), chunk 0 of it, element 6; row 3 at chunk 512 + 24, position 0 ^ 3 = 3:
     *          chunk 539                                                           -> 539 * 8 + 6 = 4318.
     * (65, 127): tile row 1, block 1: block 2 * 1 + 1 = 3 (chunk 1536); row 65 % 64 = 1 (+ 8); column 127: chunk 7
     *          of the block row at 7 ^ 1 = 6, element 7: chunk 1550                -> 1550 * 8 + 7 = 12407.
     * K = 64, (191, 63): the last element of a 192 x 64 matrix; block 2 (chunk 1024), row 63 (+ 504), chunk 7 at
     *          7 ^ 63 % 8 = 0: chunk 1528, element 7                       -> 12231 (in the block's [8192, 12288)). */
    CHECK_EQ_I64(dak_tile_elem_off(0, 0, 128), 0, "(0, 0) K 128");
    CHECK_EQ_I64(dak_tile_elem_off(1, 0, 128), 72, "(1, 0) K 128");
    CHECK_EQ_I64(dak_tile_elem_off(1, 8, 128), 64, "(1, 8) K 128");
    CHECK_EQ_I64(dak_tile_elem_off(3, 70, 128), 4318, "(3, 70) K 128");
    CHECK_EQ_I64(dak_tile_elem_off(65, 127, 128), 12407, "(65, 127) K 128");
    CHECK_EQ_I64(dak_tile_elem_off(191, 63, 64), 12231, "(191, 63) K 64");
    CHECK_EQ_I64(dak_tile_chunk_off(65, 15, 128), 1550, "chunk 15 of row 65, K 128");
    CHECK_EQ_I64(dak_tile_brow_off(65, 1, 128), 1544, "block row of row 65 in block 1, K 128");
    CHECK_EQ_I64(dak_tile_chunk_pos(13, 2), 7, "chunk 2 of row 13: 2 ^ 5");
    /* the hand-computed offsets through the naive layout too, and a wrong swizzle missing one of them */
    CHECK(naive_off(65, 127, 128, swz_right) == 12407 && naive_off(3, 70, 128, swz_right) == 4318, "naive layout");
    CHECK(naive_off(65, 127, 128, swz_none) != 12407, "no swizzle is caught by the hand values");
    /* every element, through the formula and through the CPU packer; the same sweep with a wrong swizzle fails */
    static const uint32_t shapes[][2] = {{64, 64}, {192, 128}, {128, 512}, {320, 256}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const uint32_t M = shapes[s][0], K = shapes[s][1];
        size_t pb;
        const size_t fb = layout_sweep(M, K, swz_right, &pb);
        CHECK(fb == 0 && pb == 0, "%u x %u: %zu elements where the formula, %zu where the packer, differ from it", M,
              K, fb, pb);
        static const swz_fn wrong[] = {swz_none, swz_mod4, swz_group};
        for (size_t w = 0; w < sizeof wrong / sizeof wrong[0]; w++) {
            const size_t wf = layout_sweep(M, K, wrong[w], &pb);
            CHECK(wf > 0 && pb > 0, "%u x %u: wrong swizzle %zu went unnoticed (%zu formula, %zu packer mismatches)", M,
                  K, w, wf, pb);
        }
    }
    /* the grouped form (dak_group_chunk_off): R = 64 is the tile layout; R = 88 on 272 rows (groups of 88, 88, 88
     * and 8 rows) against the groups read off dak/tile_layout.h's words (group g at element g R K, its blocks of
     * rows_g rows in column order, the row's chunk j at j ^ (row % 8)), and every chunk hit once.  By hand, K = 128:
     * row 90 (group 1, row 2 of it) chunk 9 (block 1, chunk 1 at 1 ^ 2 = 3): 88 * 128 / 8 + (1 * 88 + 2) * 8 + 3 =
     * 2131; row 265 (group 3 of 8 rows, row 1) chunk 8 (block 1, chunk 0 at 1): 3 * 88 * 16 + (1 * 8 + 1) * 8 + 1 =
     * 4297. */
    CHECK_EQ_I64(dak_group_chunk_off(90, 9, 128, 272, 88), 2131, "grouped: chunk 9 of row 90, R 88, K 128");
    CHECK_EQ_I64(dak_group_chunk_off(265, 8, 128, 272, 88), 4297, "grouped: chunk 8 of row 265 (the last group)");
    {
        size_t tile_bad = 0, group_bad = 0, hits_bad = 0;
        for (uint64_t r = 0; r < 320; r++)
            for (uint64_t c = 0; c < 256 / 8; c++)
                tile_bad += dak_group_chunk_off(r, c, 256, 320, 64) != dak_tile_chunk_off(r, c, 256);
        const uint32_t M = 272, K = 128, R = 88, cpr = K / 8;
        unsigned char *hit = calloc((size_t)M * cpr, 1);
        for (uint64_t r = 0; r < M; r++)
            for (uint64_t c = 0; c < cpr; c++) {
                const uint64_t g = r / R, rows_g = M - g * R < R ? M - g * R : R, rr = r - g * R;
                const uint64_t naive = g * R * cpr + (c / 8) * rows_g * 8 + rr * 8 + ((c % 8) ^ (rr % 8));
                const uint64_t o = dak_group_chunk_off(r, c, K, M, R);
                group_bad += o != naive;
                if (o < (uint64_t)M * cpr) hit[o]++;
            }
        for (size_t i = 0; i < (size_t)M * cpr; i++) hits_bad += hit[i] != 1;
        free(hit);
        CHECK(tile_bad == 0 && group_bad == 0 && hits_bad == 0,
              "grouped layout: %zu chunks off the tile layout at R 64, %zu off the groups' words at R 88, %zu chunks "
              "not hit exactly once", tile_bad, group_bad, hits_bad);
    }
    /* and the formula against the inverse above (packed_source) on every 7th row of a large shape: it undoes it */
    size_t inv_bad = 0;
    for (uint64_t r = 0; r < 1152; r += 7)
        for (uint64_t c = 0; c < 4096; c++)
            inv_bad += packed_source(dak_tile_elem_off(r, c, 4096), 4096) != r * 4096 + c;
    CHECK(inv_bad == 0, "formula vs the layout's inverse: %zu elements", inv_bad);
}

int main(void)
{
    if (test_tmpdir_make(dir, sizeof dir, "dak-ckpt")) return 1;
    conversions();
    malformed();
    shards();
    writer();
    table(DAK_ARCH_OPT);
    table(DAK_ARCH_LLAMA);
    ref_roundtrip(DAK_ARCH_OPT, DAK_ST_BF16, 2);
    ref_roundtrip(DAK_ARCH_OPT, DAK_ST_F32, 1);
    ref_roundtrip(DAK_ARCH_LLAMA, DAK_ST_BF16, 2);
    ref_roundtrip(DAK_ARCH_LLAMA, DAK_ST_F32, 2);
    binding_refusals();
    parallel_reads();
    host_pack();
    layout_formula();
    test_tmpdir_remove(dir);
    return check_done();
}
