/* dak ckpt: checkpoints for the inference engine (pure C, no GPU needed).
 *   check: binds a checkpoint (safetensors, the Hugging Face layout) to a model and lists what the engine reads;
 *   synth: writes a model's synthetic parameters as a checkpoint (to try the checkpoint path without a download);
 *   read:  reads a whole checkpoint as the engine loads it and measures the rate (threads, GB, seconds, GB/s). */
#define _POSIX_C_SOURCE 200809L /* stat */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "dak/engine.h"
#include "model_args.h"

static const char *prog = "dak ckpt";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak ckpt check (--model CONFIG | --tiny opt|llama) [--weights PATH] [--layers N]\n"
            "       dak ckpt synth (--model CONFIG | --tiny opt|llama) --out FILE [--dtype bf16|f32] [--layers N]\n"
            "                      [--seed S]\n"
            "       dak ckpt read --weights PATH [--threads N] [--json FILE]\n\n"
            "  check            bind a checkpoint to the model and list every tensor the engine reads (its name,\n"
            "                   type, shape and bytes); exits 1 if one is missing or of the wrong shape or type\n"
            "  synth            write the model's synthetic parameters (dak decode's, same seed) as one safetensors\n"
            "                   file under the Hugging Face names\n"
            "  read             read every BF16 / F16 / F32 tensor as bf16, in file order, 32 MiB at a time (the\n"
            "                   engine's load buffer); print threads, GB, seconds (inside the reads) and GB/s, and a\n"
            "                   hash of the bf16 values (the same for any --threads); progress on stderr\n"
            "  --model CONFIG   a Hugging Face config.json, or a folder holding one (and, for check, its checkpoint)\n"
            "  --tiny ARCH      the test model instead (dak decode --tiny)\n"
            "  --weights PATH   a .safetensors file, or a folder with model.safetensors.index.json (shards) or\n"
            "                   model.safetensors (default: the --model folder's)\n"
            "  --layers N       the first N layers only\n"
            "  --out FILE       the file to write\n"
            "  --dtype T        bf16 (default) or f32: the types that hold the synthetic values exactly\n"
            "  --seed S         the synthetic parameters' seed (default 1, as dak decode's)\n"
            "  --threads N      read: the most threads one read uses (0, the default: min(8, online CPUs); 1: one\n"
            "                   thread); reads of 8 MiB and more are split into pieces of at least 2 MiB\n"
            "  --json FILE      read: the measurement as JSON ('-': standard output)\n");
}

/* ---- read: the rate at which a checkpoint loads ----------------------------------------------- */

#define READ_CHUNK ((uint64_t)32 << 20) /* bf16 bytes one read fills: the engine's load buffer (engine.cu) */

/* file order (shard, then offset): the reads walk each file front to back */
static int by_place(const void *a, const void *b)
{
    const dak_st_tensor *x = *(const dak_st_tensor *const *)a, *y = *(const dak_st_tensor *const *)b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* FNV-1a steps over 8-byte words in four interleaved lanes (one chain of multiplies ran at ~2.4 GB/s, slower than
 * the reads it checks), a short tail zero-padded into lane 0, the lanes folded into the result: equal for runs that
 * read the same values */
static uint64_t hash_words(uint64_t h, const uint8_t *p, size_t n)
{
    const uint64_t prime = 0x100000001b3ull;
    uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3}, w;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) {
            memcpy(&w, p + i + 8 * l, 8);
            lane[l] = (lane[l] ^ w) * prime;
        }
    for (; i < n; i += 8) {
        w = 0;
        memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        lane[0] = (lane[0] ^ w) * prime;
    }
    for (int l = 1; l < 4; l++) lane[0] = (lane[0] ^ lane[l]) * prime;
    return lane[0];
}

typedef struct {
    uint64_t bytes, reads, split, hash; /* file bytes read; reads; of them split across threads; bf16 values' hash */
    double seconds;                     /* inside the reads only (not the hash) */
} read_totals;

