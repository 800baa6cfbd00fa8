#!/usr/bin/env bash
# Thirtieth session (lead), call 5: the width sweep of call 2 again with the landed plans (93997de: bnw on 4 slots,
# 64-row whole tiles at N 33-40 where K >= 7168, 128-row tiles with a window of 2 at N 17-32 where 64-row ones are
# ragged), every N 1..64 on 7168^2 and 11008x4096, PDL graphs against cuBLAS's graph.  Prediction: call 4's points
# (7168^2 N 33-40 ~27.3 us, N 41-64 ~28.3; 11008x4096 N 17-32 ~25.9, N 33-40 ~25.2), no step larger than ~1 us
# between neighbouring widths.
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-nsweep2.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c5.tar.xz /tmp/nsweep2
for s in 7168x7168 11008x4096; do
  for q in 1 17 33 49; do
    bench sw-$s-$q new --sections fixed --ratios 0 --reps 5 --shapes $s --n $(seq -s, $q $((q + 15)))
  done
done
call_end s30-nsweep2
