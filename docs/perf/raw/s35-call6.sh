#!/usr/bin/env bash
# Thirty-fifth session, call 6: the build that lands (k_whole: each warpgroup's sums staged apart, the last S stages
# not released, no cluster barrier at the end; k_whole_sw at R 64 in one copy a stage).  Call 5 measured the same
# kernels (new/ with DAK_NOSYNC=1).  Here: test_gemm_split (every group, full), test_engine_gpu; then the records:
# PDL graphs of 7168^2, 7168 x 28672 and 4096^2 (k_whole) at N 1-64 against head/, two rounds; the 11008 x 4096
# (split, unchanged) once; dak decode Llama-2-7B b1 / b8 / b32, OPT-6.7B b8, OPT-30B b8, head/ against new/, two rounds.
# Prediction: as call 5's nosync column (7168^2 -0.1 to -0.9 us at every N, 7168 x 28672 -0.2 to -1.0, 4096^2 -0.05 to
# -0.2); decode -0.2 to -0.5 % a token where o_proj runs k_whole's 64-row tiles.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35f.tar.xz /tmp/c6
call_test test_gemm_split new
call_test test_engine_gpu new
SH="--sections fixed --ratios 0 --reps 5 --n 1,8,16,24,32,40,48,56,64"
for r in 1 2; do
  bench r$r-head head $SH --shapes 7168x7168,7168x28672,4096x4096
  bench r$r-new new $SH --shapes 7168x7168,7168x28672,4096x4096
done
bench r1-new-11008 new $SH --shapes 11008x4096
for r in 1 2; do
  for b in head new; do
    decode r$r-l-b1-$b $b llama-2-7b 1
    decode r$r-l-b8-$b $b llama-2-7b 8
    decode r$r-l-b32-$b $b llama-2-7b 32
    decode r$r-o67-b8-$b $b opt-6.7b 8
    decode r$r-o30-b8-$b $b opt-30b 8
  done
done
call_end c6
