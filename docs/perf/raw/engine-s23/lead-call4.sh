#!/usr/bin/env bash
# session 23, call 4 (lead): the merged tree's GPU tests (test_engine_gpu with the double-buffered checkpoint load and
# the parallel reads; the stream tests after the stream tidy), and the checkpoint load on a 16-core machine:
# dak ckpt read --threads 1/4/8/16 (page cache warm) and dak decode --weights with the old load (v7) against the new (v8)
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s23-carry
cd "$(dirname "$0")/../../../.." && (cd $C && tar xJf bins3.tar.xz && tar xJf bins4.tar.xz)
R=$OUT/r; mkdir -p $R
timeout 240 $C/v8/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)"
grep -m8 FAIL $R/test_engine_gpu.txt
nproc; free -g | head -2
t0=$(date +%s.%N); timeout 60 $C/v8/dak ckpt synth --model configs/opt-6.7b --layers 8 --out /tmp/ck.safetensors > $R/synth.txt 2>&1
echo "synth rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s, $(du -h /tmp/ck.safetensors | cut -f1)"
for t in 1 4 8 16 1 8; do
  timeout 60 $C/v8/dak ckpt read --weights /tmp/ck.safetensors --threads $t --json $R/read-t$t.json > $R/read-t$t.txt 2>/dev/null
  echo "read threads $t rc=$?: $(tail -2 $R/read-t$t.txt | tr '\n' ' ')"; done
for v in v7 v8 v7 v8; do
  t0=$(date +%s.%N)
  timeout 90 $C/$v/dak decode --model configs/opt-6.7b --layers 8 --weights /tmp/ck.safetensors --batch 8 --prompt 4 \
    --tokens 4 --ratios 0 --baseline direct > $R/load-$v.txt 2>&1
  echo "decode --weights $v rc=$?: $(awk "BEGIN{print $(date +%s.%N) - $t0}") s wall"; done
timeout 100 $C/v8/test_stream_gpu > $R/test_stream_gpu.txt 2>&1; echo "test_stream_gpu rc=$?: $(tail -1 $R/test_stream_gpu.txt)"
timeout 100 $C/v8/test_stream_net_gpu > $R/test_stream_net_gpu.txt 2>&1; echo "test_stream_net_gpu rc=$?: $(tail -1 $R/test_stream_net_gpu.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
