#!/usr/bin/env bash
# Twenty-fourth session, lead, the closing call on main 9867e51 (the load, the rate policy, the fused q/k/v merged):
# the GPU tests of everything merged, then the fused q/k/v A/B that helper-41's call 2 could not run (OPT-6.7B b64
# and b8, interleaved; the unfused step with qkv_post left out as the bound; r = 10 %).
set -u
export CUDA_MODULE_LOADING=EAGER
C=$(cd "$(dirname "$0")" && pwd)
W=/tmp/s24f; mkdir -p $W && tar -C $W -xJf $C/final-bins.tar.xz
R=$OUT/final; mkdir -p $R
S=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $S 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $R/$n.txt 2>&1; local rc=$?
  echo "$n rc=$rc $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $R/$n.txt | tail -1)" >> $S; }
t test_stream_net_gpu 60 $W/test_stream_net_gpu
t test_attn_gpu 90 $W/test_attn_gpu
t test_engine_gpu 220 $W/test_engine_gpu
grep -m8 -i 'fail' $R/test_engine_gpu.txt $R/test_attn_gpu.txt | grep -v ' 0 failed' >> $S
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3, $6}'; }
run() { local tag=$1 model=$2 b=$3 ratio=$4; shift 4
  if [ $SECONDS -gt 330 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 40 $W/dak decode --model configs/$model --batch $b --prompt 8 --tokens 24 --ratios $ratio --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT direct, r=0 ref: $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)" >> $S; }
run opt-b64-unf-1 opt-6.7b 64 0 --fuse-qkv 0
run opt-b64-fus-1 opt-6.7b 64 0 --fuse-qkv 1
run opt-b64-fus-2 opt-6.7b 64 0 --fuse-qkv 1
run opt-b64-unf-2 opt-6.7b 64 0 --fuse-qkv 0
run opt-b8-unf-1 opt-6.7b 8 0 --fuse-qkv 0
run opt-b8-fus-1 opt-6.7b 8 0 --fuse-qkv 1
run opt-b8-skip-1 opt-6.7b 8 0 --fuse-qkv 0 --diag-skip qkv_post
# the ~2 s of dak_engine_create outside its timed phases (helper-40): eager module loading or not
for ml in LAZY EAGER; do
  [ $SECONDS -gt 360 ] && break
  CUDA_MODULE_LOADING=$ml timeout 40 $W/dak decode --model configs/opt-6.7b --layers 8 --weights synthetic --batch 8 \
    --prompt 4 --tokens 4 --ratios 0 --baseline direct --load-times 1 > $R/load-$ml.txt 2>&1
  echo "load $ml rc=$?: $(grep '^load' $R/load-$ml.txt | tail -1)" >> $S
done
echo "total $SECONDS s" >> $S
cd $OUT && tar czf final.tgz final && rm -rf final
cat $S
