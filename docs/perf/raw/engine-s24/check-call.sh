#!/usr/bin/env bash
# Twenty-fourth session, lead: fuse_qkv on in dak_eng_opts_default (dak decode's defaults): test_engine_gpu (its
# V_DEFAULTS cases now run fused), dak decode at the defaults, and --diag-skip qkv_post without --fuse-qkv
set -u
export CUDA_MODULE_LOADING=EAGER
C=$(cd "$(dirname "$0")" && pwd)
W=/tmp/s24g; mkdir -p $W && tar -C $W -xJf $C/check-bins.tar.xz
S=$OUT/summary.txt; date -u > $S
timeout 150 $W/test_engine_gpu > $OUT/test_engine_gpu.txt 2>&1
echo "test_engine_gpu rc=$? ${SECONDS}s: $(grep -E 'passed, .* failed' $OUT/test_engine_gpu.txt | tail -1)" >> $S
grep -m5 'FAIL\|failed:' $OUT/test_engine_gpu.txt >> $S
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3, $6}'; }
for a in "defaults:" "skip:--diag-skip qkv_post" "unfused:--fuse-qkv 0"; do
  n=${a%%:*}; f=${a#*:}
  timeout 40 $W/dak decode --model configs/opt-6.7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct $f \
    --json $OUT/$n.json > $OUT/$n.txt 2>&1
  echo "$n rc=$? ${SECONDS}s: $(row $OUT/$n.txt) fuse_qkv=$(grep -o '"fuse_qkv":[01]' $OUT/$n.json)" >> $S
done
cat $S
