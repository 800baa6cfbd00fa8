#!/usr/bin/env bash
# session 24, call 1 (helper-41): the fused q/k/v post-processing's GPU tests, then a first A/B (one round)
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s24-fuse
mkdir -p $C/b && (cd $C/b && tar xJf ../bins1.tar.xz)
R=$OUT/fuse-call1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt 2>&1
( timeout 185 $C/b/tests/dak_attn/test_attn_gpu > $R/test_attn_gpu.txt 2>&1; echo "rc=$?" >> $R/test_attn_gpu.txt ) &
( timeout 185 $C/b/tests/dak_engine/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "rc=$?" >> $R/test_engine_gpu.txt ) &
wait
echo "test_attn_gpu: $(tail -2 $R/test_attn_gpu.txt | tr '\n' ' ')"; grep -m6 "FAIL\|fused q/k/v" $R/test_attn_gpu.txt
echo "test_engine_gpu: $(tail -2 $R/test_engine_gpu.txt | tr '\n' ' ')"; grep -m8 "FAIL" $R/test_engine_gpu.txt
grep "fused q/k/v" $R/test_engine_gpu.txt | head -12
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2 b=$3 ratio=$4; shift 4
  timeout 24 $C/b/tools/dak/dak decode --model configs/$model --batch $b --prompt 8 --tokens 24 --ratios $ratio --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
run opt-6.7b-b8-unf-1 opt-6.7b 8 0 --fuse-qkv 0
run opt-6.7b-b8-fus-1 opt-6.7b 8 0 --fuse-qkv 1
run llama-2-7b-b8-unf-1 llama-2-7b 8 0 --fuse-qkv 0
run llama-2-7b-b8-fus-1 llama-2-7b 8 0 --fuse-qkv 1
cd $OUT && tar czf fuse-call1.tgz fuse-call1 && rm -rf fuse-call1