/* Tensors t[0..n) (total file bytes) into buf chunk by chunk as the engine's put_bf16 does: whole rows, at most
 * READ_CHUNK bytes of bf16 a read. */
static int read_tensors(const dak_st *st, const dak_st_tensor *const *t, size_t n, uint64_t total, uint16_t *buf,
                        read_totals *r, cm_err *err)
{
    bench_progress_t line;
    bench_progress_start(&line, "dak ckpt read: MB", total / 1000000);
    memset(r, 0, sizeof *r);
    r->hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        const uint64_t el = dak_st_elems(t[i]), eb = t[i]->elem_bytes;
        const uint64_t row = t[i]->ndim >= 2 && t[i]->shape[0] ? el / t[i]->shape[0] : el;
        const uint64_t step = row && row * 2 <= READ_CHUNK ? READ_CHUNK / 2 / row * row : READ_CHUNK / 2;
        for (uint64_t first = 0; first < el; first += step) {
            const uint64_t k = el - first < step ? el - first : step;
            const double t0 = bench_now_s();
            if (dak_st_read_bf16(st, t[i], first, k, buf, err)) return -1;
            r->seconds += bench_now_s() - t0;
            r->reads++, r->split += dak_st_read_pieces(k * eb) > 1, r->bytes += k * eb;
            r->hash = hash_words(r->hash, (const uint8_t *)buf, (size_t)k * 2);
            bench_progress(&line, r->bytes / 1000000);
        }
    }
    if (line.last > line.t0) bench_progress_end(&line, r->bytes / 1000000); /* only after a progress line */
    return 0;
}

static void read_json(FILE *f, const char *weights, const dak_st *st, uint32_t files, size_t tensors, size_t skipped,
                      uint32_t threads_flag, const read_totals *r, double wall)
{
    json_w w;
    json_init(&w, f);
    json_obj_begin(&w);
    json_kv_str(&w, "bench", "dak ckpt read");
    json_kv_str(&w, "weights", weights);
    json_kv_str(&w, "first_file", dak_st_file(st, 0));
    json_kv_u64(&w, "files", files);
    json_kv_u64(&w, "tensors_read", tensors);
    json_kv_u64(&w, "tensors_skipped", skipped);
    json_kv_u64(&w, "threads", dak_st_threads());
    json_kv_u64(&w, "threads_flag", threads_flag);
    json_kv_u64(&w, "chunk_bytes", READ_CHUNK);
    json_kv_u64(&w, "parallel_min_bytes", DAK_ST_PARALLEL_MIN);
    json_kv_u64(&w, "piece_min_bytes", DAK_ST_PIECE_MIN);
    json_kv_u64(&w, "reads", r->reads);
    json_kv_u64(&w, "reads_split", r->split);
    json_kv_u64(&w, "bytes", r->bytes);
    json_kv_f64(&w, "gb", r->bytes / 1e9);
    json_kv_f64(&w, "seconds", r->seconds);
    json_kv_f64(&w, "gb_per_s", r->seconds > 0 ? r->bytes / 1e9 / r->seconds : 0.0);
    json_kv_f64(&w, "wall_seconds", wall);
    char hash[24];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->hash);
    json_kv_str(&w, "bf16_hash", hash);
    json_kv_str(&w, "note", "seconds: inside dak_st_read_bf16 only; tensors in file order, whole rows, at most "
                            "chunk_bytes of bf16 a read (the engine's load buffer); page cache as found");
    bench_json_machine(&w); /* flat, as the other tools' JSON */
    json_obj_end(&w);
    fputc('\n', f);
}

