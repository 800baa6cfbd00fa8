#!/usr/bin/env bash
# session 22, call 3 (lead): the norm with its weights held (default) against the previous kernel (--norm-narrow 1),
# with and without --gemm-pdl-pre none, interleaved; test_engine_gpu with the new cases
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s22-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins3.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v3/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2 batch=$3; shift 3
  timeout 80 $B decode --model configs/$model --batch $batch --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
for round in 1 2; do
  run opt8-old-$round opt-6.7b 8 --norm-narrow 1
  run opt8-held-$round opt-6.7b 8
  run opt8-heldnone-$round opt-6.7b 8 --gemm-pdl-pre none
  run opt8-oldnone-$round opt-6.7b 8 --norm-narrow 1 --gemm-pdl-pre none
  run llama8-old-$round llama-2-7b 8 --norm-narrow 1
  run llama8-held-$round llama-2-7b 8
  run llama8-heldnone-$round llama-2-7b 8 --gemm-pdl-pre none
  run opt64-old-$round opt-6.7b 64 --norm-narrow 1
  run opt64-held-$round opt-6.7b 64
  run opt64-heldnone-$round opt-6.7b 64 --gemm-pdl-pre none
done
run t-opt8-held opt-6.7b 8 --diag-times $R/t-opt8-held.stamps.json
run t-opt8-heldnone opt-6.7b 8 --gemm-pdl-pre none --diag-times $R/t-opt8-heldnone.stamps.json
timeout 200 $C/v3/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)"
grep -m5 FAIL $R/test_engine_gpu.txt
cd $OUT && tar czf r.tgz r && rm -rf r
