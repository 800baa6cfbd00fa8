/* File readers: the accepted formats give the right J, h and objective
 * (cut counted directly on the edge list, QUBO value x^T Q x evaluated
 * directly for every x), and every malformed file is rejected with
 * "path:line: reason".  Usage: test_readers DATA_DIR (run in a scratch
 * directory: random files are written to the current directory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/instances.h"
#include "inst_test_util.h"

static const char *data_dir;

static const char *data(const char *file)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", data_dir, file);
    return buf;
}

/* ---- malformed files ------------------------------------------------------------ */

typedef int (*reader_fn)(const char *, dsb_instance *, cm_err *);

static const struct {
    const char *file;
    reader_fn read;
    int line;
    const char *want;
} bad[] = {
    /* Gset / rudy */
    {"g_empty.txt", dsb_read_gset, 1, "empty file"},
    {"g_header_fields.txt", dsb_read_gset, 1, "expected 2 fields"},
    {"g_header_n.txt", dsb_read_gset, 1, "vertex count"},
    {"g_header_m.txt", dsb_read_gset, 1, "edge count"},
    {"g_edge_fields.txt", dsb_read_gset, 2, "expected 3 fields"},
    {"g_edge_extra.txt", dsb_read_gset, 3, "got 4"},
    {"g_vertex_range.txt", dsb_read_gset, 2, "vertex v"},
    {"g_vertex_zero.txt", dsb_read_gset, 2, "vertex u"},
    {"g_vertex_text.txt", dsb_read_gset, 2, "vertex u"},
    {"g_selfloop.txt", dsb_read_gset, 3, "self-loop"},
    {"g_duplicate.txt", dsb_read_gset, 4, "duplicate edge"},
    {"g_weight_real.txt", dsb_read_gset, 2, "weights must be integers"},
    {"g_weight_range.txt", dsb_read_gset, 2, "out of range"},
    {"g_too_few.txt", dsb_read_gset, 4, "unexpected end of file"},
    {"g_too_many.txt", dsb_read_gset, 3, "extra line"},
    {"g_nul.txt", dsb_read_gset, 3, "NUL byte"},
    /* MatrixMarket */
    {"m_no_banner.mtx", dsb_read_mtx, 1, "banner"},
    {"m_array.mtx", dsb_read_mtx, 1, "format 'array'"},
    {"m_complex.mtx", dsb_read_mtx, 1, "field 'complex'"},
    {"m_skew.mtx", dsb_read_mtx, 1, "symmetry 'skew-symmetric'"},
    {"m_banner_fields.mtx", dsb_read_mtx, 1, "expected 5 fields"},
    {"m_not_square.mtx", dsb_read_mtx, 3, "square"},
    {"m_size_fields.mtx", dsb_read_mtx, 2, "expected 3 fields"},
    {"m_nnz_range.mtx", dsb_read_mtx, 2, "entries: expected an integer in [0, 6]"},
    {"m_index.mtx", dsb_read_mtx, 3, "indices"},
    {"m_diagonal.mtx", dsb_read_mtx, 4, "diagonal"},
    {"m_real_fraction.mtx", dsb_read_mtx, 3, "not an integer"},
    {"m_value_range.mtx", dsb_read_mtx, 3, "out of range"},
    {"m_int_text.mtx", dsb_read_mtx, 3, "expected an integer"},
    {"m_duplicate.mtx", dsb_read_mtx, 4, "duplicate entry"},
    {"m_asymmetric.mtx", dsb_read_mtx, 3, "not symmetric"},
    {"m_mismatch.mtx", dsb_read_mtx, 3, "not symmetric"},
    {"m_pattern_fields.mtx", dsb_read_mtx, 3, "expected 2 fields"},
    {"m_too_few.mtx", dsb_read_mtx, 4, "unexpected end of file"},
    {"m_too_many.mtx", dsb_read_mtx, 4, "extra line"},
    {"m_real_inf.mtx", dsb_read_mtx, 3, "finite"},
    /* QUBO */
    {"q_no_p_first.qubo", dsb_read_qubo, 2, "before any data line"},
    {"q_no_p.qubo", dsb_read_qubo, 2, "no 'p qubo"},
    {"q_p_fields.qubo", dsb_read_qubo, 1, "6 fields"},
    {"q_type.qubo", dsb_read_qubo, 1, "problem type"},
    {"q_topology.qubo", dsb_read_qubo, 1, "topology"},
    {"q_maxnodes.qubo", dsb_read_qubo, 1, "maxNodes"},
    {"q_nnodes.qubo", dsb_read_qubo, 1, "nNodes"},
    {"q_ncouplers.qubo", dsb_read_qubo, 1, "nCouplers"},
    {"q_second_p.qubo", dsb_read_qubo, 3, "second 'p'"},
    {"q_index.qubo", dsb_read_qubo, 3, "indices"},
    {"q_index_negative.qubo", dsb_read_qubo, 3, "indices"},
    {"q_value.qubo", dsb_read_qubo, 3, "finite real"},
    {"q_value_nan.qubo", dsb_read_qubo, 3, "finite real"},
    {"q_data_fields.qubo", dsb_read_qubo, 3, "expected 3 fields"},
    {"q_dup_node.qubo", dsb_read_qubo, 3, "duplicate diagonal"},
    {"q_dup_coupler.qubo", dsb_read_qubo, 3, "duplicate coupler"},
    {"q_extra_node.qubo", dsb_read_qubo, 3, "more diagonal lines"},
    {"q_extra_coupler.qubo", dsb_read_qubo, 3, "more coupler lines"},
    {"q_too_few.qubo", dsb_read_qubo, 4, "declares 2 diagonal and 1 coupler"},
};

