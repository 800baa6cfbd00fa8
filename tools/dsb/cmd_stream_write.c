/* `dsb stream-write`: writes a matrix as a stream file (one pass of STREAM
 * frames, docs/formats.md) for `dsb stream --file` and `dsb stream-send
 * --file`: a generated instance (--n, --instance, --seed), or an instance of
 * dense +-1 couplings from a generator spec or a file that `dsb solve` reads. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "dsb/core.h"
#include "dsb/instances.h"

static const char *P = "dsb stream-write";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb stream-write OUT [--n N --instance mattis|random --seed S]\n"
            "       dsb stream-write OUT --gen SPEC | --from FILE\n"
            "  OUT                  the stream file to write (n ceil(n/32256) frames of 4096 B)\n"
            "  --n, --instance, --seed  a generated instance, as dsb stream takes them\n"
            "  --gen SPEC           an instance of dsb solve's generators (sk:n=N[,seed=S]: dense\n"
            "                       +-1; mattis:n=N) -- the couplings must all be +-1\n"
            "  --from FILE          an instance file that dsb solve reads (Gset/rudy, .mtx,\n"
            "                       .qubo) whose couplings are dense +-1\n"
            "  --quiet              no progress line\n"
            "The run id (printed) names the matrix: a receiver refuses other frames.\n");
}

/* The run id of an instance file: a hash of n and J, so two matrices differ. */
static uint32_t matrix_run_id(const int8_t *J, uint32_t n)
{
    uint64_t h = dsb_mix64(n);
    size_t len = (size_t)n * n, i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, J + i, 8);
        h = dsb_mix64(h ^ w);
    }
    for (; i < len; i++) h = dsb_mix64(h ^ (uint8_t)J[i]);
    return (uint32_t)(h >> 32);
}

int cmd_stream_write(int argc, char **argv)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    stream_matrix sm = {&p, NULL, 0, 0, 0, 0};
    const char *out = NULL, *gen = NULL, *from = NULL;
    int quiet = 0, seed_or_flags = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int tf;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        } else if (!(a[0] == '-' && a[1] == '-')) {
            if (out) {
                fprintf(stderr, "%s: expected one OUT file, got a second one '%s'\n", P, a);
                return 2;
            }
            out = a;
            continue;
        }
        if (!(v = arg_value(P, argc, argv, &i))) return 2;
        if (arg_is(a, "--gen")) {
            gen = v;
        } else if (arg_is(a, "--from")) {
            from = v;
        } else if (!arg_is(a, "--file") && !arg_is(a, "--run-id") &&
                   (tf = stream_matrix_flag(P, a, v, &sm)) != 0) {
            if (tf < 0) return 2;
            seed_or_flags = 1;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (see dsb stream-write --help)\n", P, a);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "%s: expected the OUT file\n", P);
        usage(stderr);
        return 2;
    }
    if ((gen || from) && (seed_or_flags || (gen && from))) {
        fprintf(stderr, "%s: expected one of --gen SPEC, --from FILE, or --n/--instance/--seed\n",
                P);
        return 2;
    }
    cm_err err = {{0}};
    if (!gen && !from) {
        if (dsb_stream_write_instance(&p, out, !quiet, &err)) {
            fprintf(stderr, "%s: %s\n", P, err.msg);
            return 1;
        }
        printf("%s: %s n = %u seed %" PRIu64 ", %" PRIu64 " frames, run id %08x\n", out,
               dsb_stream_instance_name(p.instance), p.n, p.seed, dsb_stream_frames(p.n),
               dsb_stream_params_run_id(&p));
        return 0;
    }
    dsb_instance in;
    if (gen ? dsb_gen_parse(gen, &in, &err) : dsb_read_file(from, &in, &err)) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        return gen ? 2 : 1;
    }
    uint32_t id = matrix_run_id(in.J, in.n);
    int rc = dsb_stream_write_matrix(in.J, in.n, id, out, &err);
    if (rc) {
        fprintf(stderr, "%s: %s: %s\n", P, in.name, err.msg);
    } else {
        printf("%s: %s, n = %u, %" PRIu64 " frames, run id %08x\n", out, in.name, in.n,
               dsb_stream_frames(in.n), id);
        uint32_t nz = 0; /* the streaming solver has no field: say so rather than drop it quietly */
        for (uint32_t i = 0; in.h && i < in.n; i++) nz += in.h[i] != 0;
        if (nz)
            fprintf(stderr, "%s: note: the instance's field h (%u non-zero entries) is not in the "
                            "file: the streaming solver solves h = 0\n", P, nz);
    }
    dsb_instance_free(&in);
    return rc ? 1 : 0;
}
