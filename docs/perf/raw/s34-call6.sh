#!/usr/bin/env bash
# Thirty-fourth session (lead), call 6: the build that lands (k_whole_sw auto where R > 128; the engine asks for it
# only with gemm_whole_swap 0, `dak decode --gemm-whole-swap 0`).  (a) test_engine_gpu (the option's refusal);
# (b) the GEMM bench's record of 28672 x 7168 (OPT-30B's fc1, now k_whole_sw at N <= 64) at every N 33..64, where the
# split had 94.9 % of the bound at N 59, 61, 62, 64 and 0.98-0.99x cuBLAS at N 41-47 (thirty-second session).
# Prediction: 92-95 us at every N (101-105 % of the bound), >= 1.02x cuBLAS.  (c) dak decode Llama-2-7B b1 with
# --gemm-whole-swap 0 against the default (the flag's path; call 4: -1.7 %).
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call6.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c6.tar.xz /tmp/c6
call_test test_engine_gpu fin
bench sw-33 fin --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n $(seq -s, 33 48)
bench sw-49 fin --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n $(seq -s, 49 64)
for r in 1 2; do
  decode r$r-l-b1-sw0 fin llama-2-7b 1 --gemm-whole-swap 0
  decode r$r-l-b1-def fin llama-2-7b 1
done
call_end c6