static void test_malformed(void)
{
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *path = data(bad[k].file);
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, bad[k].line);
        cm_err err = {{0}};
        dsb_instance in;
        int rc = bad[k].read(path, &in, &err);
        CHECK(rc != 0, "%s: accepted", bad[k].file);
        CHECK(!strncmp(err.msg, prefix, strlen(prefix)), "%s: message '%s' does not start with '%s'",
              bad[k].file, err.msg, prefix);
        CHECK(strstr(err.msg, bad[k].want) != NULL, "%s: message '%s' does not contain '%s'",
              bad[k].file, err.msg, bad[k].want);
        CHECK(in.J == NULL && in.h == NULL && in.n == 0, "%s: out not cleared", bad[k].file);
        /* dsb_read_file picks the same reader by extension */
        cm_err err2 = {{0}};
        CHECK(dsb_read_file(path, &in, &err2) != 0 && !strcmp(err.msg, err2.msg),
              "%s: dsb_read_file gave '%s'", bad[k].file, err2.msg);
    }
    cm_err err;
    dsb_instance in;
    CHECK(dsb_read_gset(data("no_such_file.txt"), &in, &err) != 0 && strstr(err.msg, "cannot open"),
          "missing file: '%s'", err.msg);
}

/* ---- accepted files -------------------------------------------------------------- */

static int8_t jat(const dsb_instance *in, int i, int j) { return in->J[(size_t)i * in->n + j]; }

