#!/usr/bin/env bash
# session 22, call 1 (lead): the norm's 7.7 us stamped from inside (--diag-times), --gemm-pdl-pre 2 on Llama / b64,
# and the owed test_engine_gpu
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s22-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins1.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v1/dak
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2 batch=$3; shift 3
  timeout 80 $B decode --model configs/$model --batch $batch --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
run t-opt8 opt-6.7b 8 --diag-times $R/t-opt8.stamps.json
run t-llama8 llama-2-7b 8 --diag-times $R/t-llama8.stamps.json
run t-opt64 opt-6.7b 64 --diag-times $R/t-opt64.stamps.json
run t-opt8-pre2 opt-6.7b 8 --gemm-pdl-pre 2 --diag-times $R/t-opt8-pre2.stamps.json
run t-opt8-pdl1 opt-6.7b 8 --pdl 1 --diag-times $R/t-opt8-pdl1.stamps.json
for round in 1 2; do
  run llama8-pre0-$round llama-2-7b 8
  run llama8-pre2-$round llama-2-7b 8 --gemm-pdl-pre 2
  run opt64-pre0-$round opt-6.7b 64
  run opt64-pre2-$round opt-6.7b 64 --gemm-pdl-pre 2
done
timeout 240 $C/v1/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -2 $R/test_engine_gpu.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
