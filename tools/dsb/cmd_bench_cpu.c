/* `dsb bench cpu`: throughput of the CPU reference in couplings per second
 * (B n^2 K coupling terms per solve), per format; a table and JSON. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "common/threads.h"
#include "dsb/instances.h"
#include "dsb/solve.h"

static const char *P = "dsb bench cpu";

int cmd_bench_cpu(int argc, char **argv)
{
    uint32_t n = 1024, threads = 0, repeats = 3;
    dsb_params prm;
    dsb_params_default(&prm);
    const char *json_path = NULL;
    const char *formats = "pm1,ternary,int8";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: dsb bench cpu [--n 1024] [--replicas 8] [--steps 100] [--threads N]\n"
                   "                     [--repeats 3] [--formats pm1,ternary,int8] [--json FILE]\n");
            return 0;
        }
        if (!(v = arg_value(P, argc, argv, &i))) return 2;
        if (arg_is(a, "--n")) {
            if (arg_u32(P, "--n", v, 2, 2048, &n)) return 2;
        } else if (arg_is(a, "--replicas")) {
            if (arg_u32(P, "--replicas", v, 1, 4096, &prm.replicas)) return 2;
        } else if (arg_is(a, "--steps")) {
            if (arg_u32(P, "--steps", v, 1, 1000000, &prm.steps)) return 2;
        } else if (arg_is(a, "--threads")) {
            if (arg_u32(P, "--threads", v, 1, 4096, &threads)) return 2;
        } else if (arg_is(a, "--repeats")) {
            if (arg_u32(P, "--repeats", v, 1, 1000, &repeats)) return 2;
        } else if (arg_is(a, "--formats")) {
            formats = v;
        } else if (arg_is(a, "--json")) {
            json_path = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", P, a);
            return 2;
        }
    }
    if (!threads) threads = cm_online_cpus();
    FILE *jf = NULL;
    json_w w;
    if (json_path) {
        if (!(jf = fopen(json_path, "w"))) {
            fprintf(stderr, "%s: --json: cannot open '%s' for writing\n", P, json_path);
            return 2;
        }
        json_init(&w, jf);
        json_obj_begin(&w);
        json_kv_str(&w, "bench", "dsb bench cpu");
        bench_json_machine(&w);
        json_key(&w, "rows");
        json_arr_begin(&w);
    }
    printf("%-8s %6s %4s %6s %8s %12s %14s\n", "format", "n", "B", "K", "threads", "median s",
           "couplings/s");
    /* each format solves the instance family of Sec. VI-B that uses it */
    static const struct {
        const char *fmt, *gen;
    } fams[] = {{"pm1", "sk"}, {"ternary", "ternary"}, {"int8", "portfolio"}};
    int rc = 0;
    for (size_t f = 0; f < 3; f++) {
        if (!strstr(formats, fams[f].fmt)) continue;
        char spec[64];
        snprintf(spec, sizeof spec, "%s:n=%u", fams[f].gen, n);
        cm_err err = {{0}};
        dsb_instance inst;
        dsb_model m;
        dsb_format want;
        dsb_format_parse(fams[f].fmt, &want);
        if (dsb_gen_parse(spec, &inst, &err) || dsb_model_pack(inst.J, n, want, &m, &err)) {
            fprintf(stderr, "%s: %s: %s\n", P, spec, err.msg);
            rc = 1;
            continue;
        }
        dsb_result r;
        dsb_result_init(&r, n, prm.replicas, 0);
        double t[1000];
        for (uint32_t k = 0; k < repeats; k++) {
            prm.seed = 7919 + k; /* request seed 7919+i (Sec. VI-B) */
            if (dsb_solve_cpu(&m, inst.h, &prm, (int)threads, &r, &err)) {
                fprintf(stderr, "%s: %s\n", P, err.msg);
                rc = 1;
                break;
            }
            t[k] = r.seconds;
        }
        double med = bench_median(t, repeats);
        double cps = (double)prm.replicas * n * n * prm.steps / med;
        printf("%-8s %6u %4u %6u %8u %12.6f %14.4g\n", fams[f].fmt, n, prm.replicas, prm.steps,
               threads, med, cps);
        if (jf) {
            json_obj_begin(&w);
            json_kv_str(&w, "format", fams[f].fmt);
            json_kv_u64(&w, "n", n);
            json_kv_u64(&w, "replicas", prm.replicas);
            json_kv_u64(&w, "steps", prm.steps);
            json_kv_u64(&w, "threads", threads);
            json_kv_f64(&w, "median_s", med);
            json_kv_f64(&w, "couplings_per_s", cps);
            json_obj_end(&w);
        }
        dsb_result_free(&r);
        dsb_model_free(&m);
        dsb_instance_free(&inst);
    }
    if (jf) {
        json_arr_end(&w);
        json_obj_end(&w);
        fclose(jf);
    }
    return rc;
}
