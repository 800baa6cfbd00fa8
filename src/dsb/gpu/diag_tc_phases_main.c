/* dsb-tc-phases FORMAT N B K: where the cycles of one tensor-core solve step go
 * (diag_tc_phases.cu).  Prints one table: cycles per step and phase, per warp. */
#include <stdio.h>

#include "common/args.h"
#include "diag_tc_phases.h"

int main(int argc, char **argv)
{
    const char *P = "dsb-tc-phases";
    if (argc != 5) {
        fprintf(stderr, "usage: %s int8|pm1|ternary N B K\n", P);
        return 2;
    }
    dsb_format f;
    uint32_t n, B, K;
    if (dsb_format_parse(argv[1], &f) || f == DSB_FMT_AUTO) {
        fprintf(stderr, "%s: format '%s': expected int8, pm1 or ternary\n", P, argv[1]);
        return 2;
    }
    if (arg_u32(P, "N", argv[2], 1, 4096, &n) || arg_u32(P, "B", argv[3], 1, 256, &B) ||
        arg_u32(P, "K", argv[4], 2, 1000000, &K))
        return 2;
    dsb_tc_phases_result r;
    char err[256];
    if (dsb_tc_phases_run(f, n, B, K, &r, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", P, err);
        return 1;
    }
    printf("%s n=%u B=%u K=%u: %u tiles per warp, %u k steps; solve %llu cycles, %.1f ns\n",
           dsb_format_name(f), n, B, K, r.tiles_per_warp, r.ksteps, r.solve_cycles, r.solve_ns);
    printf("cycles per step   top   sums  update barrier  total\n");
    for (int w = 0; w < 8; w++) {
        double t = 0;
        printf("warp %d      ", w);
        for (int i = 0; i < 4; i++) {
            printf(" %6.1f", (double)r.cycles_per_phase[w][i] / K);
            t += (double)r.cycles_per_phase[w][i] / K;
        }
        printf(" %6.1f\n", t);
    }
    return 0;
}
