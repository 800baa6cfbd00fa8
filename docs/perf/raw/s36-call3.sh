#!/usr/bin/env bash
# Thirty-sixth session, call 3: the engine's GEMMs with A in row groups, four policies (dak decode --gemm-whole-swap):
# 1 (the default so far: no k_whole_sw), 0 (auto: k_whole_sw where R > 128, A grouped where R > 64 and not a
# multiple of 64), 2 (k_whole_sw everywhere, every all-HBM matrix grouped), 3 (as 0, and k_whole_sw, grouped, wherever
# k_whole does not apply and R >= N: no split kernel in the step).  Llama-2-7B b1 / b8 / b32, OPT-6.7B b1 / b8 / b32,
# OPT-30B b1 / b8, r = 0 deployed, two rounds; test_gemm_split --whole and test_engine_gpu (V_GROUPS / V_SWAP3) first.
# Prediction: 3 about 2 on Llama-2-7B (-2.5 to -7 % against 1; o_proj keeps k_whole), OPT-6.7B -0.5 to -1 % (fc1 16384
# and fc2 4096 x 16384 leave the split), OPT-30B as 0 at b1 / b8 (-0.4 %).
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36c.tar.xz /tmp/c3
call_test test_gemm_split new --whole
call_test test_engine_gpu new
for r in 1 2; do
  for mb in "llama-2-7b 1" "llama-2-7b 8" "llama-2-7b 32" "opt-6.7b 1" "opt-6.7b 8" "opt-6.7b 32" "opt-30b 1" \
            "opt-30b 8"; do
    set -- $mb; mo=$1; b=$2
    for sw in 1 0 2 3; do decode r$r-$mo-b$b-sw$sw new $mo $b --gemm-whole-swap $sw; done
  done
done
call_end c3
