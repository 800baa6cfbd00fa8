#!/usr/bin/env bash
# Thirty-first session (lead), call 3: whole-K tiles on their auto rule (--whole 2: 64-row tiles filling 80-100 % of
# the SMs, stages of 2 blocks, no multicast; calls 1-2 chose those) at every width N 1..64 on 7168^2, and on
# 7168x28672 (the same 112 tiles, K 4x longer), against the split in the same binary, interleaved.
# Prediction (call 2): 7168^2 N 1-32 3-4 % under the split as PDL graphs (N 8: 24.4 against 25.4 us, 99 % of the
# bound), N 33-64 within 1 %; 7168x28672 like 7168^2 (the split's 112 tiles there are whole too, so only the
# stage size and the prologue differ: within 2 %).
# carry ["build-s31-carry"]; OUT=... bash docs/perf/raw/s31-whole3.sh
. docs/perf/raw/call-lib.sh
call_begin build-s31-carry/s31c3.tar.xz /tmp/whole3
call_test test_gemm_split new --whole
grep -q ', 0 failed' $R/test_gemm_split.txt || { call_end s31-whole3; exit 0; }
for q in 1 17 33 49; do
  for w in 0 2; do
    bench sw-$q-w$w new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, $q $((q + 15))) --whole $w
  done
done
for w in 0 2; do
  bench k4-w$w new --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 1,8,24,32,48,64 --whole $w
done
call_end s31-whole3
