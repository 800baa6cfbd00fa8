#!/usr/bin/env bash
# Thirty-sixth session, call 4: the landed build (74ea0b5): test_gemm_split in full (the grouped cases on 11008 x 4096
# and 4096^2 too), test_engine_gpu with gemm_whole_swap 3 the default (V_DEFAULTS cases), and dak decode at the
# defaults against --gemm-whole-swap 1, Llama-2-7B b8 and OPT-6.7B b8, two rounds.
# Prediction: all pass; the defaults as call 3's swap 3 (-3.6 % and -1.9 %).
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36d.tar.xz /tmp/c4
call_test test_gemm_split new
call_test test_engine_gpu new
for r in 1 2; do
  for mb in "llama-2-7b 8" "opt-6.7b 8"; do
    set -- $mb; mo=$1; b=$2
    decode r$r-$mo-b$b-def new $mo $b
    decode r$r-$mo-b$b-sw1 new $mo $b --gemm-whole-swap 1
  done
done
call_end c4
