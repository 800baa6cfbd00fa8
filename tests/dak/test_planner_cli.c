#define _POSIX_C_SOURCE 200809L
/* `dak plan` end to end: usage errors exit 2, bad input and impossible
 * budgets exit 1 with a clear message, a valid plan prints and writes JSON
 * whose figures agree with hand arithmetic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "common/json_read.h"

#ifndef DAK_BIN
#error "DAK_BIN must name the dak executable"
#endif

static char out[1 << 16];

/* runs `dak ARGS 2>&1`, returns the exit status, output in out[] */
static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", DAK_BIN, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define EXPECT(args, code, text)                                                               \
    do {                                                                                       \
        int rc_ = run(args);                                                                   \
        CHECK(rc_ == (code), "dak %s: exit %d, expected %d; output:\n%s", args, rc_, code, out); \
        CHECK(strstr(out, text) != NULL, "dak %s: output lacks '%s':\n%s", args, text, out);   \
    } while (0)

int main(void)
{
    const char *cfg = "--config " DAK_CONFIG_DIR "/opt-30b/config.json";
    char a[1024];
    EXPECT("plan", 2, "expected --config FILE and --batch B");
    snprintf(a, sizeof a, "plan %s --batch 0 --seq 10", cfg);
    EXPECT(a, 2, "--batch: expected an integer in [1, 16777216], got '0'");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 10 --ratio 1.5", cfg);
    EXPECT(a, 2, "--ratio: expected a number in [0, 1], got '1.5'");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 10 --ratio 0.1 --gpu-mem 40GB", cfg);
    EXPECT(a, 2, "expected at most one of --gpu-mem and --ratio");
    snprintf(a, sizeof a, "plan %s --batch 8", cfg);
    EXPECT(a, 2, "expected exactly one of --seq L or --prompt P");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 64 --gen 3", cfg);
    EXPECT(a, 2, "--gen: expected together with --prompt");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 64 --gpu-mem 40XB", cfg);
    EXPECT(a, 2, "--gpu-mem: expected a size");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 64 --bogus", cfg);
    EXPECT(a, 2, "unknown option '--bogus'");
    EXPECT("plan --config /nonexistent.json --batch 8 --seq 64", 1,
           "/nonexistent.json: cannot open");
    snprintf(a, sizeof a, "plan %s --batch 8 --seq 64 --profile /nonexistent-profile.json", cfg);
    EXPECT(a, 1, "/nonexistent-profile.json: cannot open");
    /* resident part at batch 8: 38,363,136 + 2,984,960 = 41,348,096 bytes > 1 MB */
    snprintf(a, sizeof a, "plan %s --batch 8 --prompt 32 --gpu-mem 1MB", cfg);
    EXPECT(a, 1, "impossible budget, expected at least 41348096 bytes");
    /* dak bench gemm: its tile and path flags are checked before any GPU work */
    EXPECT("bench gemm --bm 96", 2, "--bm: expected 0 (auto), 64, 128 or 256, got '96'");
    EXPECT("bench gemm --bn 96", 2, "--bn: expected 0 (auto), 64, 128 or 256, got '96'");
    EXPECT("bench gemm --panel 3", 2, "--panel: expected an integer in [0, 2], got '3'");
    EXPECT("bench gemm --kstep 3", 2, "--kstep: expected 0 (auto), 1, 2 or 4, got '3'");
    EXPECT("bench gemm --tile-align 2", 2, "--tile-align: expected an integer in [0, 1], got '2'");
    EXPECT("bench gemm --stages 1", 2, "--stages: expected 0 (as many as fit) or 2..24, got '1'");
    EXPECT("bench gemm --l2-hints 2", 2, "--l2-hints: expected an integer in [0, 1], got '2'");
    EXPECT("bench gemm --fix-rs x", 2, "--fix-rs: expected an integer in [0, 1], got 'x'");
    EXPECT("bench gemm --rotate x", 2, "--rotate: expected an integer in [0, 1024], got 'x'");
    EXPECT("bench gemm --sections smrate,bogus", 2, "--sections: unknown entry 'bogus'");
    EXPECT("bench gemm --sections ,", 2, "--sections: expected a non-empty list");
    EXPECT("bench gemm --rotate 1025", 2, "--rotate: expected an integer in [0, 1024], got '1025'");

    char json[] = "/tmp/test_planner_cli_XXXXXX";
    int fd = mkstemp(json);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) close(fd);
    /* 40 GB allowed of 60,656,708,608 bytes -> 20,656,708,608 on the host */
    snprintf(a, sizeof a, "plan %s --batch 8 --prompt 32 --gpu-mem 40GB --json %s", cfg, json);
    EXPECT(a, 0, "host must hold 20.657 GB");
    CHECK(strstr(out, "greedy") && strstr(out, "uniform") && strstr(out, "lm_head"),
          "plan table printed");
    jr_doc d;
    cm_err e = {{0}};
    CHECK(jr_parse_file(&d, json, &e) == 0, "plan JSON: %s", e.msg);
    if (d.root) {
        double target, tg, tu, hb;
        const jr_val *g = jr_obj_get(d.root, "greedy"), *u = jr_obj_get(d.root, "uniform");
        CHECK(jr_get_f64(&d, d.root, "target_host_bytes", 1, 0, 1e15, 0, &target, &e) == 0 &&
                  target == 20656708608.0,
              "target %s", e.msg);
        CHECK(jr_get_f64(&d, g, "time_s", 1, 0, 1e3, 0, &tg, &e) == 0 &&
                  jr_get_f64(&d, u, "time_s", 1, 0, 1e3, 0, &tu, &e) == 0 && tg <= tu,
              "greedy no slower than uniform %s", e.msg);
        CHECK(jr_get_f64(&d, g, "host_bytes", 1, 0, 1e15, 0, &hb, &e) == 0 && hb >= target,
              "greedy host bytes cover the target");
        /* at least target / B_h of host reading: 20,656,708,608 / 51.1e9 = 0.4042 s */
        CHECK(tg >= 20656708608.0 / 51.1e9 * (1 - 1e-9), "time below the host-link bound: %g", tg);
        const jr_val *ops = jr_obj_get(d.root, "ops");
        CHECK(ops && ops->type == JR_ARRAY && ops->len == 8, "8 operations in the JSON");
        jr_free(&d);
    }
    remove(json);
    return check_done();
}
