/* Planner optimality (seed 003, Sec. 4.2.2 and Appendix A):
 *  - on random small sets of operations (memory-bound, mixed and
 *    compute-bound; repeats; partial last tiles) the greedy plan is compared
 *    with the optimum found by exhaustive search over every whole-unit plan
 *    that covers the target;
 *  - the uniform plan is never better, and strictly worse in the paper's
 *    regions 1 and 2; the greedy time matches Theorems 1-3 in closed form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dak/planner.h"

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static double urand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static uint64_t irand(uint64_t lo, uint64_t hi) { return lo + rnd() % (hi - lo + 1); }

/* Reference time of one instance, written out from the model:
 * max(T_comp, host bytes / B_h, HBM bytes / B_g) (read fraction applied). */
static double ref_time_inst(const dak_op *op, uint64_t q, double bh, double bg)
{
    uint64_t rows = q * op->unit_rows < op->m ? q * op->unit_rows : op->m;
    double host = (double)rows * op->row_bytes, all = (double)op->m * op->row_bytes;
    double t = op->t_comp, th = host * op->read_frac / bh, tg = (all - host) * op->read_frac / bg;
    return fmax(t, fmax(th, tg));
}

/* Exhaustive search over every per-instance distribution: each instance
 * gets any count in [0, units], so the even spread is not assumed. */
typedef struct {
    const dak_op *ops;
    size_t n;
    double bh, bg, target;
    double best;  /* min time over plans covering the target */
    double free_min; /* min time over all plans (no budget) */
} search;

static void rec(search *s, size_t i, uint32_t inst, double t, double host)
{
    if (i == s->n) {
        if (t < s->free_min) s->free_min = t;
        if (host >= s->target * (1 - 1e-12) && t < s->best) s->best = t;
        return;
    }
    const dak_op *op = &s->ops[i];
    for (uint64_t q = 0; q <= op->units; q++) {
        uint64_t rows = q * op->unit_rows < op->m ? q * op->unit_rows : op->m;
        double hb = (double)rows * op->row_bytes;
        double ti = ref_time_inst(op, q, s->bh, s->bg);
        if (inst + 1 < op->repeat) rec(s, i, inst + 1, t + ti, host + hb);
        else rec(s, i + 1, 0, t + ti, host + hb);
    }
}

static void make_op(dak_op *op, int idx, int equal_units, double bh, double bg)
{
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "op%d", idx);
    op->kind = DAK_OP_LINEAR;
    op->repeat = (uint32_t)irand(1, 2);
    op->units = irand(1, op->repeat == 1 ? 6 : 3);
    if (equal_units) {
        op->unit_rows = 4;
        op->m = op->units * 4;
        op->row_bytes = 250.0;
    } else {
        static const uint64_t ur[] = {1, 4, 128};
        op->unit_rows = ur[irand(0, 2)];
        /* a partial last tile only without repeats: the model spreads a count of
         * units evenly over the instances, which is the best split when an
         * operation's units are equal (true of every repeated matrix in the
         * OPT and Llama configs: hidden and ffn sizes are multiples of 128) */
        op->m = op->unit_rows * (op->units - 1) +
                (op->repeat == 1 ? irand(1, op->unit_rows) : op->unit_rows);
        op->row_bytes = (double)irand(100, 5000);
    }
    op->read_frac = irand(0, 4) == 0 ? 0.25 : 1.0;
    double c = (double)op->m * op->row_bytes * op->read_frac;
    switch (irand(0, 3)) {
    case 0: op->t_comp = 0; break;                                         /* memory */
    case 1: op->t_comp = urand() * c / (bh + bg); break;                   /* memory */
    case 2: op->t_comp = c / (bh + bg) + urand() * (c / bg - c / (bh + bg)); break; /* mixed */
    default: op->t_comp = c / bg * (1 + 4 * urand()); break;               /* compute */
    }
    op->flops = op->t_comp * 1e12;
}

