#!/usr/bin/env bash
# session 23, call 2 (lead): which GEMMs should fill their ring before the wait (--gemm-pre-none per kind, o_proj's
# none as the base), and the GEMMs' end spread (--gemm-hbm-window, --gemm-stages, --gemm-dyn); TPOT, interleaved
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s23-carry
cd "$(dirname "$0")/../../../.." && (cd $C && tar xJf bins2.tar.xz)
R=$OUT/r; mkdir -p $R
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 model=$2; shift 2
  timeout 80 $C/v6/dak decode --model configs/$model --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
vars() { local m=$1 r=$2
  run $m-old-$r $m
  run $m-o-$r $m --gemm-pre-none o_proj
  run $m-oq-$r $m --gemm-pre-none o_proj,qkv
  run $m-oi-$r $m --gemm-pre-none o_proj,ffn_in
  run $m-of-$r $m --gemm-pre-none o_proj,ffn_out
  run $m-w3-$r $m --gemm-pre-none o_proj --gemm-hbm-window 3
  run $m-w4-$r $m --gemm-pre-none o_proj --gemm-hbm-window 4
  run $m-s4-$r $m --gemm-pre-none o_proj --gemm-stages 4
  run $m-dyn-$r $m --gemm-pre-none o_proj --gemm-dyn 1; }
vars opt-6.7b 1
vars llama-2-7b 1
vars opt-6.7b 2
for v in "w3:--gemm-hbm-window 3" "dyn:--gemm-dyn 1"; do
  tag=times-opt-${v%%:*}
  timeout 80 $C/v6/dak decode --model configs/opt-6.7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    --gemm-pre-none o_proj ${v#*:} --diag-times $R/$tag.stamps.json > $R/$tag.txt 2>&1
  echo "$tag rc=$?"; grep -A12 "timeline" $R/$tag.txt | grep -E "qkv |o_proj|ffn_in|ffn_out"
done
cd $OUT && tar czf r.tgz r && rm -rf r
