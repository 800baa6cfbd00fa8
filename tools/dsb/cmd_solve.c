/* `dsb solve`: solve one instance (a file or a generator) and print the best
 * energy, the user's objective (cut, QUBO value) and the time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/json.h"
#include "dsb/core.h"
#include "dsb/gpu.h"
#include "dsb/instances.h"
#include "dsb/solve.h"

static const char *P = "dsb solve";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb solve FILE | --gen SPEC [options]\n"
            "  FILE                 Gset/rudy edge list, MatrixMarket (.mtx) or QUBO (.qubo)\n"
            "  --gen SPEC           sk:n=N | ternary:n=N[,density=D] | portfolio:n=N |\n"
            "                       mattis:n=N   (each with optional ,seed=S; default 1000)\n"
            "  --replicas B         replicas (default 8)\n"
            "  --steps K            dSB steps (default 100)\n"
            "  --dt DT              time step (default 1.0)\n"
            "  --xi XI              coupling gain (default 0.5 sqrt(n-1)/||J||_F)\n"
            "  --seed S             initial-state seed (default 1)\n"
            "  --field I            portfolio: use field vector I of the pool (default 0)\n"
            "  --format F           auto|pm1|ternary|int8 (default auto: narrowest that fits)\n"
            "  --backend cpu|gpu    (default cpu)\n"
            "  --sums auto|cuda|tensor  gpu: the coupling sums' engine, same answers (default\n"
            "                       auto = tensor where the request fits it, else cuda;\n"
            "                       tensor: integer mma, at most 32 tiles of 16 rows x 8\n"
            "                       replicas)\n"
            "  --threads N          cpu threads (default: all cores)\n"
            "  --json               print one JSON object instead of text\n"
            "  --spins-out FILE     write the best spins, one +1/-1 per line\n");
}

int cmd_solve(int argc, char **argv)
{
    const char *file = NULL, *gen = NULL, *spins_out = NULL;
    dsb_params prm;
    dsb_params_default(&prm);
    dsb_format fmt = DSB_FMT_AUTO;
    dsb_backend backend = DSB_BACKEND_CPU;
    uint32_t threads = 0, field = 0;
    int json = 0, sums = DSB_GPU_SUMS_AUTO, sums_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        double d;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            if (!(v = arg_value(P, argc, argv, &i))) return 2;
            if (arg_is(a, "--gen")) gen = v;
            else if (arg_is(a, "--spins-out")) spins_out = v;
            else if (arg_is(a, "--replicas")) {
                if (arg_u32(P, "--replicas", v, 1, 1u << 20, &prm.replicas)) return 2;
            } else if (arg_is(a, "--steps")) {
                if (arg_u32(P, "--steps", v, 1, 100000000u, &prm.steps)) return 2;
            } else if (arg_is(a, "--dt")) {
                if (arg_f64(P, "--dt", v, 1e-6, 100.0, &d)) return 2;
                prm.dt = (float)d;
            } else if (arg_is(a, "--xi")) {
                if (arg_f64(P, "--xi", v, 1e-12, 1e6, &d)) return 2;
                prm.xi = (float)d;
            } else if (arg_is(a, "--seed")) {
                if (arg_u64(P, "--seed", v, 0, UINT64_MAX, &prm.seed)) return 2;
            } else if (arg_is(a, "--field")) {
                if (arg_u32(P, "--field", v, 0, 1u << 30, &field)) return 2;
            } else if (arg_is(a, "--threads")) {
                if (arg_u32(P, "--threads", v, 1, 4096, &threads)) return 2;
            } else if (arg_is(a, "--format")) {
                if (dsb_format_parse(v, &fmt)) {
                    fprintf(stderr, "%s: --format: expected auto, pm1, ternary or int8, got '%s'\n",
                            P, v);
                    return 2;
                }
            } else if (arg_is(a, "--sums")) {
                if ((sums = dsb_gpu_sums_parse(v)) < 0) {
                    fprintf(stderr, "%s: --sums: expected auto, cuda or tensor, got '%s'\n", P, v);
                    return 2;
                }
                sums_set = 1;
            } else if (arg_is(a, "--backend")) {
                if (!strcmp(v, "cpu")) backend = DSB_BACKEND_CPU;
                else if (!strcmp(v, "gpu")) backend = DSB_BACKEND_GPU;
                else {
                    fprintf(stderr, "%s: --backend: expected cpu or gpu, got '%s'\n", P, v);
                    return 2;
                }
            } else {
                fprintf(stderr, "%s: unknown option '%s' (see dsb solve --help)\n", P, a);
                return 2;
            }
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "%s: expected one FILE, got a second one '%s'\n", P, a);
            return 2;
        }
    }
    if (sums_set && backend != DSB_BACKEND_GPU) {
        fprintf(stderr, "%s: --sums: applies to --backend gpu only\n", P);
        return 2;
    }
    if (!!file == !!gen) {
        fprintf(stderr, "%s: expected exactly one of FILE or --gen SPEC\n", P);
        usage(stderr);
        return 2;
    }

    cm_err err = {{0}};
    dsb_instance inst;
    if ((gen ? dsb_gen_parse(gen, &inst, &err) : dsb_read_file(file, &inst, &err))) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        return gen ? 2 : 1;
    }
    const int16_t *h = inst.h;
    if (field) {
        if (field >= inst.n_fields) {
            fprintf(stderr, "%s: --field: expected an index below the field pool size %u, got %u\n",
                    P, inst.n_fields, field);
            dsb_instance_free(&inst);
            return 2;
        }
        h = inst.fields + (size_t)field * inst.n;
    }
    dsb_model model;
    if (dsb_model_pack(inst.J, inst.n, fmt, &model, &err)) {
        fprintf(stderr, "%s: %s: %s\n", P, inst.name, err.msg);
        dsb_instance_free(&inst);
        return 1;
    }
    dsb_result res;
    dsb_result_init(&res, inst.n, prm.replicas, 0);
    int rc = backend == DSB_BACKEND_CPU ? dsb_solve_cpu(&model, h, &prm, (int)threads, &res, &err)
                                        : dsb_solve_gpu_ex(&model, h, &prm, sums, &res, &err);
    if (rc) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
    } else {
        double objective = dsb_instance_objective_field(&inst, field, res.best_energy2);
        if (json) {
            json_w w;
            json_init(&w, stdout);
            json_obj_begin(&w);
            json_kv_str(&w, "instance", inst.name);
            json_kv_u64(&w, "n", inst.n);
            json_kv_str(&w, "format", dsb_format_name(model.format));
            json_kv_str(&w, "backend", backend == DSB_BACKEND_CPU ? "cpu" : "gpu");
            json_kv_u64(&w, "replicas", prm.replicas);
            json_kv_u64(&w, "steps", prm.steps);
            json_kv_f64(&w, "dt", prm.dt);
            json_kv_f64(&w, "xi", dsb_effective_xi(&model, &prm));
            json_kv_u64(&w, "seed", prm.seed);
            json_kv_i64(&w, "best_energy2", res.best_energy2);
            json_kv_f64(&w, "best_energy", (double)res.best_energy2 / 2.0);
            json_kv_u64(&w, "best_replica", res.best_replica);
            json_kv_str(&w, "objective_kind", dsb_objective_name(inst.objective));
            json_kv_f64(&w, "objective", objective);
            if (inst.has_ground) json_kv_i64(&w, "ground_energy2", inst.ground_energy2);
            json_kv_f64(&w, "seconds", res.seconds);
            json_key(&w, "replica_energy2");
            json_arr_begin(&w);
            for (uint32_t b = 0; b < prm.replicas; b++) json_i64(&w, res.energy2[b]);
            json_arr_end(&w);
            json_key(&w, "spins_hex");
            json_arr_begin(&w);
            for (uint32_t k = 0; k < model.words; k++) {
                char hex[16];
                snprintf(hex, sizeof hex, "%08x", res.best_spins[k]);
                json_str(&w, hex);
            }
            json_arr_end(&w);
            json_obj_end(&w);
        } else {
            printf("instance      %s\n", inst.name);
            printf("n             %u\n", inst.n);
            printf("format        %s\n", dsb_format_name(model.format));
            printf("backend       %s\n", backend == DSB_BACKEND_CPU ? "cpu" : "gpu");
            printf("replicas      %u\nsteps         %u\n", prm.replicas, prm.steps);
            printf("xi            %.6g\ndt            %g\n", (double)dsb_effective_xi(&model, &prm),
                   (double)prm.dt);
            printf("best energy   %.1f (2E = %" PRId64 ", replica %u)\n",
                   (double)res.best_energy2 / 2.0, res.best_energy2, res.best_replica);
            if (inst.objective != DSB_OBJ_ISING)
                printf("%-13s %.10g\n", dsb_objective_name(inst.objective), objective);
            if (inst.has_ground)
                printf("ground state  2E = %" PRId64 " (%s)\n", inst.ground_energy2,
                       inst.ground_energy2 == res.best_energy2 ? "reached" : "not reached");
            printf("time          %.6f s\n", res.seconds);
        }
        cm_err werr = {{0}};
        if (spins_out && dsb_write_spins(spins_out, res.best_spins, inst.n, &werr)) {
            fprintf(stderr, "%s: --spins-out: %s\n", P, werr.msg);
            rc = -1;
        }
    }
    dsb_result_free(&res);
    dsb_model_free(&model);
    dsb_instance_free(&inst);
    return rc ? 1 : 0;
}