static void test_random(int equal_units, int cases)
{
    int exact = 0, covered_cases = 0, phase3 = 0;
    double worst = 0; /* largest (greedy - optimum) / optimum */
    for (int c = 0; c < cases; c++) {
        double bg = 1000.0, bh = bg * (0.05 + 0.5 * urand());
        size_t n = (size_t)irand(2, 4);
        dak_op ops[4];
        for (size_t i = 0; i < n; i++) make_op(&ops[i], (int)i, equal_units, bh, bg);
        double total = 0, max_unit_cost = 0;
        for (size_t i = 0; i < n; i++) {
            total += (double)ops[i].m * ops[i].row_bytes * ops[i].repeat;
            double ub = (double)ops[i].unit_rows * ops[i].row_bytes * ops[i].read_frac;
            if (ub / bh > max_unit_cost) max_unit_cost = ub / bh;
        }
        double r = irand(0, 5) == 0 ? 0.0 : urand();
        double target = r * total;
        search s = {ops, n, bh, bg, target, INFINITY, INFINITY};
        rec(&s, 0, 0, 0, 0);
        uint64_t ug[4], uu[4];
        cm_err err = {{0}};
        CHECK(dak_plan_greedy(ops, n, target, bh, bg, ug, &err) == 0, "greedy failed: %s", err.msg);
        double tg = 0, hg = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(ug[i] <= ops[i].units * ops[i].repeat, "units in range");
            uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
            for (uint32_t l = 0; l < ops[i].repeat; l++) {
                uint64_t v = dak_op_units_of(&ops[i], ug[i], l);
                sum += v, lo = v < lo ? v : lo, hi = v > hi ? v : hi;
            }
            CHECK(sum == ug[i] && hi - lo <= 1, "per-layer units add up and differ by <= 1");
            /* even spread, recomputed here */
            uint64_t q = ug[i] / ops[i].repeat, ex = ug[i] % ops[i].repeat;
            tg += (double)(ops[i].repeat - ex) * ref_time_inst(&ops[i], q, bh, bg) +
                  (double)ex * (ex ? ref_time_inst(&ops[i], q + 1, bh, bg) : 0);
            hg += dak_op_host_bytes(&ops[i], ug[i]);
        }
        double tol = 1e-9 * s.best;
        CHECK(hg >= target * (1 - 1e-12), "greedy covers the target: %g < %g", hg, target);
        CHECK(fabs(tg - dak_plan_time(ops, n, ug, bh, bg)) <= tol, "time matches reference");
        CHECK(tg >= s.best - tol, "greedy below the optimum? %g < %g", tg, s.best);
        int in_phase12 = s.best <= s.free_min + tol; /* the optimum needs no costly unit */
        if (!in_phase12) phase3++;
        if (equal_units || in_phase12) {
            CHECK(fabs(tg - s.best) <= tol, "case %d (%s): greedy %.12g != optimum %.12g", c,
                  equal_units ? "equal units" : "phases 1-2", tg, s.best);
        } else {
            CHECK(tg - s.best <= max_unit_cost * (1 + 1e-9),
                  "case %d: greedy %.12g exceeds optimum %.12g by more than one unit (%g)", c, tg,
                  s.best, max_unit_cost);
        }
        if (fabs(tg - s.best) <= tol) exact++;
        if (s.best > 0 && (tg - s.best) / s.best > worst) worst = (tg - s.best) / s.best;
        covered_cases++;
        /* uniform: feasible, never better than the optimum, nor than the greedy
         * where the greedy is provably exact */
        dak_plan_uniform(ops, n, r, uu);
        double tu = dak_plan_time(ops, n, uu, bh, bg), hu = dak_plan_host_bytes(ops, n, uu);
        CHECK(hu >= target * (1 - 1e-12), "uniform covers the target");
        CHECK(tu >= s.best - tol, "uniform better than the optimum? %g < %g", tu, s.best);
        CHECK(tu >= tg - tol, "case %d: uniform %.12g better than greedy %.12g", c, tu, tg);
    }
    printf("random %s: %d cases, greedy = exhaustive optimum in %d (%d needed costly units), "
           "worst excess %.2f%%\n",
           equal_units ? "equal-unit" : "mixed-unit", covered_cases, exact, phase3, 100 * worst);
}

