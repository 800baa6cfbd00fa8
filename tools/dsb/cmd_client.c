/* `dsb client`: uploads a model and drives the service in closed loop
 * (1/4/16/64 outstanding) or open loop (Poisson arrivals), seed 000 Sec. VI-C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "dsb/client.h"
#include "dsb/instances.h"
#include "dsb/model.h"

static const char *P = "dsb client";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb client [options] (--closed W | --rate R)\n"
            "transport:\n"
            "  --transport udp|packet  (default udp)\n"
            "  --server ADDR           udp: server address (default 127.0.0.1)\n"
            "  --port P                udp: server port (default %u)\n"
            "  --iface IF              packet: interface (default lo)\n"
            "  --mac MAC               packet: own MAC (default: the interface's; on lo\n"
            "                          02:00:00:00:00:02)\n"
            "  --server-mac MAC        packet: the server's MAC (default 02:00:00:00:00:01)\n"
            "model:\n"
            "  --gen SPEC              sk:n=N | ternary:n=N[,density=D] | portfolio:n=N |\n"
            "                          mattis:n=N (seed defaults to 1000+model id)\n"
            "                          (default portfolio:n=128, the reference request)\n"
            "  --file PATH             read the model from a Gset/.mtx/.qubo file instead\n"
            "  --format F              auto|pm1|ternary|int8 (default auto)\n"
            "  --model-id M            store slot 0..63 (default 0)\n"
            "  --generation G          model generation (default: from the clock)\n"
            "  --no-upload             use the model already on the server (same spec!)\n"
            "request (defaults: the reference request INT8 n=128 B=8 K=100):\n"
            "  --steps K  --replicas B  --dt DT (1.0)  --xi XI (0 = model default)\n"
            "  --seed-base S           request i uses seed S+i (default 7919)\n"
            "  --no-field              send no field (h = 0) even if the instance has one\n"
            "load:\n"
            "  --closed W              closed loop with W outstanding requests (1, 4, 16, 64)\n"
            "  --rate R                open loop, Poisson arrivals at R requests/s (e.g. 2k)\n"
            "  --requests N            measured requests (default 10000)\n"
            "  --warmup N              discarded first requests (default 1000)\n"
            "  --drain S               wait for replies after the last send (default 2)\n"
            "  --energy-checks N       recompute 2E for the first N replies (default 3000)\n"
            "  --ref-checks N          CPU-reference solve of the first N (default 20)\n"
            "  --json                  print the whole record as JSON on stdout\n"
            "  --progress              progress line on stderr\n",
            DSB_WIRE_DEFAULT_PORT);
}

int cmd_client(int argc, char **argv)
{
    dsb_transport_config tc;
    memset(&tc, 0, sizeof tc);
    tc.kind = "udp";
    tc.peer_addr = "127.0.0.1";
    tc.peer_port = DSB_WIRE_DEFAULT_PORT;
    tc.bind_port = 0;
    const char *gen = NULL, *file = NULL;
    dsb_format fmt = DSB_FMT_AUTO;
    uint32_t model_id = 0, generation = 0;
    int upload = 1, json = 0, no_field = 0;
    dsb_load_config lc;
    memset(&lc, 0, sizeof lc);
    lc.req.steps = 100;
    lc.req.replicas = 8;
    lc.req.dt = 1.0f;
    lc.seed_base = 7919;
    lc.requests = 10000;
    lc.warmup = 1000;
    lc.drain_s = 2.0;
    lc.energy_checks = 3000;
    lc.ref_checks = 20;
    int have_mode = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        double d;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--progress")) {
            lc.progress = 1;
        } else if (!strcmp(a, "--no-upload")) {
            upload = 0;
        } else if (!strcmp(a, "--no-field")) {
            no_field = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            if (!(v = arg_value(P, argc, argv, &i))) return 2;
            int tf = transport_flag(P, a, v, &tc, 1);
            if (tf < 0) return 2;
            if (tf > 0) continue; /* --transport --port --iface --mac ... */
            if (arg_is(a, "--gen")) gen = v;
            else if (arg_is(a, "--file")) file = v;
            else if (arg_is(a, "--format")) {
                if (dsb_format_parse(v, &fmt)) {
                    fprintf(stderr, "%s: --format: expected auto, pm1, ternary or int8, got '%s'\n",
                            P, v);
                    return 2;
                }
            } else if (arg_is(a, "--model-id")) {
                if (arg_u32(P, "--model-id", v, 0, DSB_STORE_SLOTS - 1, &model_id)) return 2;
            } else if (arg_is(a, "--generation")) {
                if (arg_u32(P, "--generation", v, 1, UINT32_MAX, &generation)) return 2;
            } else if (arg_is(a, "--steps")) {
                if (arg_u32(P, "--steps", v, 1, 1u << 30, &lc.req.steps)) return 2;
            } else if (arg_is(a, "--replicas")) {
                if (arg_u32(P, "--replicas", v, 1, 1u << 20, &lc.req.replicas)) return 2;
            } else if (arg_is(a, "--dt")) {
                if (arg_f64(P, "--dt", v, 1e-6, 100.0, &d)) return 2;
                lc.req.dt = (float)d;
            } else if (arg_is(a, "--xi")) {
                if (arg_f64(P, "--xi", v, 0.0, 1e6, &d)) return 2;
                lc.req.xi = (float)d;
            } else if (arg_is(a, "--seed-base")) {
                if (arg_u64(P, "--seed-base", v, 0, UINT64_MAX / 2, &lc.seed_base)) return 2;
            } else if (arg_is(a, "--closed")) {
                if (arg_u32(P, "--closed", v, 1, 4096, &lc.outstanding)) return 2;
                have_mode++;
            } else if (arg_is(a, "--rate")) {
                if (arg_f64(P, "--rate", v, 1.0, 1e8, &lc.rate)) return 2;
                have_mode++;
            } else if (arg_is(a, "--requests")) {
                if (arg_u64(P, "--requests", v, 1, 100000000ull, &lc.requests)) return 2;
            } else if (arg_is(a, "--warmup")) {
                if (arg_u64(P, "--warmup", v, 0, 100000000ull, &lc.warmup)) return 2;
            } else if (arg_is(a, "--drain")) {
                if (arg_f64(P, "--drain", v, 0.01, 3600, &lc.drain_s)) return 2;
            } else if (arg_is(a, "--energy-checks")) {
                if (arg_u32(P, "--energy-checks", v, 0, UINT32_MAX, &lc.energy_checks)) return 2;
            } else if (arg_is(a, "--ref-checks")) {
                if (arg_u32(P, "--ref-checks", v, 0, 100000, &lc.ref_checks)) return 2;
            } else {
                fprintf(stderr, "%s: unknown option '%s'\n", P, a);
                usage(stderr);
                return 2;
            }
        } else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", P, a);
            usage(stderr);
            return 2;
        }
    }
    if (have_mode != 1) {
        fprintf(stderr, "%s: give exactly one of --closed W or --rate R\n", P);
        usage(stderr);
        return 2;
    }
    if (gen && file) {
        fprintf(stderr, "%s: give either --gen or --file, not both\n", P);
        return 2;
    }
    if (strcmp(tc.kind, "udp") != 0) tc.peer_addr = NULL;

    /* the model: seed 1000 + m unless the spec names one (Sec. VI-B) */
    cm_err err;
    dsb_instance inst;
    if (file) {
        if (dsb_read_file(file, &inst, &err)) {
            fprintf(stderr, "%s: %s\n", P, err.msg);
            return 1;
        }
    } else {
        char spec[256];
        const char *g = gen ? gen : "portfolio:n=128";
        if (strstr(g, "seed="))
            snprintf(spec, sizeof spec, "%s", g);
        else
            snprintf(spec, sizeof spec, "%s,seed=%u", g, 1000u + model_id);
        if (dsb_gen_parse(spec, &inst, &err)) {
            fprintf(stderr, "%s: --gen: %s\n", P, err.msg);
            return 2;
        }
    }
    dsb_model m;
    if (dsb_model_pack(inst.J, inst.n, fmt, &m, &err)) {
        fprintf(stderr, "%s: %s: %s\n", P, inst.name, err.msg);
        dsb_instance_free(&inst);
        return 1;
    }
    /* fields: the portfolio pool, else the instance's own h if non-zero */
    int16_t *fields = NULL;
    uint32_t n_fields = 0;
    if (!no_field) {
        if (inst.n_fields && inst.fields) {
            n_fields = inst.n_fields;
            fields = inst.fields;
        } else {
            for (uint32_t i = 0; i < inst.n; i++)
                if (inst.h[i]) {
                    n_fields = 1;
                    fields = inst.h;
                    break;
                }
        }
    }
    lc.fields = fields;
    lc.n_fields = n_fields;
    lc.req.model_id = (uint16_t)model_id;
    lc.req.n = m.n;

    int rc = 1;
    dsb_client *c = NULL;
    if (dsb_client_open(&tc, &c, &err)) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        goto out;
    }
    dsb_upload_report up = {0};
    if (upload) {
        if (dsb_client_upload(c, &m, (uint16_t)model_id, generation, NULL, &up, &err)) {
            fprintf(stderr, "%s: %s\n", P, err.msg);
            goto out;
        }
        fprintf(stderr, "%s: uploaded %s (%s, %zu bytes) to model %u generation %u in %.1f ms, "
                        "%u pass(es)\n",
                P, inst.name, dsb_format_name(m.format), m.packed_bytes, model_id, up.generation,
                up.seconds * 1e3, up.passes);
        lc.req.generation = 0; /* solve against whatever is current (ours) */
    }
    dsb_load_report rep;
    if (dsb_client_run(c, &m, &lc, &rep, &err)) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        goto out;
    }
    if (json) {
        json_w w;
        json_init(&w, stdout);
        json_obj_begin(&w);
        json_kv_str(&w, "tool", "dsb client");
        json_kv_str(&w, "transport", tc.kind);
        json_kv_str(&w, "model", inst.name);
        json_kv_str(&w, "format", dsb_format_name(m.format));
        json_kv_u64(&w, "generation", up.generation);
        json_kv_u64(&w, "fields", n_fields);
        bench_json_machine(&w);
        json_key(&w, "load");
        dsb_load_report_json(&w, &lc, &rep);
        json_obj_end(&w);
        fprintf(stdout, "\n");
    } else {
        fprintf(stdout, "model %s (%s), fields %u\n", inst.name, dsb_format_name(m.format),
                n_fields);
        dsb_load_report_print(stdout, &lc, &rep);
    }
    rc = (rep.energy_mismatch || rep.ref_mismatch) ? 1 : 0;
    if (rc) fprintf(stderr, "%s: verification FAILED (energy %llu, reference %llu mismatches)\n",
                    P, (unsigned long long)rep.energy_mismatch,
                    (unsigned long long)rep.ref_mismatch);
out:
    dsb_client_close(c);
    dsb_model_free(&m);
    dsb_instance_free(&inst);
    return rc;
}
