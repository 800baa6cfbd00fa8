#!/usr/bin/env bash
# session 23, call 3 (lead): dak decode's new defaults (o_proj reading nothing before its wait, 4-slot rings on the
# all-HBM GEMMs) against call 2's base (o_proj none, the GEMMs' own rings) at batch 8 and 64, rings of 3 and 5,
# r = 10 %, and test_engine_gpu with the defaults, dynamic units and a window as variants
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s23-carry
cd "$(dirname "$0")/../../../.." && (cd $C && tar xJf bins3.tar.xz)
R=$OUT/r; mkdir -p $R
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2 b=$3 ratio=$4; shift 4
  timeout 80 $C/v7/dak decode --model configs/$model --batch $b --prompt 8 --tokens 24 --ratios $ratio --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
for mb in opt-6.7b:8 llama-2-7b:8 opt-6.7b:64 llama-2-7b:64; do m=${mb%%:*} b=${mb##*:}
  run $m-b$b-base-1 $m $b 0 --gemm-stages 0
  run $m-b$b-def-1 $m $b 0
  run $m-b$b-s3-1 $m $b 0 --gemm-stages 3
  run $m-b$b-s5-1 $m $b 0 --gemm-stages 5
done
for mb in opt-6.7b:8 llama-2-7b:8 opt-6.7b:64 llama-2-7b:64; do m=${mb%%:*} b=${mb##*:}
  run $m-b$b-base-2 $m $b 0 --gemm-stages 0
  run $m-b$b-def-2 $m $b 0
done
run opt-6.7b-b8-r10-base opt-6.7b 8 10 --gemm-stages 0
run opt-6.7b-b8-r10-def opt-6.7b 8 10
timeout 240 $C/v7/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)"
grep -m8 FAIL $R/test_engine_gpu.txt
cd $OUT && tar czf r.tgz r && rm -rf r
