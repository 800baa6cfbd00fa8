/* Operation model, greedy and uniform plans, decode-step operations of a
 * model (see include/dak/planner.h for the model and the argument). */
#include "dak/planner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one operation ------------------------------------------------------ */

double dak_op_bytes(const dak_op *op)
{
    return (double)op->m * op->row_bytes;
}

double dak_op_host_bytes_inst(const dak_op *op, uint64_t q)
{
    uint64_t rows = q * op->unit_rows;
    if (rows > op->m) rows = op->m;
    return (double)rows * op->row_bytes;
}

static double time_hb(const dak_op *op, double hb, double b_h, double b_g)
{
    double c = dak_op_bytes(op);
    double th = hb * op->read_frac / b_h, tg = (c - hb) * op->read_frac / b_g;
    double t = op->t_comp;
    if (th > t) t = th;
    if (tg > t) t = tg;
    return t;
}

double dak_op_time_x(const dak_op *op, double x, double b_h, double b_g)
{
    return time_hb(op, x * dak_op_bytes(op), b_h, b_g);
}

double dak_op_time_units(const dak_op *op, uint64_t u, double b_h, double b_g)
{
    uint64_t r = op->repeat, q = u / r, extra = u % r;
    double t = (double)(r - extra) * time_hb(op, dak_op_host_bytes_inst(op, q), b_h, b_g);
    if (extra) t += (double)extra * time_hb(op, dak_op_host_bytes_inst(op, q + 1), b_h, b_g);
    return t;
}

uint64_t dak_op_units_of(const dak_op *op, uint64_t u, uint32_t inst)
{
    return u / op->repeat + (inst < u % op->repeat ? 1 : 0);
}

double dak_op_host_bytes(const dak_op *op, uint64_t u)
{
    uint64_t r = op->repeat, q = u / r, extra = u % r;
    double hb = (double)(r - extra) * dak_op_host_bytes_inst(op, q);
    if (extra) hb += (double)extra * dak_op_host_bytes_inst(op, q + 1);
    return hb;
}

dak_op_class dak_op_classify(const dak_op *op, double b_h, double b_g, double *x_a, double *x_b)
{
    double c = dak_op_bytes(op) * op->read_frac, tc = op->t_comp;
    double xa, xb;
    dak_op_class cls;
    if (c <= 0) {
        xa = 0, xb = 1, cls = DAK_CLASS_COMPUTE;
    } else if (tc <= c / (b_h + b_g)) {
        xa = xb = b_h / (b_h + b_g);
        cls = DAK_CLASS_MEMORY;
    } else {
        xb = tc * b_h / c;
        if (xb > 1) xb = 1;
        if (tc >= c / b_g) {
            xa = 0;
            cls = DAK_CLASS_COMPUTE;
        } else {
            xa = 1 - tc * b_g / c;
            cls = DAK_CLASS_MIXED;
        }
    }
    if (x_a) *x_a = xa;
    if (x_b) *x_b = xb;
    return cls;
}

const char *dak_op_class_name(dak_op_class c)
{
    switch (c) {
    case DAK_CLASS_MEMORY: return "memory";
    case DAK_CLASS_MIXED: return "mixed";
    case DAK_CLASS_COMPUTE: return "compute";
    }
    return "?";
}

void dak_op_linear(dak_op *op, const char *name, uint64_t m, uint64_t n, uint64_t k,
                   uint32_t elem_bytes, uint32_t repeat, uint32_t tile_rows,
                   const dak_profile *prof)
{
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "%s", name);
    op->kind = DAK_OP_LINEAR;
    op->m = m, op->n = n, op->k = k;
    op->repeat = repeat;
    op->unit_rows = tile_rows ? tile_rows : DAK_PLAN_UNIT_ROWS;
    op->units = (m + op->unit_rows - 1) / op->unit_rows;
    op->row_bytes = (double)k * elem_bytes;
    op->read_frac = 1.0;
    op->flops = 2.0 * (double)m * (double)n * (double)k;
    double rate = dak_profile_gemm_rate(prof, m, n, k, &op->profiled);
    op->t_comp = op->flops / rate;
}

/* ---- plans --------------------------------------------------------------- */

