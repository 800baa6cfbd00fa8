#!/usr/bin/env bash
# Thirty-third session (lead), call 4: the build to land.  k_whole's auto cluster 4 where K > 8192 (every N; k_whole
# there at N > 8 only so) or N >= 41 (call 3: 7168^2 -0.6 to -3.1 % at N 41-64 against clusters of 1); the engine asks
# for none (dak_eng_opts.gemm_whole_cluster 1: call 3's dak decode with the clusters, N >= 48 then, was b8 / b32 +0.2
# to +0.4 %, b64 -0.1 / -0.4 %), `dak decode --gemm-whole-cl 0|1`.  (a) The GPU suites (test_engine_gpu: k_whole in
# the auto clusters of 4 at batch 48, the option's refusals; the first try of this call, clusters of 4 asked for at
# every ratio, failed where a baseline's HBM rows came to 70 / 78 tiles: the engine now takes 0 or 1 only); the
# measurements run whatever the tests say (they do not change what is measured).  (b) dak decode OPT-30B b1 / b8 / b32 / b64, the default against --gemm-whole-cl 0,
# two rounds.  Prediction: as call 3 (b8 / b32 +0.3 %, b64 -0.3 %, b1 +-0.2).  (c) Why the clusters do not carry into
# the step: the stamps of the middle layer at b8 (8 layers, a full copy in each tier), both ways: ffn_out's CTAs'
# SMs, waits and streaming.  (d) The GEMM bench's record of the landed defaults: 7168^2 every N 1..64, 7168x28672 at
# twelve N.  Prediction: 7168^2 as call 3's clusters of 4 at N 41-64 (1.01-1.08x cuBLAS), 7168x28672 92.4-95.2 us.
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-final.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c4.tar.xz /tmp/final
call_test test_gemm_split fin
call_test test_engine_gpu fin
for r in 1 2; do
  for b in 1 8 32 64; do
    decode r$r-b$b-def fin opt-30b $b
    decode r$r-b$b-cl0 fin opt-30b $b --gemm-whole-cl 0
  done
done
for c in 1 0; do
  timeout 120 $W/fin/dak decode --model configs/opt-30b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    --layers 8 --deploy 0 --gemm-whole-cl $c --diag-times $R/st-b8-cl$c-times.json > $R/st-b8-cl$c.txt 2>&1
  echo "st-b8-cl$c rc=$? ${SECONDS}s" >> $S
done
for q in 1 17 33 49; do
  bench sq-$q fin --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, $q $((q + 15)))
done
bench k4 fin --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 1,2,4,8,12,16,24,32,40,48,56,64
call_end s33-final
