#!/usr/bin/env bash
# session 21, call 3 (lead): --guard-smem A/B (the norm and act keep the next GEMM's CTAs off their SMs), interleaved
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins3.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v3/dak
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { # tag model batch ratio guard [extra]
  local tag=$1 mdl=$2 b=$3 r=$4 g=$5; shift 5
  timeout 60 $B decode --model configs/$mdl --batch $b --prompt 8 --tokens 24 --ratios $r --baseline direct --guard-smem $g "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms"
}
for round in 1 2; do
  gs="0 64KiB"; [ $round = 1 ] && gs="0 64KiB 100KiB"
  for g in $gs; do run opt-b8-g$g-$round opt-6.7b 8 0 $g; done
  for g in 0 64KiB; do run llama-b8-g$g-$round llama-2-7b 8 0 $g; done
done
for g in 0 64KiB; do run opt-b64-g$g opt-6.7b 64 0 $g; done
for g in 0 64KiB; do run opt-b8-r10-g$g opt-6.7b 8 10 $g; done
run opt-b8-g64KiB-skipnorm opt-6.7b 8 0 64KiB --diag-skip norm
run opt-b8-g64KiB-bk opt-6.7b 8 0 64KiB --breakdown 3
cd $OUT && tar czf r.tgz r && rm -rf r