/* Regions of Fig. 6 with fine granularity: 2 memory-bound, 2 compute-bound. */
static void test_regions(void)
{
    const double bh = 50.0, bg = 1000.0, xm = bh / (bh + bg); /* 0.047619 */
    dak_op ops[4];
    const double bytes[4] = {3.0e6, 1.0e6, 2.0e6, 4.0e6};
    for (int i = 0; i < 4; i++) {
        memset(&ops[i], 0, sizeof ops[i]);
        snprintf(ops[i].name, sizeof ops[i].name, "r%d", i);
        ops[i].kind = DAK_OP_LINEAR;
        ops[i].repeat = 1;
        ops[i].m = ops[i].units = 20000;
        ops[i].unit_rows = 1;
        ops[i].row_bytes = bytes[i] / 20000;
        ops[i].read_frac = 1;
    }
    ops[0].t_comp = 0;                                /* memory-bound */
    ops[1].t_comp = 0.5 * bytes[1] / (bh + bg);       /* memory-bound */
    ops[2].t_comp = 2.0 * bytes[2] / bg;              /* compute-bound, x_b = 2 bh/bg = 0.1 */
    ops[3].t_comp = 3.0 * bytes[3] / bg;              /* compute-bound, x_b = 0.15 */
    double total = 10.0e6;
    /* closed forms (Appendix A) */
    double mem_min = (bytes[0] + bytes[1]) / (bh + bg);  /* memory ops at x* */
    double comp = ops[2].t_comp + ops[3].t_comp;           /* compute ops below x_b */
    double cap1 = xm * (bytes[0] + bytes[1]);              /* Theorem 1 bound (bytes) */
    double cap2 = cap1 + 0.1 * bytes[2] + 0.15 * bytes[3]; /* Theorem 2 bound */
    const double unit_cost = 200.0 / bh;                   /* largest unit: 200 bytes */
    uint64_t ug[4], uu[4];
    cm_err err = {{0}};
    const double r1[] = {0.005, 0.018, 0.04}, r2[] = {0.055, 0.07, 0.09},
                 r3[] = {0.3, 0.6, 0.95};
    for (int i = 0; i < 3; i++) {
        /* region 1: r <= x* (and within Theorem 1's bound) */
        double r = r1[i];
        CHECK(r < xm && r * total <= cap2, "region-1 ratio below x* and inside Theorem 2's range");
        CHECK(dak_plan_greedy(ops, 4, r * total, bh, bg, ug, &err) == 0, "%s", err.msg);
        dak_plan_uniform(ops, 4, r, uu);
        double tg = dak_plan_time(ops, 4, ug, bh, bg), tu = dak_plan_time(ops, 4, uu, bh, bg);
        /* greedy: memory ops at their turning point (never worse to fill them);
         * within Theorem 1's range the compute ops get nothing: T = mem_min + comp */
        if (r * total <= cap1)
            CHECK(ug[2] == 0 && ug[3] == 0, "region 1: no budget to compute-bound ops");
        CHECK(fabs(tg - (mem_min + comp)) <= 2 * unit_cost, "region 1: greedy %g vs %g", tg,
              mem_min + comp);
        CHECK(tu > tg * 1.001, "region 1 (r=%g): uniform %g not strictly worse than greedy %g", r,
              tu, tg);
        /* region 2: x* < r < B_h/B_i of the compute-bound ops, inside Theorem 2 */
        r = r2[i];
        CHECK(r > xm && r < 0.1 && r * total <= cap2, "region-2 ratio inside Theorem 2's range");
        CHECK(dak_plan_greedy(ops, 4, r * total, bh, bg, ug, &err) == 0, "%s", err.msg);
        dak_plan_uniform(ops, 4, r, uu);
        tg = dak_plan_time(ops, 4, ug, bh, bg), tu = dak_plan_time(ops, 4, uu, bh, bg);
        CHECK(fabs(tg - (mem_min + comp)) <= 2 * unit_cost, "region 2: greedy %g vs Theorem 2 %g",
              tg, mem_min + comp);
        CHECK(ug[2] <= (uint64_t)(0.1 * 20000) + 1 && ug[3] <= (uint64_t)(0.15 * 20000) + 1,
              "region 2: compute ops not past their threshold");
        CHECK(tu > tg * 1.001, "region 2 (r=%g): uniform %g not strictly worse than greedy %g", r,
              tu, tg);
        /* region 3: past every turning point: any split is optimal (Theorem 3),
         * every op is host-bound, T = host bytes / B_h */
        r = r3[i];
        CHECK(dak_plan_greedy(ops, 4, r * total, bh, bg, ug, &err) == 0, "%s", err.msg);
        dak_plan_uniform(ops, 4, r, uu);
        tg = dak_plan_time(ops, 4, ug, bh, bg), tu = dak_plan_time(ops, 4, uu, bh, bg);
        CHECK(fabs(tg - r * total / bh) <= 4 * unit_cost, "region 3: greedy %g vs %g", tg,
              r * total / bh);
        CHECK(tu >= tg - 1e-9 * tg && tu - tg <= 4 * unit_cost, "region 3: uniform %g ~ greedy %g",
              tu, tg);
    }
    /* impossible budget */
    CHECK(dak_plan_greedy(ops, 4, total * 1.01, bh, bg, ug, &err) == -1 &&
              strstr(err.msg, "expected at most"),
          "target above the total rejected: %s", err.msg);
    CHECK(dak_plan_greedy(ops, 4, total, bh, bg, ug, &err) == 0 && ug[0] == 20000 && ug[3] == 20000,
          "everything offloaded at ratio 1");
}