static void test_good_files(void)
{
    cm_err err;
    dsb_instance in;
    /* good_gset.txt: edges (1,2,1) (1,3,1) (2,3,-1) (3,4,2) (4,5,1) (5,1,1) */
    static const int E[6][3] = {{1, 2, 1}, {1, 3, 1}, {2, 3, -1}, {3, 4, 2}, {4, 5, 1}, {5, 1, 1}};
    CHECK(dsb_read_file(data("good_gset.txt"), &in, &err) == 0, "%s", err.msg);
    CHECK(in.n == 5 && in.objective == DSB_OBJ_MAXCUT && in.weight_total == 5, "gset header");
    for (int e = 0; e < 6; e++)
        CHECK(jat(&in, E[e][0] - 1, E[e][1] - 1) == -E[e][2] && jat(&in, E[e][1] - 1, E[e][0] - 1) == -E[e][2],
              "gset: J for edge %d", e);
    for (int mask = 0; mask < 32; mask++) {
        int s[5];
        for (int i = 0; i < 5; i++) s[i] = (mask >> i) & 1 ? 1 : -1;
        int cut = 0;
        for (int e = 0; e < 6; e++)
            if (s[E[e][0] - 1] != s[E[e][1] - 1]) cut += E[e][2];
        double got = dsb_instance_objective(&in, tu_energy2(in.J, in.h, 5, s));
        CHECK(got == cut, "gset: cut %g != counted %d for mask %d", got, cut, mask);
    }
    dsb_instance_free(&in);

    CHECK(dsb_read_file(data("good_sym.mtx"), &in, &err) == 0, "%s", err.msg);
    int8_t want4[4][4] = {{0, 1, 0, -1}, {1, 0, -2, 0}, {0, -2, 0, 1}, {-1, 0, 1, 0}};
    CHECK(in.n == 4 && !memcmp(in.J, want4, 16) && in.objective == DSB_OBJ_ISING, "good_sym.mtx J");
    dsb_instance_free(&in);
    CHECK(dsb_read_file(data("good_gen.mtx"), &in, &err) == 0, "%s", err.msg);
    int8_t want3[3][3] = {{0, 3, 0}, {3, 0, -1}, {0, -1, 0}};
    CHECK(in.n == 3 && !memcmp(in.J, want3, 9), "good_gen.mtx J");
    dsb_instance_free(&in);
    CHECK(dsb_read_file(data("good_pat.mtx"), &in, &err) == 0, "%s", err.msg);
    int8_t wantp[3][3] = {{0, 1, 1}, {1, 0, 0}, {1, 0, 0}};
    CHECK(in.n == 3 && !memcmp(in.J, wantp, 9), "good_pat.mtx J");
    dsb_instance_free(&in);

    /* good.qubo: f = -x0 + 2 x2 + 3 x0 x1 - 2 x1 x2 */
    CHECK(dsb_read_file(data("good.qubo"), &in, &err) == 0, "%s", err.msg);
    CHECK(in.n == 3 && in.objective == DSB_OBJ_QUBO && in.quant_scale == 1.0, "good.qubo header");
    for (int mask = 0; mask < 8; mask++) {
        int x0 = mask & 1, x1 = (mask >> 1) & 1, x2 = (mask >> 2) & 1;
        int f = -x0 + 2 * x2 + 3 * x0 * x1 - 2 * x1 * x2;
        int s[3] = {2 * x0 - 1, 2 * x1 - 1, 2 * x2 - 1};
        double got = dsb_instance_objective(&in, tu_energy2(in.J, in.h, 3, s));
        CHECK(got == f, "good.qubo: objective %g != f %d at x = %d%d%d", got, f, x0, x1, x2);
    }
    dsb_instance_free(&in);
}

/* ---- random files ------------------------------------------------------------------ */

