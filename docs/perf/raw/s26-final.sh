#!/usr/bin/env bash
# Twenty-sixth session (lead), closing call: test_engine_gpu at the head (k_split_n8 in the engine's GEMMs at
# batch <= 8); the engine's decode step before (pre: 6cb2e95) and after (head: 42d2878's kernel) k_split_n8,
# interleaved (OPT-6.7B and Llama-2-7B, batch 8 and 1, r = 0, synthetic weights); the tile height at N <= 8 now that
# both heights have the offsets consumers (--bm 64 on 11008x4096, --bm 128 on 7168^2, against auto); then Nsight
# Compute warp-state samples per SASS instruction of k_split_nn (7168^2, N = 24) and k_split_n8 (N = 1) for the
# next session.  carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-final.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; W=/tmp/s26f; mkdir -p $W && tar -C $W -xJf $D/s26c6.tar.xz
R=/tmp/final; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
timeout 220 $W/head/test_engine_gpu > $R/test_engine_gpu.txt 2>&1
echo "test_engine_gpu rc=$? ${SECONDS}s: $(grep -E 'passed, .* failed' $R/test_engine_gpu.txt | tail -1)" >> $S
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3, $6}'; }
dec() { local tag=$1 v=$2 model=$3 b=$4
  if [ $SECONDS -gt 420 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 60 $W/$v/dak decode --model configs/$model --weights synthetic --batch $b --prompt 8 --tokens 24 --ratios 0 \
    --baseline direct --json $R/$tag-$v.json > $R/$tag-$v.txt 2> $R/$tag-$v.err
  echo "$tag $v rc=$? ${SECONDS}s: TPOT direct, r=0 ref: $(row $R/$tag-$v.txt) ms" >> $S; }
for m in "opt8 opt-6.7b 8" "opt1 opt-6.7b 1" "llama8 llama-2-7b 8"; do
  set -- $m; dec $1 pre $2 $3; dec $1 head $2 $3; dec $1-2 head $2 $3; dec $1-2 pre $2 $3
done
bm() { local tag=$1 shape=$2; shift 2
  timeout 60 $W/head/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes $shape --n 1,8 "$@" \
    --json $R/$tag.json > $R/$tag.txt 2>&1; echo "$tag rc=$? ${SECONDS}s" >> $S; }
bm bm-11008-auto-1 11008x4096; bm bm-11008-64-1 11008x4096 --bm 64; bm bm-11008-64-2 11008x4096 --bm 64
bm bm-11008-auto-2 11008x4096
bm bm-7168-auto-1 7168x7168; bm bm-7168-128-1 7168x7168 --bm 128; bm bm-7168-128-2 7168x7168 --bm 128
bm bm-7168-auto-2 7168x7168
prof() { local tag=$1 k=$2 n=$3
  if [ $SECONDS -gt 480 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 100 ncu --section WarpStateStats --section SourceCounters --warp-sampling-interval 0 -k regex:^$k\$ \
    --launch-skip 1 --launch-count 1 -o $R/$tag $W/head/dak bench gemm --sections sweep --shapes 7168x7168 --n $n \
    --ratios 0 --reps 3 > $R/$tag-run.txt 2>&1
  echo "$tag ncu rc=$? ${SECONDS}s" >> $S
  ncu -i $R/$tag.ncu-rep --page source --csv > $R/$tag-source.csv 2>> $R/$tag-run.txt
  ncu -i $R/$tag.ncu-rep --page raw --csv > $R/$tag-raw.csv 2>> $R/$tag-run.txt
  rm -f $R/$tag.ncu-rep; }
prof ncu-nn-n24 k_split_nn 24; prof ncu-n8-n1 k_split_n8 1
gzip -9 $R/*.json $R/*.csv $R/test_engine_gpu.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s26-final.tgz" final
