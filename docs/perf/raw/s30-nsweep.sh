#!/usr/bin/env bash
# Thirtieth session (lead), call 2: the N sweep of call 1 (s30-bnw.sh) again, in lists of 16 (the bench's limit, which
# call 1's lists of 32 hit): the decode GEMM at every width N = 1..64 on 7168^2 and 11008x4096, the change's binary
# (opts.bnw on), the fixed section's PDL graph against cuBLAS's graph.  Prediction: as call 1's (a).
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-nsweep.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c2.tar.xz /tmp/nsweep
for s in 7168x7168 11008x4096; do
  for q in 1 17 33 49; do
    bench sw-$s-$q new --sections fixed --ratios 0 --reps 5 --shapes $s --n $(seq -s, $q $((q + 15)))
  done
done
call_end s30-nsweep