static void test_random_gset(void)
{
    for (int rep = 0; rep < 5; rep++) {
        const int n = 9 + rep;
        int eu[200], ev[200], ew[200], m = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (tu_unit() < 0.4) {
                    int swap = tu_next() & 1;
                    eu[m] = swap ? j : i;
                    ev[m] = swap ? i : j;
                    ew[m] = tu_range(-5, 5);
                    m++;
                }
        FILE *f = fopen("rand_gset.txt", "w");
        fprintf(f, "%d %d\n", n, m);
        for (int e = 0; e < m; e++) fprintf(f, "%d %d %d\n", eu[e] + 1, ev[e] + 1, ew[e]);
        fclose(f);
        cm_err err;
        dsb_instance in;
        CHECK(dsb_read_gset("rand_gset.txt", &in, &err) == 0, "%s", err.msg);
        if (in.J == NULL) continue;
        int bad = 0;
        for (uint32_t mask = 0; mask < (1u << n); mask++) {
            int s[16];
            for (int i = 0; i < n; i++) s[i] = (mask >> i) & 1 ? 1 : -1;
            long cut = 0;
            for (int e = 0; e < m; e++)
                if (s[eu[e]] != s[ev[e]]) cut += ew[e];
            if (dsb_instance_objective(&in, tu_energy2(in.J, in.h, (uint32_t)n, s)) != (double)cut) bad++;
        }
        CHECK(bad == 0, "random gset n=%d: %d of %u states with cut != counted", n, bad, 1u << n);
        dsb_instance_free(&in);
    }
}

/* Writes a random upper-triangular QUBO and checks the objective against
 * x^T Q x for all 2^n x: exactly for integer files that fit, within the
 * quantization bound otherwise. */
static void qubo_case(int n, int integer, int amp, int exact_expected)
{
    double Q[10][10] = {{0}};
    int written = 0; /* couplers: the nonzero upper-triangle entries */
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            if (j > i && tu_unit() < 0.3) continue; /* some absent couplers */
            double v = integer ? (double)tu_range(-amp, amp) : (tu_unit() * 2 - 1) * amp;
            Q[i][j] = v;
            if (j > i && v != 0.0) written++;
        }
    FILE *f = fopen("rand.qubo", "w");
    fprintf(f, "c random test QUBO\np qubo 0 %d %d %d\n", n, n, written);
    for (int i = 0; i < n; i++) fprintf(f, "%d %d %.17g\n", i, i, Q[i][i]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (Q[i][j] == 0.0) continue;
            if (tu_next() & 1) {
                fprintf(f, "%d %d %.17g\n", i, j, Q[i][j]);
            } else {
                fprintf(f, "%d %d %.17g\n", j, i, Q[i][j]); /* lower triangle is accepted */
            }
        }
    fclose(f);
    cm_err err;
    dsb_instance in;
    CHECK(dsb_read_qubo("rand.qubo", &in, &err) == 0, "%s", err.msg);
    if (!in.J) return;
    CHECK((in.quant_scale == 1.0) == exact_expected, "qubo: quant_scale %g, exact expected %d",
          in.quant_scale, exact_expected);
    /* |E_q - S E'| <= (pairs + n) / 2, objective = (E + C S) / (4 S) */
    double bound = exact_expected ? 0.0 : (written + n) / 2.0 * in.quant_scale / 4.0 * (1 + 1e-9);
    double worst = 0.0;
    for (int mask = 0; mask < (1 << n); mask++) {
        int x[10], s[10];
        for (int i = 0; i < n; i++) {
            x[i] = (mask >> i) & 1;
            s[i] = 2 * x[i] - 1;
        }
        double fx = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) fx += Q[i][j] * x[i] * x[j];
        double got = dsb_instance_objective(&in, tu_energy2(in.J, in.h, (uint32_t)n, s));
        if (fabs(got - fx) > worst) worst = fabs(got - fx);
    }
    CHECK(worst <= bound + (exact_expected ? 0.0 : 1e-9), "qubo n=%d integer=%d amp=%d: worst error %g, bound %g",
          n, integer, amp, worst, bound);
    dsb_instance_free(&in);
}

static void test_random_qubo(void)
{
    for (int rep = 0; rep < 4; rep++) qubo_case(7 + rep, 1, 4, 1); /* exact */
    for (int rep = 0; rep < 3; rep++) qubo_case(8 + rep, 0, 3, 0); /* real: quantized */
    qubo_case(10, 1, 1000, 0);                                    /* too large: quantized */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_readers DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    test_malformed();
    test_good_files();
    test_random_gset();
    test_random_qubo();
    return check_done();
}
