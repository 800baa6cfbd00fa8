#!/usr/bin/env bash
# session 20, call 1: engine breakdown + GEMM shapes of the engine's layers
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s20-carry
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/nvsmi.txt 2>&1
( time $C/test_engine_gpu ) > $OUT/test_engine_gpu.log 2>&1; echo "test rc=$?" >> $OUT/test_engine_gpu.log
tail -3 $OUT/test_engine_gpu.log
{
  $C/dak decode --model configs/opt-6.7b --batch 8 --ratios 0,10 --breakdown 7 --json $OUT/dec-opt-b8.json
  $C/dak decode --model configs/opt-6.7b --batch 8 --ratios 0 --baseline direct --pdl 0 --breakdown 7 --json $OUT/dec-opt-b8-nopdl.json
  $C/dak decode --model configs/llama-2-7b --batch 8 --ratios 0 --baseline direct --breakdown 7 --json $OUT/dec-llama-b8.json
  $C/dak decode --model configs/opt-6.7b --batch 64 --ratios 0 --baseline direct --breakdown 7 --json $OUT/dec-opt-b64.json
} > $OUT/decode.txt 2> $OUT/decode.err
echo "decode rc=$?"
timeout 200 $C/dak bench gemm --sections fixed --shapes 4096x4096,12288x4096,16384x4096,4096x16384,11008x4096,22016x4096,4096x11008,50304x4096 --n 8,64 --ratios 0 --json $OUT/gemm-layers.json > $OUT/gemm-layers.txt 2> $OUT/gemm-layers.err
echo "gemm rc=$?"