double dak_plan_time(const dak_op *ops, size_t n, const uint64_t *u, double b_h, double b_g)
{
    double t = 0;
    for (size_t i = 0; i < n; i++) t += dak_op_time_units(&ops[i], u[i], b_h, b_g);
    return t;
}

double dak_plan_host_bytes(const dak_op *ops, size_t n, const uint64_t *u)
{
    double b = 0;
    for (size_t i = 0; i < n; i++) b += dak_op_host_bytes(&ops[i], u[i]);
    return b;
}

double dak_ops_total_bytes(const dak_op *ops, size_t n)
{
    double b = 0;
    for (size_t i = 0; i < n; i++) b += dak_op_bytes(&ops[i]) * ops[i].repeat;
    return b;
}

static uint64_t max_units(const dak_op *op)
{
    return op->units * op->repeat;
}

/* Time change and byte change of adding one host unit at u. */
static void next_unit(const dak_op *op, uint64_t u, double b_h, double b_g, double *dt,
                      double *db)
{
    uint64_t q = u / op->repeat;
    *dt = time_hb(op, dak_op_host_bytes_inst(op, q + 1), b_h, b_g) -
          time_hb(op, dak_op_host_bytes_inst(op, q), b_h, b_g);
    *db = dak_op_host_bytes_inst(op, q + 1) - dak_op_host_bytes_inst(op, q);
}

/* Units of one operation tried when finishing a covering (see below). */
#define FINISH_MAX 64

/* The fewest next units of op (from u) that add at least `need` bytes:
 * their count, time and bytes; 0 when more than FINISH_MAX would be needed. */
static int finish_with(const dak_op *op, uint64_t u, double need, double b_h, double b_g,
                       uint64_t *k, double *cost, double *bytes)
{
    if (need > FINISH_MAX * (double)op->unit_rows * op->row_bytes) return 0;
    double c = 0, b = 0;
    uint64_t j = 0;
    while (b < need) {
        if (u + j >= max_units(op) || j >= FINISH_MAX) return 0;
        double dt, db;
        next_unit(op, u + j, b_h, b_g, &dt, &db);
        c += dt, b += db, j++;
    }
    *k = j, *cost = c, *bytes = b;
    return 1;
}

/* The greedy choice: the cheapest next unit per needed byte; ties (equal cost per
 * byte: any split is optimal there, Theorems 2-3) go to the least offloaded
 * operation so the ratios stay level.  Returns n when nothing is left. */
static size_t greedy_pick(const dak_op *ops, size_t n, const uint64_t *u, double need,
                          double b_h, double b_g, double *dt_out, double *db_out)
{
    size_t best = n;
    double best_cost = 0, best_x = 0;
    for (size_t i = 0; i < n; i++) {
        if (u[i] >= max_units(&ops[i])) continue;
        double dt, db;
        next_unit(&ops[i], u[i], b_h, b_g, &dt, &db);
        /* cost per byte that counts towards the target: a unit larger than
         * what is still missing is charged for the bytes it overshoots */
        double useful = db < need ? db : need;
        double cost = useful > 0 ? dt / useful : INFINITY;
        double x = (double)u[i] / (double)max_units(&ops[i]);
        double tol = 1e-9 * fmax(fabs(cost), fabs(best_cost));
        int tie = best != n && fabs(cost - best_cost) <= tol;
        if (best == n || (!tie && cost < best_cost) || (tie && x < best_x)) {
            best = i, best_cost = cost, best_x = x;
            *dt_out = dt, *db_out = db;
        }
    }
    return best;
}