/* dak ckpt read, its flags parsed by cmd_ckpt */
static int ckpt_read(const char *weights, uint32_t threads, const char *json_path)
{
    struct stat sb;
    if (!weights || stat(weights, &sb)) {
        fprintf(stderr, "%s read: --weights: %s%s%s; expected a .safetensors file or a folder holding "
                        "model.safetensors.index.json or model.safetensors\n",
                prog, weights ? "'" : "missing", weights ? weights : "", weights ? "' does not exist" : "");
        return 2;
    }
    cm_err err = {{0}};
    if (dak_st_set_threads(threads, &err)) {
        fprintf(stderr, "%s read: --threads: %s\n", prog, err.msg);
        return 2;
    }
    dak_st *st;
    if (dak_st_open(&st, weights, &err)) {
        fprintf(stderr, "%s read: %s\n", prog, err.msg);
        return 1;
    }
    FILE *jf = NULL;
    if (json_path && !(jf = strcmp(json_path, "-") ? fopen(json_path, "w") : stdout)) {
        fprintf(stderr, "%s read: --json: cannot write '%s'\n", prog, json_path);
        dak_st_close(st);
        return 1;
    }
    const size_t count = dak_st_count(st);
    const dak_st_tensor **order = cm_malloc((count ? count : 1) * sizeof *order);
    size_t n = 0, skipped = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        const dak_st_tensor *t = dak_st_at(st, i);
        if (t->dtype == DAK_ST_OTHER) skipped++;
        else order[n++] = t, total += t->bytes;
    }
    qsort(order, n, sizeof *order, by_place);
    uint32_t files = 0;
    while (dak_st_file(st, files)) files++;
    uint16_t *buf = cm_malloc(READ_CHUNK);
    memset(buf, 0, READ_CHUNK); /* its pages mapped before the clock starts, as the engine's pinned buffer's are */
    printf("%s: %zu tensors in %u file%s, %.3f GB; read as bf16, up to %u thread%s a read\n", weights, n, files,
           files == 1 ? "" : "s", total / 1e9, dak_st_threads(), dak_st_threads() == 1 ? "" : "s");
    if (skipped) printf("  %zu tensors of other types (integers, fp64, fp8) not read\n", skipped);
    read_totals r;
    const double w0 = bench_now_s();
    int rc = read_tensors(st, order, n, total, buf, &r, &err);
    const double wall = bench_now_s() - w0;
    if (rc) {
        fprintf(stderr, "%s read: %s\n", prog, err.msg);
    } else {
        printf("%8s %10s %10s %8s\n", "threads", "GB", "seconds", "GB/s");
        printf("%8u %10.3f %10.3f %8.3f\n", dak_st_threads(), r.bytes / 1e9, r.seconds,
               r.seconds > 0 ? r.bytes / 1e9 / r.seconds : 0.0);
        printf("%llu reads of at most 32 MiB of bf16, %llu of them split across threads; bf16 values' hash %016llx\n",
               (unsigned long long)r.reads, (unsigned long long)r.split, (unsigned long long)r.hash);
        if (jf) read_json(jf, weights, st, files, n, skipped, threads, &r, wall);
    }
    if (jf && jf != stdout) fclose(jf);
    if (rc && jf && jf != stdout) remove(json_path); /* no record of a read that failed */
    free(buf), free(order);
    dak_st_close(st);
    return rc ? 1 : 0;
}

