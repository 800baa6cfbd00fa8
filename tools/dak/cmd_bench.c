#define _POSIX_C_SOURCE 200809L
/* dak bench gemm: the direct-access split GEMM (seed 003, Sec. 4.1, 4.3, 6.2)
 * against the aggregate-bandwidth bound and the baselines (cuBLAS all-HBM,
 * prefetch, double-buffered prefetch, naive zero-copy, unified memory), plus
 * the congestion sweep, read amplification with/without multicast and wave
 * alignment on/off.  Prints tables, writes one JSON document.
 *
 * This file: the options, and the run that makes each shape's buffers and calls
 * the sections (bench_sections.h) in turn; the sections live in bench_probe.c,
 * bench_sweep.c, bench_ablations.c, bench_fixed.c and bench_smrate.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sections.h"
#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak bench gemm [options]   (dak bench attn --help: the split attention)\n"
            "  --shapes LIST    MxK,... (default 7168x7168,28672x7168,11008x4096)\n"
            "  --n LIST         batch columns N (default 1,8,64,512,1024; the fixed section: 1,8,64 unless\n"
            "                   given)\n"
            "  --ratios LIST    offload ratios in %% (default 0,0.5,1,2,5,10,20,40,60,80,100; the fixed section:\n"
            "                   0 unless given)\n"
            "  --reps N         timed repetitions per point, median reported (default 10)\n"
            "  --host-sms N     SMs reading host memory, 0 = auto (default 0)\n"
            "  --window N       in-flight copies per host SM, 0 = auto (~1 MiB in flight) (default 0)\n"
            "  --cluster N      multicast cluster for N >= 128: 1 (no multicast column), 2, 4 or 8 (default 8)\n"
            "  --layers N       GEMMs in the double-buffered prefetch sequence (default 8)\n"
            "  --bm N           rows of A per CTA tile of the split kernel's HBM tier: 0 (auto: 128 where\n"
            "                   N > 32), 64, 128 or 256 (256 x 128 tiles; configurations it does not apply\n"
            "                   to, e.g. N <= 64, run with bm auto, noted once on stderr) (default 0)\n"
            "  --bn N           columns per CTA tile of the split kernel's 128-row HBM tiles: 0 (auto: as wide\n"
            "                   as N / cluster, up to 256; 128 beside a tiled host tier), 64, 128 or 256; configurations\n"
            "                   it does not apply to (wgmma 0, dyn, 64-row tiles, bn 256 beside a tiled host\n"
            "                   tier) run with bn auto, noted once on stderr (default 0)\n"
            "  --kstep N        64-column blocks of A per ring slot of the split kernels and per stage of\n"
            "                   k_whole: 0 (auto), 1, 2 or 4 (default 0)\n"
            "  --stages N       ring slots of the split kernels: 0 (as many as fit) or 2..24 (default 0)\n"
            "  --hbm-sms N      CTAs of the split kernels that read HBM rows, 0 = auto: all SMs left, or with\n"
            "                   --tile-align 1 (the default) possibly fewer (>= 80 %%), aligned to the tiles\n"
            "                   (default 0)\n"
            "  --l2-hints N     1: the split kernel's copies carry L2 policies (A evict-first, B evict-last;\n"
            "                   dak_gemm_opts.l2_hints), 0: none (default 1)\n"
            "  --fix-rs N       1: split-K tiles held in whole shares (each contributor's only segment) are\n"
            "                   summed by reduce-scatter (dak_gemm_opts.fix_rs), 0: by the owner after the\n"
            "                   others (default 1)\n"
            "  --rotate N       diagnostic: CTA j of a tier takes share (j + N) mod its CTAs (diag_rotate;\n"
            "                   default 0)\n"
            "  --bn8 N          1: the split kernels' B box is 8 rows at N <= 8 (dak_gemm_opts.bn8: one more\n"
            "                   ring slot), 0: 16 rows (default 1)\n"
            "  --bn24 N         1: the B box is 24 rows at N 17..24 on 64-row tiles (dak_gemm_opts.bn24: 12 KiB\n"
            "                   of B a slot), 0: 32 rows (default 1)\n"
            "  --bnw N          1: at N 33..56 the wgmma tiles' B box is N rounded up to 8 rows, their wgmma\n"
            "                   m64n40 / n48 / n56 (dak_gemm_opts.bnw), 0: 64 rows, m64n64 (default 1)\n"
            "  --whole N        whole-K tiles, one a CTA (k_whole, dak_gemm_opts.whole): 1 where they apply (no\n"
            "                   host rows, N <= 64, a tile an SM), 2 auto (where 64-row tiles fill 80-100 %% of the\n"
            "                   SMs, or 45-80 %% at N <= 32 and K <= 4096; at K > 8192 and N > 8 only with\n"
            "                   clusters of 4; the default), 0: the split kernels only\n"
            "  --whole-cl N     with --whole, CTAs sharing each B stage by multicast: 0 (auto: 4 where K > 8192\n"
            "                   or N >= 41, or N >= 25 with tiles on 80 %% of the SMs, and 4 divides the tiles,\n"
            "                   else 1), 1, 2 or 4 (default 0)\n"
            "  --whole-stages N with --whole, k_whole's ring stages: 0 (as many as fit, the default) or 1..24\n"
            "                   (fewer than 4, or than 3 with --kstep, leave the split's plan)\n"
            "  --whole-window N with --whole, k_whole's stages of A in flight a CTA after the PDL wait: 0 (auto:\n"
            "                   4; with --whole-swap as many as hold 64 KiB of A) or 1..24 (24: the ring)\n"
            "  --whole-swap N   with --whole, A's rows as the wgmma's n (k_whole_sw: CTAs of any multiple of 8\n"
            "                   rows, M / SMs rounded up): 0 auto, 1 never, 2 where it applies, 3 as 0 over\n"
            "                   64-row tiles (default 0); the fixed section's grp-pdl column reads A packed in\n"
            "                   the row groups the GEMM asks for (dak_gemm_a_group_rows; with 3 also where\n"
            "                   k_whole does not apply and R >= N)\n"
            "  --hbm-window N   copies in flight per HBM-tier SM of the split kernels (dak_gemm_opts.hbm_window):\n"
            "                   0 (auto: 3 at N <= 8 without pdl, 2 on 64-row tiles at N 9-32 and on 128-row\n"
            "                   ones at N 17-32, else the whole ring) or 1..24 (24: the ring; default 0)\n"
            "  --stash N        with pdl, K chunks of A each HBM-tier CTA of the split kernel holds in registers\n"
            "                   before griddepcontrol.wait, their slots refilled right after it\n"
            "                   (dak_gemm_opts.stash; N <= 8): 0 (off), 1 or 2 (default 2)\n"
            "  --pdl-pre N      with pdl, copies of A each HBM-tier CTA of the split kernel issues before\n"
            "                   griddepcontrol.wait (dak_gemm_opts.pdl_pre): 0 (auto), 1..24 (at most the ring) or\n"
            "                   none\n"
            "  --prod2 N        1: two producer threads issue alternate ring slots (diagnostic; with PDL on the HBM\n"
            "                   tier of the 64-column kernels only; dak_gemm_opts.diag_prod2)\n"
            "  --dyn-slots N    ring slots per dynamic unit in the fixed section's dyn columns\n"
            "                   (dak_gemm_opts.dyn_slots): 0 (auto: 2 when N <= 32, else 4) or 1..16\n"
            "  --panel-fork N   diagnostic: 1: the panel kernel on a forked stream beside the tiled kernel\n"
            "                   (diag_panel_fork; default 0: the tiled kernel follows it in-stream)\n"
            "  --tile-align N   1: the HBM CTA count aligned to the tiles (dak_gemm_opts.tile_align), 0: all\n"
            "                   SMs (default 1)\n"
            "  --panel N        the split column's host rows through the A-stationary panel kernel: 0 never,\n"
            "                   1 always, 2 auto (where the tiled path would fetch a host tile twice)\n"
            "                   (default 2)\n"
            "  --sections LIST  sweep,congestion,amp,wave,diag,fixed,wgmma,smrate (default all but diag, fixed,\n"
            "                   wgmma and smrate; wgmma: the fixed section's one-launch mma.sync / wgmma / cuBLAS\n"
            "                   table alone, which fixed also runs unless --n is given; smrate: each SM's share\n"
            "                   of HBM, even and rate-weighted splits)\n"
            "  --baselines LIST cublas,prefetch,overlap,naive,uvm (default all)\n"
            "  --json FILE      JSON output (default dak-gemm.json)\n"
            "  --plan-only      print the split kernel's plan for every shape x N x ratio (tiles, CTAs, split, ring,\n"
            "                   workspace, kernel instantiation) and write it as JSON; nothing runs, no GPU needed\n"
            "  --sms N          with --plan-only: the GPU's SMs (default 132, the H200's)\n"
            "  --smem BYTES     with --plan-only: its opt-in shared memory per block (default 232448, the H200's)\n"
            "  --pdl N          with --plan-only: 1 plans PDL launches (default 0)\n");
}

/* comma list parsing with the shared argument checkers */
static int parse_list(const char *flag, const char *v, int kind, bench_cfg *c)
{
    char buf[1024];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "dak bench: %s: list too long\n", flag);
        return -1;
    }
    strcpy(buf, v);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n >= MAXL) {
            fprintf(stderr, "dak bench: %s: at most %d entries\n", flag, MAXL);
            return -1;
        }
        if (kind == 0) { /* shape MxK */
            char *x = strchr(t, 'x');
            if (!x) {
                fprintf(stderr, "dak bench: %s: expected MxK, got '%s'\n", flag, t);
                return -1;
            }
            *x = 0;
            if (arg_u32("dak bench", flag, t, 64, 1u << 20, &c->shapes[n][0]) ||
                arg_u32("dak bench", flag, x + 1, 64, 1u << 20, &c->shapes[n][1]))
                return -1;
            if (c->shapes[n][0] % 64 || c->shapes[n][1] % 64) {
                fprintf(stderr, "dak bench: %s: expected M and K multiples of 64, got %ux%u\n", flag,
                        c->shapes[n][0], c->shapes[n][1]);
                return -1;
            }
        } else if (kind == 1) {
            if (arg_u32("dak bench", flag, t, 1, 65536, &c->ns[n])) return -1;
        } else {
            double r;
            if (arg_f64("dak bench", flag, t, 0.0, 100.0, &r)) return -1;
            c->ratios[n] = r / 100.0;
        }
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "dak bench: %s: expected a non-empty list\n", flag);
        return -1;
    }
    if (kind == 0) c->nshapes = n;
    if (kind == 1) c->nn = n;
    if (kind == 2) c->nr = n;
    return 0;
}

