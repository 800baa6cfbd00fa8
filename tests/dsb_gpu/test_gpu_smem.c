/* Eq. (6) of seed 000 (shared memory of one request block), checked against
 * values worked out by hand, and the 48 KiB admission of the Table III grid:
 * the paper's 120 configurations (30 format/n/B rows x 4 K).  CPU only. */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "dsb/gpu.h"

int main(void)
{
    /* PM1 n=512 B=8: n_p=512, W=16, W_p=20 (4*5): 4*512*20 + 8*8*20 + 4*512 + 8*8 + 1024 */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 512, 8), 40960 + 1280 + 2048 + 64 + 1024,
                 "pm1 512 8");
    /* PM1 n=128 B=8: W=4, W_p=4: 4*128*4 + 8*8*4 + 512 + 64 + 1024 */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 128, 8), 2048 + 256 + 512 + 64 + 1024,
                 "pm1 128 8");
    /* PM1 n=192: W=6 -> W_p=12 (4*3) */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 192, 1), 4 * 192 * 12 + 8 * 12 + 768 + 8 + 1024,
                 "pm1 192 1");
    /* TERNARY n=256 B=8: W=8 -> W_p=12; 2 planes + row constants 4 n_p */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_TERNARY, 256, 8),
                 2 * 4 * 256 * 12 + 4 * 256 + 8 * 8 * 12 + 4 * 256 + 64 + 1024, "ternary 256 8");
    /* INT8 n=128 B=8: L_s = 144 (16*9): 128*144 + 2*8*144 + 512 + 64 + 1024 */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_INT8, 128, 8), 18432 + 2304 + 512 + 64 + 1024,
                 "int8 128 8");
    /* INT8 n=192: L_s = 208 (16*13) */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_INT8, 192, 8), 192 * 208 + 2 * 8 * 208 + 768 + 64 + 1024,
                 "int8 192 8");
    /* INT8 n=64: L_s = 80 (16*5) */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_INT8, 64, 32), 64 * 80 + 2 * 32 * 80 + 256 + 256 + 1024,
                 "int8 64 32");
    /* n not a multiple of 32 pads to n_p */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 100, 2), dsb_gpu_smem_bytes(DSB_FMT_PM1, 128, 2),
                 "pm1 100 pads to 128");
    /* B n_p > 4096 does not fit one block */
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 128, 33), 0, "pm1 128 33");
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_INT8, 192, 32), 0, "int8 192 32");
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 0, 1), 0, "n = 0");
    CHECK_EQ_I64(dsb_gpu_smem_bytes(DSB_FMT_PM1, 64, 0), 0, "B = 0");

    /* the Table III grid under the 48 KiB rule: exactly the paper's 30 rows */
    static const char *expect[] = {
        "pm1 64 1", "pm1 64 8", "pm1 64 32", "pm1 128 1", "pm1 128 8", "pm1 128 32",
        "pm1 192 1", "pm1 192 8", "pm1 256 1", "pm1 256 8", "pm1 512 1", "pm1 512 8",
        "ternary 64 1", "ternary 64 8", "ternary 64 32", "ternary 128 1", "ternary 128 8",
        "ternary 128 32", "ternary 192 1", "ternary 192 8", "ternary 256 1", "ternary 256 8",
        "int8 64 1", "int8 64 8", "int8 64 32", "int8 128 1", "int8 128 8", "int8 128 32",
        "int8 192 1", "int8 192 8"};
    static const dsb_format fmts[] = {DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8};
    static const uint32_t ns[] = {64, 128, 192, 256, 512}, Bs[] = {1, 8, 32};
    size_t k = 0, admitted = 0;
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 3; j++) {
                size_t s = dsb_gpu_smem_bytes(fmts[f], ns[i], Bs[j]);
                if (s == 0 || s > 48u * 1024u) continue;
                char name[64];
                snprintf(name, sizeof name, "%s %u %u", dsb_format_name(fmts[f]), ns[i], Bs[j]);
                admitted++;
                CHECK(k < 30 && !strcmp(name, expect[k]), "admitted '%s', expected '%s'", name,
                      k < 30 ? expect[k] : "(none)");
                k++;
            }
    CHECK_EQ_I64(admitted * 4, 120, "configurations admitted x 4 K");
    return check_done();
}
