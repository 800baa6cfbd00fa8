#!/usr/bin/env bash
# session 21, call 5 (lead, final): the landed tree (028ace9): the engine's and the streaming solver's GPU tests, the
# setup's decode demo
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins5.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v5
( time timeout 150 $B/test_engine_gpu ) > $R/test_engine_gpu.log 2>&1; echo "engine rc=$?: $(grep -E 'passed' $R/test_engine_gpu.log | tail -1)"
grep -E "diag_skip|checkpoint \(" $R/test_engine_gpu.log | head -5
( time timeout 120 $B/test_stream_gpu ) > $R/test_stream_gpu.log 2>&1; echo "stream rc=$?: $(grep -E 'passed' $R/test_stream_gpu.log | tail -1)"
( time timeout 120 $B/test_stream_net_gpu ) > $R/test_stream_net_gpu.log 2>&1; echo "stream net rc=$?: $(grep -E 'passed' $R/test_stream_net_gpu.log | tail -1)"
timeout 60 $B/dak decode --tiny opt --prompt-ids 5,6,7 --tokens 6 --ratios 0,30 > $R/tiny.txt 2>&1; echo "tiny decode rc=$?"; grep -E "sequence 0" $R/tiny.txt
cd $OUT && tar czf r.tgz r && rm -rf r
