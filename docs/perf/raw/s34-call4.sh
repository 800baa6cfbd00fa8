#!/usr/bin/env bash
# Thirty-fourth session (lead), call 4: k_whole_sw auto only where R > 128 (each warpgroup half the rows), from call
# 3: every R <= 128 ran 10-50 % over the defaults (rows in pieces of the packed layout's 8 KiB blocks; even whole
# 64-row boxes in 8 KiB copies +14 % against k_whole's 16 KiB), 22016 x 4096 (R 168) 2.4-7 % under the split.
# (a) The GEMM bench's PDL graphs, the default (auto: k_whole_sw at N <= 64) against --whole-swap 1 (never), two
# rounds: 22016 x 4096 (Llama-2-7B's ffn_in, R 168), 27648 x 5120 (Llama-2-13B's, R 216), 28672 x 7168 (OPT-30B's
# fc1, R 224; the split there runs 101-102 % of the probe's bound).  Prediction: 22016 -2 to -7 % (call 2), 27648
# similar, 28672 x 7168 within +-2 % (both at the bound).  (b) dak decode, new/ against head/ (ad759b9), two rounds:
# Llama-2-7B b1 / b8 / b32 (ffn_in 43.2 -> 42.1 us at N 8, 45.1 -> 42.6 at N 32: -0.9 / -1.8 % a token), OPT-30B b1 /
# b8 (fc1: +-0.5 %).  (c) test_gemm_split in full and test_engine_gpu on new/.
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call4.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c4.tar.xz /tmp/c4
SH=22016x4096,27648x5120,28672x7168
for r in 1 2; do
  bench r$r-auto new --sections fixed --ratios 0 --reps 5 --shapes $SH --n 1,8,16,32,64
  bench r$r-never new --sections fixed --ratios 0 --reps 5 --shapes $SH --n 1,8,16,32,64 --whole-swap 1
done
for r in 1 2; do
  for b in 1 8 32; do
    decode r$r-l-b$b-new new llama-2-7b $b
    decode r$r-l-b$b-head head llama-2-7b $b
  done
  for b in 1 8; do
    decode r$r-o30-b$b-new new opt-30b $b
    decode r$r-o30-b$b-head head opt-30b $b
  done
done
call_test test_gemm_split new
call_test test_engine_gpu new
call_end c4