int dak_plan_greedy(const dak_op *ops, size_t n, double target, double b_h, double b_g,
                    uint64_t *u, cm_err *err)
{
    double total = dak_ops_total_bytes(ops, n);
    if (!(target >= 0) || target > total * (1 + 1e-12))
        return cm_fail(err,
                       "offload target %.6g bytes: expected at most the %.6g bytes the "
                       "operations hold",
                       target, total);
    double covered = 0;
    /* Phase 1: every unit that lowers the time (memory-bound operations up to
     * their turning point).  T is convex in u, so these form a prefix. */
    for (size_t i = 0; i < n; i++) {
        u[i] = 0;
        while (u[i] < max_units(&ops[i])) {
            double dt, db;
            next_unit(&ops[i], u[i], b_h, b_g, &dt, &db);
            if (!(dt < 0)) break;
            u[i]++;
            covered += db;
        }
    }
    /* Phases 2 and 3: the cheapest units per byte (free flat parts of
     * compute-bound operations first) until the target is covered.  Whole
     * units overshoot; at every step the plan "greedy so far, then finish
     * with the fewest units of one operation" is also costed, and the best
     * such finish replaces the plain greedy ending when it is cheaper. */
    double goal = target * (1 - 1e-12), base_covered = covered, spent = 0;
    uint64_t *base = cm_malloc((n ? n : 1) * sizeof *base);
    memcpy(base, u, n * sizeof *u);
    double alt = INFINITY;
    size_t steps = 0, alt_steps = 0, alt_op = n;
    uint64_t alt_k = 0;
    while (covered < goal) {
        for (size_t j = 0; j < n; j++) {
            uint64_t k;
            double c, b;
            if (finish_with(&ops[j], u[j], goal - covered, b_h, b_g, &k, &c, &b) &&
                spent + c < alt)
                alt = spent + c, alt_steps = steps, alt_op = j, alt_k = k;
        }
        double dt = 0, db = 0;
        size_t best = greedy_pick(ops, n, u, goal - covered, b_h, b_g, &dt, &db);
        if (best == n) break; /* cannot happen: target <= total */
        u[best]++;
        covered += db;
        spent += dt;
        steps++;
    }
    if (alt_op < n && alt < spent - 1e-12 * fabs(spent)) {
        memcpy(u, base, n * sizeof *u);
        covered = base_covered;
        for (size_t s = 0; s < alt_steps; s++) {
            double dt = 0, db = 0;
            size_t best = greedy_pick(ops, n, u, goal - covered, b_h, b_g, &dt, &db);
            u[best]++;
            covered += db;
        }
        for (uint64_t j = 0; j < alt_k; j++) {
            double dt, db;
            next_unit(&ops[alt_op], u[alt_op], b_h, b_g, &dt, &db);
            u[alt_op]++;
            covered += db;
        }
    }
    free(base);
    /* Local improvement: drop a costly unit when the target stays covered,
     * or trade it for the fewest units of another operation when cheaper. */
    for (int iter = 0; iter < 100000; iter++) {
        int moved = 0;
        for (size_t i = 0; i < n && !moved; i++) {
            if (u[i] == 0) continue;
            double dt_i, db_i;
            next_unit(&ops[i], u[i] - 1, b_h, b_g, &dt_i, &db_i);
            if (!(dt_i > 0)) continue;
            double need = goal - (covered - db_i);
            if (need <= 0) {
                u[i]--;
                covered -= db_i;
                moved = 1;
                break;
            }
            for (size_t j = 0; j < n; j++) {
                uint64_t k;
                double c, b;
                if (j == i || !finish_with(&ops[j], u[j], need, b_h, b_g, &k, &c, &b)) continue;
                if (c < dt_i - 1e-12 * dt_i) {
                    u[i]--;
                    u[j] += k;
                    covered += b - db_i;
                    moved = 1;
                    break;
                }
            }
        }
        if (!moved) break;
    }
    return 0;
}

void dak_plan_uniform(const dak_op *ops, size_t n, double r, uint64_t *u)
{
    if (r < 0) r = 0;
    if (r > 1) r = 1;
    for (size_t i = 0; i < n; i++) {
        /* r of the rows over all instances, rounded up to whole units and
         * spread evenly (so the overshoot is below one unit per operation) */
        const dak_op *op = &ops[i];
        uint64_t all = max_units(op);
        double want = r * dak_op_bytes(op) * op->repeat;
        double rows = r * (double)op->m * op->repeat / (double)op->unit_rows;
        uint64_t q = (uint64_t)ceil(rows - 1e-9);
        if (q > all) q = all;
        while (q < all && dak_op_host_bytes(op, q) < want * (1 - 1e-12)) q++;
        u[i] = q;
    }
}

