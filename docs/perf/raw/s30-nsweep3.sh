#!/usr/bin/env bash
# Thirtieth session (lead), call 6: the third shape of issue 7, 28672x7168, at every width N = 1..64 with the landed
# plans (93997de; the same binary as call 5), PDL graphs against cuBLAS's graph.  Prediction: 101-104 % of the bound at
# N <= 32 (earlier sessions' points), ~98 % (98.5 us) at N 33-40 on 64-row whole tiles, ~96 % at N 41-64; no step
# above ~2 % between neighbouring widths but at the plans' boundaries (8/9, 16/17, 24/25, 32/33, 40/41, 56/57).
# Not run: no machine could be had (four starts refused, then too little device time); the carry is the build of
# 93997de's dak (tools/dak/dak) as new/ in a tar.xz.
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-nsweep3.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c5.tar.xz /tmp/nsweep3
for q in 1 17 33 49; do
  bench sw-28672x7168-$q new --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n $(seq -s, $q $((q + 15)))
done
call_end s30-nsweep3
