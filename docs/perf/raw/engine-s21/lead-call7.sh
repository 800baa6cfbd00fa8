#!/usr/bin/env bash
# session 21, call 7 (lead): fewer weight copies before the GEMMs' wait (--gemm-pdl-pre) against the small kernels' cost
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins7.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v7/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1; shift
  timeout 50 $B decode --model configs/opt-6.7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
for round in 1 2; do
  run pre0-$round
  run pre2-$round --gemm-pdl-pre 2
done
run pre2-skipnorm --gemm-pdl-pre 2 --diag-skip norm
run pre24 --gemm-pdl-pre 24
run pre3 --gemm-pdl-pre 3
cd $OUT && tar czf r.tgz r && rm -rf r