/* ---- a model's decode step ---------------------------------------------- */

static void op_attention(dak_op *op, const dak_model_config *c, uint64_t batch, uint64_t seq,
                         const dak_profile *prof)
{
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "attn");
    op->kind = DAK_OP_ATTENTION;
    op->m = batch, op->n = seq, op->k = c->kv_heads * c->head_dim;
    op->repeat = (uint32_t)c->layers;
    op->unit_rows = 1;
    op->units = batch;
    op->row_bytes = 2.0 * (double)seq * (double)op->k * c->elem_bytes; /* K and V of one entry */
    op->read_frac = 1.0;
    /* scores q.k and the weighted sum of v: 2 x 2 x B x heads x L x head_dim */
    op->flops = 4.0 * (double)batch * (double)c->heads * (double)seq * (double)c->head_dim;
    op->t_comp = op->flops / prof->attn_flops;
    op->profiled = 0;
}

int dak_model_ops(const dak_model_config *c, uint64_t batch, uint64_t seq, uint32_t tr,
                  const dak_profile *prof, dak_op **ops_out, size_t *n_out, cm_err *err)
{
    if (batch < 1 || seq < 1)
        return cm_fail(err, "batch %llu, length %llu: expected both at least 1",
                       (unsigned long long)batch, (unsigned long long)seq);
    if (c->layers > UINT32_MAX) return cm_fail(err, "too many layers");
    dak_op *ops = cm_calloc(12, sizeof *ops);
    size_t n = 0;
    uint32_t L = (uint32_t)c->layers, eb = c->elem_bytes;
    uint64_t h = c->hidden, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    if (c->arch == DAK_ARCH_OPT) {
        dak_op_linear(&ops[n++], "q_proj", h, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "k_proj", h, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "v_proj", h, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "out_proj", h, batch, h, eb, L, tr, prof);
        op_attention(&ops[n++], c, batch, seq, prof);
        dak_op_linear(&ops[n++], "fc1", c->ffn, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "fc2", h, batch, c->ffn, eb, L, tr, prof);
        /* lm_head: the (tied) embedding matrix read by the output GEMM */
        dak_op_linear(&ops[n++], "lm_head", c->vocab, batch, h, eb, 1, tr, prof);
    } else {
        dak_op_linear(&ops[n++], "q_proj", q, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "k_proj", kv, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "v_proj", kv, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "o_proj", h, batch, q, eb, L, tr, prof);
        op_attention(&ops[n++], c, batch, seq, prof);
        dak_op_linear(&ops[n++], "gate_proj", c->ffn, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "up_proj", c->ffn, batch, h, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "down_proj", h, batch, c->ffn, eb, L, tr, prof);
        dak_op_linear(&ops[n++], "lm_head", c->vocab, batch, h, eb, 1, tr, prof);
        if (!c->tie_embeddings) {
            /* token embedding lookup: stores vocab x h, reads B rows per step */
            dak_op *e = &ops[n++];
            dak_op_linear(e, "embed", c->vocab, batch, h, eb, 1, tr, prof);
            e->kind = DAK_OP_GATHER;
            e->flops = 0, e->t_comp = 0, e->profiled = 0;
            e->read_frac = batch >= c->vocab ? 1.0 : (double)batch / (double)c->vocab;
        }
    }
    *ops_out = ops;
    *n_out = n;
    return 0;
}

void dak_model_footprint(const dak_model_config *c, uint64_t batch, uint64_t seq,
                         uint64_t reserve, const dak_op *ops, size_t n_ops, dak_footprint *fp)
{
    dak_param_count pc;
    dak_config_params(c, &pc);
    fp->weights = (double)pc.total * c->elem_bytes;
    fp->kv = dak_kv_bytes(c, batch, seq);
    fp->workspace = (double)c->elem_bytes * (double)batch * (double)(4 * c->hidden + 2 * c->ffn) +
                    4.0 * (double)batch * (double)c->vocab + (double)reserve;
    fp->total = fp->weights + fp->kv + fp->workspace;
    fp->offloadable = dak_ops_total_bytes(ops, n_ops);
    fp->resident = fp->total - fp->offloadable;
}
