#!/usr/bin/env bash
# session 21, call 4 (lead): an empty kernel in place of the norm / act / attention (--diag-empty) against leaving them
# out (--diag-skip) and against the step as it is; OPT-6.7B and Llama-2-7B, batch 8, r = 0
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins4.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v4/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 mdl=$2; shift 2
  timeout 60 $B decode --model configs/$mdl --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms"; }
run opt-none opt-6.7b
run opt-empty-norm opt-6.7b --diag-empty norm
run opt-skip-norm opt-6.7b --diag-skip norm
run opt-empty-act opt-6.7b --diag-empty act
run opt-empty-attention opt-6.7b --diag-empty attention
run opt-empty-four opt-6.7b --diag-empty norm,qkv_post,act,attention
run opt-none-2 opt-6.7b
run llama-empty-norm llama-2-7b --diag-empty norm
run llama-none llama-2-7b
cd $OUT && tar czf r.tgz r && rm -rf r
