/* dsb-mma-probe: the latency and rate of the tensor-core solve step's
 * instructions on this GPU (probe_mma.cu).  Prints a table; --json FILE
 * writes the same rows.  Usage: dsb-mma-probe [--json FILE] */
#include <stdio.h>
#include <string.h>

#include "probe_mma.h"

int main(int argc, char **argv)
{
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
        } else {
            fprintf(stderr, "dsb-mma-probe: unknown argument '%s'; usage: dsb-mma-probe [--json FILE]\n",
                    argv[i]);
            return 2;
        }
    }
    static const char *const names[] = {"imma.m16n8k32.s8", "bmma.m16n8k128.and.popc", "lds.chase"};
    static const struct {
        int kind, chains;
        unsigned warps, blocks;
    } cases[] = {
        {DSB_PROBE_LDS, 1, 1, 1},   {DSB_PROBE_IMMA, 1, 1, 1},  {DSB_PROBE_IMMA, 2, 1, 1},
        {DSB_PROBE_IMMA, 4, 1, 1},  {DSB_PROBE_IMMA, 8, 1, 1},  {DSB_PROBE_IMMA, 4, 4, 1},
        {DSB_PROBE_IMMA, 4, 8, 1},  {DSB_PROBE_IMMA, 4, 16, 1}, {DSB_PROBE_IMMA, 4, 8, 132},
        {DSB_PROBE_BMMA, 1, 1, 1},  {DSB_PROBE_BMMA, 2, 1, 1},  {DSB_PROBE_BMMA, 4, 1, 1},
        {DSB_PROBE_BMMA, 8, 1, 1},  {DSB_PROBE_BMMA, 4, 4, 1},  {DSB_PROBE_BMMA, 4, 8, 1},
        {DSB_PROBE_BMMA, 4, 16, 1}, {DSB_PROBE_BMMA, 4, 8, 132},
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) {
        fprintf(stderr, "dsb-mma-probe: cannot write %s\n", json);
        return 1;
    }
    if (jf) fprintf(jf, "{\"tool\":\"dsb-mma-probe\",\"rows\":[");
    printf("%-26s %6s %5s %6s | %12s %12s %7s\n", "instruction", "chains", "warps", "blocks",
           "cyc/op warp", "cyc/op SM", "MHz");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        dsb_probe_result r;
        if (dsb_probe_mma(cases[i].kind, cases[i].chains, cases[i].warps, cases[i].blocks, 2000u,
                          &r)) {
            fprintf(stderr, "dsb-mma-probe: case %d (%s) failed\n", i, names[cases[i].kind]);
            failed = 1;
            continue;
        }
        printf("%-26s %6d %5u %6u | %12.1f %12.2f %7.0f\n", names[cases[i].kind], cases[i].chains,
               cases[i].warps, cases[i].blocks, r.cycles_per_op, r.sm_cycles_per_op, r.mhz);
        if (jf)
            fprintf(jf,
                    "%s{\"instruction\":\"%s\",\"chains\":%d,\"warps\":%u,\"blocks\":%u,"
                    "\"cycles_per_op_warp\":%.3f,\"cycles_per_op_sm\":%.3f,\"mhz\":%.1f}",
                    i ? "," : "", names[cases[i].kind], cases[i].chains, cases[i].warps,
                    cases[i].blocks, r.cycles_per_op, r.sm_cycles_per_op, r.mhz);
    }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    return failed;
}
