#!/usr/bin/env bash
# session 22, call 2 (lead): nothing read before the GEMMs' wait (--gemm-pdl-pre none) and the norm's trigger later
# (--norm-trigger), against the GEMM's choice, interleaved; the stash test with pdl_pre none
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s22-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins2.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v2/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2 batch=$3; shift 3
  timeout 80 $B decode --model configs/$model --batch $batch --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
for round in 1 2; do
  run opt8-pre0-$round opt-6.7b 8
  run opt8-none-$round opt-6.7b 8 --gemm-pdl-pre none
  run opt8-pre2-$round opt-6.7b 8 --gemm-pdl-pre 2
  run opt8-tend-$round opt-6.7b 8 --norm-trigger end
  run llama8-pre0-$round llama-2-7b 8
  run llama8-none-$round llama-2-7b 8 --gemm-pdl-pre none
  run llama8-tend-$round llama-2-7b 8 --norm-trigger end
  run opt64-pre0-$round opt-6.7b 64
  run opt64-none-$round opt-6.7b 64 --gemm-pdl-pre none
  run opt64-tend-$round opt-6.7b 64 --norm-trigger end
done
run t-opt8-none opt-6.7b 8 --gemm-pdl-pre none --diag-times $R/t-opt8-none.stamps.json
run t-opt8-tend opt-6.7b 8 --norm-trigger end --diag-times $R/t-opt8-tend.stamps.json
run t-opt8-tload opt-6.7b 8 --norm-trigger loaded --diag-times $R/t-opt8-tload.stamps.json
timeout 150 $C/v2/test_gemm_split --stash > $R/test_gemm_split_stash.txt 2>&1; echo "test_gemm_split --stash rc=$?: $(tail -1 $R/test_gemm_split_stash.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