static int parse_names(const char *flag, const char *v, const char *const *names, int **dst, int count)
{
    for (int i = 0; i < count; i++) *dst[i] = 0;
    char buf[256];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "dak bench: %s: list too long\n", flag);
        return -1;
    }
    strcpy(buf, v);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
        int found = 0;
        for (int i = 0; i < count; i++)
            if (!strcmp(t, names[i])) *dst[i] = 1, found = 1;
        if (!found) {
            fprintf(stderr, "dak bench: %s: unknown entry '%s' (expected one of", flag, t);
            for (int i = 0; i < count; i++) fprintf(stderr, " %s", names[i]);
            fprintf(stderr, ")\n");
            return -1;
        }
    }
    if (n == 0) {
        fprintf(stderr, "dak bench: %s: expected a non-empty list\n", flag);
        return -1;
    }
    return 0;
}

/* A flag whose value must be one of `n` listed values (`expected` words them for the message):
 * out of their range, arg_u32's message; in range but not listed, "expected <expected>". */
static int arg_u32_oneof(const char *flag, const char *v, const uint32_t *allowed, int n, const char *expected,
                         uint32_t *out)
{
    uint32_t lo = allowed[0], hi = allowed[0];
    for (int i = 1; i < n; i++) {
        if (allowed[i] < lo) lo = allowed[i];
        if (allowed[i] > hi) hi = allowed[i];
    }
    if (arg_u32("dak bench", flag, v, lo, hi, out)) return -1;
    for (int i = 0; i < n; i++)
        if (*out == allowed[i]) return 0;
    fprintf(stderr, "dak bench: %s: expected %s, got '%s'\n", flag, expected, v);
    return -1;
}

