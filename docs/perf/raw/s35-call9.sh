#!/usr/bin/env bash
# Thirty-fifth session, call 9: the final build (005d221 and the auto clusters of 4 from N 25 where the tiles fill 80 %
# of the SMs, plan.c's WHOLE_CL_FILLS_MIN_N), for the records: test_gemm_split --whole (k_whole, k_whole_sw; the auto
# clusters at N 25-40 on 7168^2 now), then 7168^2 and 11008 x 4096 at N 1-64, PDL graphs, against the head's binary
# (3a49695), two rounds.  Prediction: 7168^2 as calls 6 and 8 (N 25-40 now 24.8-25.1 us, >= 96 % of the bound; N 56-64
# ~94 %), 11008 x 4096 unchanged (the split).
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35g.tar.xz /tmp/c9
call_test test_gemm_split new --whole
SH="--sections fixed --ratios 0 --reps 5 --n 1,8,16,17,24,25,32,33,40,48,56,64 --shapes 7168x7168,11008x4096"
for r in 1 2; do
  bench r$r-head head $SH
  bench r$r-new new $SH
done
call_end c9
