#!/usr/bin/env bash
# session 21, call 2 (lead): what each kind of the step's kernels costs under PDL (dak decode --diag-skip), r = 0,
# OPT-6.7B and Llama-2-7B at batch 8
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins2.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v2/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
for mdl in opt-6.7b llama-2-7b; do
  list="none norm qkv_post act attention norm,qkv_post,act,attention qkv,o_proj,ffn_in,ffn_out,lm_head embed,argmax"
  [ $mdl = llama-2-7b ] && list="none norm,qkv_post,act,attention qkv_post,act"
  for k in $list; do
    arg=""; [ $k != none ] && arg="--diag-skip $k"
    timeout 60 $B decode --model configs/$mdl --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct $arg \
      --json $R/$mdl-$k.json > $R/$mdl-$k.txt 2> $R/$mdl-$k.err
    echo "$mdl skip $k rc=$?: TPOT r0 $(row $R/$mdl-$k.txt) ms"
  done
done
timeout 60 $B decode --model configs/opt-6.7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct --json $R/opt-6.7b-none2.json > $R/opt-6.7b-none2.txt 2>&1; echo "opt-6.7b none again: $(row $R/opt-6.7b-none2.txt) ms"
cd $OUT && tar czf r.tgz r && rm -rf r