static int parse(int argc, char **argv, bench_cfg *c)
{
    memset(c, 0, sizeof *c);
    parse_list("--shapes", "7168x7168,28672x7168,11008x4096", 0, c);
    parse_list("--n", "1,8,64,512,1024", 1, c);
    parse_list("--ratios", "0,0.5,1,2,5,10,20,40,60,80,100", 2, c);
    c->reps = 10, c->host_sms = 0, c->window = 0, c->cluster = 8, c->layers = 8;
    dak_gemm_opts d; /* the library's defaults for the options the bench passes on */
    dak_gemm_opts_default(&d);
    c->panel = d.panel, c->tile_align = (uint32_t)d.tile_align, c->l2_hints = (uint32_t)d.l2_hints;
    c->fix_rs = (uint32_t)d.fix_rs, c->bn8 = (uint32_t)d.bn8, c->bn24 = (uint32_t)d.bn24, c->bnw = (uint32_t)d.bnw;
    c->stash = d.stash, c->whole = d.whole;
    c->sec_sweep = c->sec_cong = c->sec_amp = c->sec_wave = 1;
    c->base_cublas = c->base_prefetch = c->base_overlap = c->base_naive = c->base_uvm = 1;
    c->json = "dak-gemm.json";
    c->plan_sms = 132, c->plan_smem = 232448;
    static const char *const secn[] = {"sweep", "congestion", "amp", "wave", "diag", "fixed", "wgmma", "smrate"};
    static const char *const basen[] = {"cublas", "prefetch", "overlap", "naive", "uvm"};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
#define VAL() ((v = arg_value("dak bench", argc, argv, &i)) != NULL)
        if (arg_is(a, "--shapes")) {
            if (!VAL() || parse_list("--shapes", v, 0, c)) return -1;
        } else if (arg_is(a, "--n")) {
            if (!VAL() || parse_list("--n", v, 1, c)) return -1;
            c->n_given = 1;
        } else if (arg_is(a, "--ratios")) {
            if (!VAL() || parse_list("--ratios", v, 2, c)) return -1;
            c->r_given = 1;
        } else if (arg_is(a, "--reps")) {
            if (!VAL() || arg_u32("dak bench", "--reps", v, 1, 1000, &c->reps)) return -1;
        } else if (arg_is(a, "--host-sms")) {
            if (!VAL() || arg_u32("dak bench", "--host-sms", v, 0, 1024, &c->host_sms)) return -1;
        } else if (arg_is(a, "--window")) {
            if (!VAL() || arg_u32("dak bench", "--window", v, 0, 24, &c->window)) return -1;
        } else if (arg_is(a, "--cluster")) {
            static const uint32_t ok[] = {1, 2, 4, 8};
            if (!VAL() || arg_u32_oneof("--cluster", v, ok, 4, "1, 2, 4 or 8", &c->cluster)) return -1;
        } else if (arg_is(a, "--bm")) {
            static const uint32_t ok[] = {0, 64, 128, 256};
            if (!VAL() || arg_u32_oneof("--bm", v, ok, 4, "0 (auto), 64, 128 or 256", &c->bm)) return -1;
        } else if (arg_is(a, "--kstep")) {
            static const uint32_t ok[] = {0, 1, 2, 4};
            if (!VAL() || arg_u32_oneof("--kstep", v, ok, 4, "0 (auto), 1, 2 or 4", &c->kstep)) return -1;
        } else if (arg_is(a, "--tile-align")) {
            if (!VAL() || arg_u32("dak bench", "--tile-align", v, 0, 1, &c->tile_align)) return -1;
        } else if (arg_is(a, "--rotate")) {
            if (!VAL() || arg_u32("dak bench", "--rotate", v, 0, 1024, &c->rotate)) return -1;
        } else if (arg_is(a, "--fix-rs")) {
            if (!VAL() || arg_u32("dak bench", "--fix-rs", v, 0, 1, &c->fix_rs)) return -1;
        } else if (arg_is(a, "--panel-fork")) {
            if (!VAL() || arg_u32("dak bench", "--panel-fork", v, 0, 1, &c->panel_fork)) return -1;
        } else if (arg_is(a, "--bn8")) {
            if (!VAL() || arg_u32("dak bench", "--bn8", v, 0, 1, &c->bn8)) return -1;
        } else if (arg_is(a, "--bn24")) {
            if (!VAL() || arg_u32("dak bench", "--bn24", v, 0, 1, &c->bn24)) return -1;
        } else if (arg_is(a, "--bnw")) {
            if (!VAL() || arg_u32("dak bench", "--bnw", v, 0, 1, &c->bnw)) return -1;
        } else if (arg_is(a, "--whole")) {
            if (!VAL() || arg_u32("dak bench", "--whole", v, 0, 2, &c->whole)) return -1;
        } else if (arg_is(a, "--whole-cl")) {
            static const uint32_t ok[] = {0, 1, 2, 4};
            if (!VAL() || arg_u32_oneof("--whole-cl", v, ok, 4, "0 (auto), 1, 2 or 4", &c->whole_cl)) return -1;
        } else if (arg_is(a, "--whole-stages")) {
            if (!VAL() || arg_u32("dak bench", "--whole-stages", v, 0, 24, &c->whole_stages)) return -1;
        } else if (arg_is(a, "--whole-window")) {
            if (!VAL() || arg_u32("dak bench", "--whole-window", v, 0, 24, &c->whole_window)) return -1;
        } else if (arg_is(a, "--whole-swap")) {
            if (!VAL() || arg_u32("dak bench", "--whole-swap", v, 0, 3, &c->whole_swap)) return -1;
        } else if (arg_is(a, "--l2-hints")) {
            if (!VAL() || arg_u32("dak bench", "--l2-hints", v, 0, 1, &c->l2_hints)) return -1;
        } else if (arg_is(a, "--stash")) {
            if (!VAL() || arg_u32("dak bench", "--stash", v, 0, DAK_STASH_MAX, &c->stash)) return -1;
        } else if (arg_is(a, "--prod2")) {
            if (!VAL() || arg_u32("dak bench", "--prod2", v, 0, 1, &c->prod2)) return -1;
        } else if (arg_is(a, "--pdl-pre")) {
            if (!VAL() ||
                arg_u32_or_word("dak bench", "--pdl-pre", v, 0, 24, "none", DAK_GEMM_PDL_PRE_NONE, &c->pdl_pre))
                return -1;
        } else if (arg_is(a, "--hbm-window")) {
            if (!VAL() || arg_u32("dak bench", "--hbm-window", v, 0, 24, &c->hbm_window)) return -1;
        } else if (arg_is(a, "--dyn-slots")) {
            if (!VAL() || arg_u32("dak bench", "--dyn-slots", v, 0, 16, &c->dyn_slots)) return -1;
        } else if (arg_is(a, "--hbm-sms")) {
            if (!VAL() || arg_u32("dak bench", "--hbm-sms", v, 0, 1024, &c->hbm_sms)) return -1;
        } else if (arg_is(a, "--stages")) {
            if (!VAL() || arg_u32("dak bench", "--stages", v, 0, 24, &c->stages)) return -1;
            if (c->stages == 1) {
                fprintf(stderr, "dak bench: --stages: expected 0 (as many as fit) or 2..24, got '%s'\n", v);
                return -1;
            }
        } else if (arg_is(a, "--panel")) {
            if (!VAL() || arg_u32("dak bench", "--panel", v, 0, 2, &c->panel)) return -1;
        } else if (arg_is(a, "--bn")) {
            static const uint32_t ok[] = {0, 64, 128, 256};
            if (!VAL() || arg_u32_oneof("--bn", v, ok, 4, "0 (auto), 64, 128 or 256", &c->bn)) return -1;
        } else if (arg_is(a, "--layers")) {
            if (!VAL() || arg_u32("dak bench", "--layers", v, 1, 1000, &c->layers)) return -1;
        } else if (arg_is(a, "--sections")) {
            int *d[] = {&c->sec_sweep, &c->sec_cong, &c->sec_amp,   &c->sec_wave,
                        &c->sec_diag,  &c->sec_fixed, &c->sec_wgmma, &c->sec_smrate};
            if (!VAL() || parse_names("--sections", v, secn, d, 8)) return -1;
        } else if (arg_is(a, "--baselines")) {
            int *d[] = {&c->base_cublas, &c->base_prefetch, &c->base_overlap, &c->base_naive, &c->base_uvm};
            if (!VAL() || parse_names("--baselines", v, basen, d, 5)) return -1;
        } else if (arg_is(a, "--json")) {
            if (!VAL()) return -1;
            c->json = v;
        } else if (!strcmp(a, "--plan-only")) {
            c->plan_only = 1;
        } else if (arg_is(a, "--sms")) {
            if (!VAL() || arg_u32("dak bench", "--sms", v, 1, 1024, &c->plan_sms)) return -1;
        } else if (arg_is(a, "--smem")) {
            if (!VAL() || arg_bytes("dak bench", "--smem", v, &c->plan_smem)) return -1;
            if (c->plan_smem == 0 || c->plan_smem > (1u << 20)) {
                fprintf(stderr, "dak bench: --smem: expected 1 B to 1 MiB, got '%s'\n", v);
                return -1;
            }
        } else if (arg_is(a, "--pdl")) {
            if (!VAL() || arg_u32("dak bench", "--pdl", v, 0, 1, &c->plan_pdl)) return -1;
        } else {
            fprintf(stderr, "dak bench gemm: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
#undef VAL
    }
    return 0;
}

#ifdef DAK_HAVE_CUDA
/* One shape's buffers: A (random bf16) row-major and packed, each in HBM and in mapped host
 * memory; B and C wide enough for every N the sections time; and the extra copies of A that
 * the baselines asked for need. */
static void shape_alloc(bench_shape *s, const bench_cfg *c, int si)
{
    cm_err err;
    const uint32_t M = c->shapes[si][0], K = c->shapes[si][1];
    const size_t abytes = (size_t)M * K * 2;
    memset(s, 0, sizeof *s);
    s->M = M, s->K = K, s->abytes = abytes;
    /* --n's widest, and the sections' own N lists' */
    uint32_t nmax = bench_ablations_nmax(c, si == 0), fmax = bench_fixed_nmax(c);
    if (fmax > nmax) nmax = fmax;
    nmax = bench_list_max(c->ns, (size_t)c->nn, nmax ? nmax : 1);
    CK(cudaMalloc((void **)&s->Ad, abytes));
    CK(cudaHostAlloc((void **)&s->Ah, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaMalloc((void **)&s->B, (size_t)K * nmax * 2));
    CK(cudaMalloc((void **)&s->C, (size_t)M * nmax * 4));
    DK(dak_fill_random_bf16(s->Ad, (size_t)M * K, 1000 + si, NULL, &err));
    DK(dak_fill_random_bf16(s->B, (size_t)K * nmax, 2000 + si, NULL, &err));
    CK(cudaMemcpy(s->Ah, s->Ad, abytes, cudaMemcpyDeviceToHost));
    /* the split kernel's packed copies (same tile rows, 8 KiB blocks) */
    CK(cudaMalloc((void **)&s->Adp, abytes));
    CK(cudaHostAlloc((void **)&s->Ahp, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
    DK(dak_pack_rowmajor(s->Ad, s->Adp, M, K, &err));
    CK(cudaMemcpy(s->Ahp, s->Adp, abytes, cudaMemcpyDeviceToHost));
    if (c->base_overlap && c->sec_sweep) {
        CK(cudaMalloc((void **)&s->Adp2, abytes));
        CK(cudaMemcpy(s->Adp2, s->Adp, abytes, cudaMemcpyDeviceToDevice));
    }
    if (c->base_prefetch || c->base_overlap) {
        for (int i = 0; i < 2; i++) {
            CK(cudaMalloc((void **)&s->st[i], abytes));
            CK(cudaMemcpy(s->st[i], s->Ad, abytes, cudaMemcpyDeviceToDevice));
        }
    }
    /* unified memory only when it is small against the free HBM */
    size_t freeb = 0, totb = 0;
    CK(cudaMemGetInfo(&freeb, &totb));
    if (c->base_uvm && abytes <= (128ull << 20) && abytes * 4 < freeb) {
        if (cudaMallocManaged((void **)&s->um, abytes, cudaMemAttachGlobal) != cudaSuccess) s->um = NULL;
        else CK(cudaMemcpy(s->um, s->Ad, abytes, cudaMemcpyDeviceToDevice));
    }
}

static void shape_free(bench_shape *s)
{
    cudaFree(s->Ad);
    cudaFreeHost(s->Ah);
    cudaFree(s->Adp);
    if (s->Adp2) cudaFree(s->Adp2);
    cudaFreeHost(s->Ahp);
    cudaFree(s->B);
    cudaFree(s->C);
    if (s->st[0]) cudaFree(s->st[0]);
    if (s->st[1]) cudaFree(s->st[1]);
    if (s->um) cudaFree(s->um);
}

static int run(const bench_cfg *c)
{
    cm_err err;
    bench_run bench = {.c = c};
    DK(dak_gemm_ctx_create(&bench.ctx, &err));
    bench.sms = dak_gemm_ctx_sms(bench.ctx);
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    bench.smem_optin = prop.sharedMemPerBlockOptin;
    json_w w;
    FILE *jf = bench_json_begin(c->json, "dak gemm", &w);
    if (!jf) return 1;
    bench.w = &w;
    bench_json_machine(&w);
    json_kv_str(&w, "gpu", prop.name);
    json_kv_u64(&w, "sms", bench.sms);
    json_kv_u64(&w, "reps", c->reps);
    json_kv_u64(&w, "host_sms", c->host_sms);
    json_kv_u64(&w, "window", c->window);
    /* a failed smrate ends the run before the shapes; the document says so and stays whole */
    const int rc = bench_probes(&bench);
    if (rc) json_kv_str(&w, "error", "smrate failed");
    /* steps for the progress line: a sweep point, the fixed section's own (bench_fixed_steps), or any other section
     * of a shape */
    const uint64_t per_shape = (c->sec_sweep ? (uint64_t)c->nn * c->nr : 0) + (c->sec_wave ? 1 : 0) +
                               (c->sec_diag ? 1 : 0) + bench_fixed_steps(c);
    bench_progress_t prog;
    uint64_t done = 0;
    bench_progress_start(&prog, "dak bench gemm", per_shape * (uint64_t)c->nshapes + (c->sec_amp ? 1 : 0));
    bench.prog = &prog, bench.done = &done;
    for (int si = 0; si < c->nshapes && !rc; si++) {
        bench_shape s;
        shape_alloc(&s, c, si);
        if (c->sec_sweep) bench_sweep(&bench, &s);
        if (c->sec_amp && si == 0) bench_amp(&bench, &s), bench_step(&bench);
        if (c->sec_wave) bench_wave(&bench, &s), bench_step(&bench);
        if (c->sec_diag) bench_diag(&bench, &s), bench_step(&bench);
        if (c->sec_fixed || c->sec_wgmma) bench_fixed(&bench, &s);
        shape_free(&s);
    }
    if (!rc) bench_progress_end(&prog, done);
    json_obj_end(&w);
    fputc('\n', jf);
    fclose(jf);
    dak_gemm_ctx_destroy(bench.ctx);
    if (!rc) printf("\n# JSON written to %s\n", c->json);
    return rc;
}
#endif

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "attn")) return bench_attn(argc - 1, argv + 1);
    if (argc < 2 || strcmp(argv[1], "gemm")) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "dak bench: expected a benchmark name: gemm or attn (dak bench attn --help)\n");
        usage(stderr);
        return 2;
    }
    bench_cfg c;
    if (parse(argc, argv, &c)) return 2;
    if (c.plan_only) return bench_plan_only(&c);
#ifdef DAK_HAVE_CUDA
    return run(&c);
#else
    fprintf(stderr, "dak bench gemm: not built (configured without CUDA)\n");
    return 1;
#endif
}