/* The classification and turning points of single operations (Fig. 6). */
static void test_classify(void)
{
    dak_op op;
    memset(&op, 0, sizeof op);
    op.repeat = 1, op.m = 100, op.units = 100, op.unit_rows = 1, op.row_bytes = 10, op.read_frac = 1;
    double bh = 100, bg = 900, xa, xb; /* C = 1000 bytes: C/(bh+bg) = 1, C/bg = 1.111 */
    op.t_comp = 0.5;
    CHECK(dak_op_classify(&op, bh, bg, &xa, &xb) == DAK_CLASS_MEMORY && fabs(xa - 0.1) < 1e-12 &&
              fabs(xb - 0.1) < 1e-12,
          "memory-bound: x* = B_h/(B_h+B_g) = 0.1");
    CHECK(fabs(dak_op_time_x(&op, 0.1, bh, bg) - 1.0) < 1e-12, "T(x*) = C/(B_h+B_g) = 1");
    CHECK(fabs(dak_op_time_x(&op, 0.0, bh, bg) - 1000.0 / 900) < 1e-12, "T(0) = C/B_g");
    CHECK(fabs(dak_op_time_x(&op, 1.0, bh, bg) - 10.0) < 1e-12, "T(1) = C/B_h");
    op.t_comp = 5.0;
    CHECK(dak_op_classify(&op, bh, bg, &xa, &xb) == DAK_CLASS_COMPUTE && xa == 0 &&
              fabs(xb - 0.5) < 1e-12,
          "compute-bound: x_b = T_comp B_h / C = 0.5");
    CHECK(fabs(dak_op_time_x(&op, 0.3, bh, bg) - 5.0) < 1e-12, "flat below x_b");
    CHECK(fabs(dak_op_time_x(&op, 0.8, bh, bg) - 8.0) < 1e-12, "host-bound past x_b");
    op.t_comp = 1.05; /* between C/(bh+bg) and C/bg */
    CHECK(dak_op_classify(&op, bh, bg, &xa, &xb) == DAK_CLASS_MIXED &&
              fabs(xa - (1 - 1.05 * 0.9)) < 1e-12 && fabs(xb - 0.105) < 1e-12,
          "mixed: x_a = 1 - T_comp B_g/C = 0.055, x_b = 0.105");
}

int main(void)
{
    test_classify();
    test_random(1, 3000);
    test_random(0, 8000);
    test_regions();
    return check_done();
}
