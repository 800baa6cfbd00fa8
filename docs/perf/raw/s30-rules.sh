#!/usr/bin/env bash
# Thirtieth session (lead), call 4: the rules call 3 pointed to, landed in plan.c, against the head's binary (d648a38):
# bnw's box with the ring kept at 4 slots (BNW_SLOTS); 64-row whole tiles at N 33..40 where they come whole (wide64:
# 7168^2, 28672x7168, and by the rule also 4096x4096, 4096x11008, 16384x4096, not measured before: here with --bm 128
# beside them); 128-row tiles with a window of 2 at N 17..32 where 64-row ones are ragged (11008x4096).
# Prediction (call 3's columns): 7168^2 N 33-40 27.3 us (head 28.3-31.1), N 41-48 ~27.9 (head 28.2-28.5);
# 11008x4096 N 17-32 -0.15-0.45, N 33-48 24.7-25.2 (head 25.5-27.1); 28672x7168 N 36-40 ~97 (head 102-106), N 48
# ~100 (head ~101.6); N = 24 on 7168^2 unchanged.  The engine (Llama-2-7B b 33 / 40, OPT-6.7B b 40) -0.5-2 %.
# test_gemm_split and test_engine_gpu in full first.
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-rules.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c4.tar.xz /tmp/rules
call_test test_gemm_split new
for r in 1 2; do
  for bin in new head; do
    bench r$r-$bin-a $bin --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 17,24,32,33,36,40,44,48,56
    bench r$r-$bin-b $bin --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n 24,36,40,48
    bench r$r-$bin-e $bin --sections fixed --ratios 0 --reps 5 --shapes 4096x4096,4096x11008,16384x4096 --n 24,33,36,40
  done
  bench r$r-m128-e new --sections fixed --ratios 0 --reps 5 --shapes 4096x4096,4096x11008,16384x4096 --n 33,36,40 --bm 128
done
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
for r in 1 2; do
  for c in "llama-2-7b 33" "llama-2-7b 40" "opt-6.7b 40" "llama-2-7b 24"; do
    set -- $c
    for bin in new head; do
      t=r$r-dec-$1-b$2-$bin
      timeout 80 $W/$bin/dak decode --model configs/$1 --batch $2 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
        --json $R/$t.json > $R/$t.txt 2>&1
      echo "$t rc=$? ${SECONDS}s: TPOT $(row $R/$t.txt) ms" >> $S
    done
  done
done
call_test test_engine_gpu new
call_end s30-rules
