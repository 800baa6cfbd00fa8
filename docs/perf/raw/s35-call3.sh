#!/usr/bin/env bash
# Thirty-fifth session, call 3.  (1) The K pair (whole_kpair 2, built this session): 7168^2 as 56 128-row tiles on 112
# CTAs in clusters of 2, each CTA half of K with its B rows, the halves summed through distributed shared memory.  Why:
# at N 25-64 k_whole on 64-row tiles is at 88.9-94.2 % of the bound, and what grows with N is B's bytes into each SM
# (N / 64 of A's at 64 rows; half that at 128).  Prediction: N 1-16 within +-1 % of k_whole (the same bytes, 2x the
# stage size, 4-6 stages instead of 9-12); N 32-64 0.5-1.2 us faster (25.6-26.8 -> ~25.0-25.5 us, >= 95 % of the
# bound); if B's SM traffic is not what costs, +-1 % everywhere.  test_gemm_split --whole first (the K pair's cases on
# 7168^2 and 1152 x 1024, PDL x3, bf16 with kstep 1).  (2) s35-fit again (call 2's build wrote to a kernel's missing
# dynamic shared memory); its prediction in s35-call2.sh.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35c.tar.xz /tmp/c3
$W/fit/s35-fit > $R/fit.txt 2>&1; echo "fit rc=$? ${SECONDS}s" >> $S
call_test test_gemm_split kp --whole
for r in 1 2; do
  bench r$r-def kp --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,24,32,40,48,56,64
  bench r$r-kp kp --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,24,32,40,48,56,64 --whole 1 \
    --whole-kpair 2
done
cat $R/fit.txt
call_end c3