int cmd_ckpt(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    const int check = !strcmp(sub, "check"), synth = !strcmp(sub, "synth"), read = !strcmp(sub, "read");
    if (!check && !synth && !read) {
        fprintf(stderr, "%s: unknown subcommand '%s': expected check, synth or read\n", prog, sub);
        usage(stderr);
        return 2;
    }
    const char *model = NULL, *tiny = NULL, *weights = NULL, *out = NULL, *dtype = "bf16", *json_path = NULL;
    uint32_t layers = 0, threads = 0;
    uint64_t seed = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!(v = arg_value(prog, argc, argv, &i))) return 2;
        if (arg_is(a, "--model") && !read) model = v;
        else if (arg_is(a, "--tiny") && !read) tiny = v;
        else if (arg_is(a, "--weights") && !synth) weights = v;
        else if (arg_is(a, "--out") && synth) out = v;
        else if (arg_is(a, "--dtype") && synth) dtype = v;
        else if (arg_is(a, "--json") && read) json_path = v;
        else if (arg_is(a, "--layers") && !read) {
            if (arg_u32(prog, "--layers", v, 1, 100000, &layers)) return 2;
        } else if (arg_is(a, "--threads") && read) {
            if (arg_u32(prog, "--threads", v, 0, DAK_ST_MAX_THREADS, &threads)) return 2;
        } else if (arg_is(a, "--seed") && synth) {
            if (arg_u64(prog, "--seed", v, 0, UINT64_MAX, &seed)) return 2;
        } else {
            fprintf(stderr, "%s %s: unknown option '%s': expected one of the options below\n", prog, sub, a);
            usage(stderr);
            return 2;
        }
    }
    if (read) return ckpt_read(weights, threads, json_path);
    dak_eng_model m;
    char label[4096];
    if (model_from_args(prog, model, tiny, layers, &m, label, sizeof label)) return 2;
    cm_err err = {{0}};
    if (synth) {
        if (!out) {
            fprintf(stderr, "%s synth: expected --out FILE\n", prog);
            return 2;
        }
        if (strcmp(dtype, "bf16") && strcmp(dtype, "f32")) {
            fprintf(stderr, "%s synth: --dtype: expected bf16 or f32, got '%s'\n", prog, dtype);
            return 2;
        }
        if (dak_eng_ckpt_write_synthetic(&m, seed, strcmp(dtype, "f32") ? DAK_ST_BF16 : DAK_ST_F32, out, 1, &err)) {
            fprintf(stderr, "%s synth: %s\n", prog, err.msg);
            return 1;
        }
        printf("%s: the synthetic parameters of %s (%llu layers, seed %llu) as %s\n", out, label,
               (unsigned long long)m.cfg.layers, (unsigned long long)seed, dtype);
        return 0;
    }
    if (!weights && !model) {
        fprintf(stderr, "%s check: expected --weights PATH (or a --model folder holding a checkpoint)\n", prog);
        return 2;
    }
    dak_eng_ckpt *ck;
    int rc = weights_from_args(prog, weights, model, &m, &ck);
    if (rc) return rc == 2 && weights ? 1 : rc;
    if (!ck) {
        fprintf(stderr, "%s check: no checkpoint in '%s' (model.safetensors.index.json or model.safetensors)\n", prog,
                model);
        return 1;
    }
    const dak_st *st = dak_eng_ckpt_file(ck);
    printf("%s bound to %s: %zu tensors in the checkpoint\n", label, dak_st_file(st, 0), dak_st_count(st));
    printf("  %-8s %-56s %-5s %-16s %10s\n", "tensor", "name", "type", "shape", "MB");
    double bytes = 0;
    size_t used = 0;
    for (uint32_t t = 1; t < DAK_ENG_T_LAYER0 + 32u * (uint32_t)m.cfg.layers; t++) {
        const char *name = dak_eng_ckpt_name(ck, t);
        if (!name || (t == DAK_ENG_T_LM && !strcmp(name, dak_eng_ckpt_name(ck, DAK_ENG_T_EMBED)))) continue; /* tied */
        const dak_st_tensor *x = dak_st_find(st, name);
        char shape[48];
        if (x->ndim == 2) snprintf(shape, sizeof shape, "[%llu, %llu]", (unsigned long long)x->shape[0],
                                   (unsigned long long)x->shape[1]);
        else snprintf(shape, sizeof shape, "[%llu]", (unsigned long long)x->shape[0]);
        printf("  %-8u %-56s %-5s %-16s %10.2f\n", t, name, x->dtype_name, shape, x->bytes / 1e6);
        bytes += (double)x->bytes, used++;
    }
    printf("%zu tensors the engine reads, %.3f GB (of %zu in the checkpoint)\n", used, bytes / 1e9,
           dak_st_count(st));
    dak_eng_ckpt_close(ck);
    return 0;
}
