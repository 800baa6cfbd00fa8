#!/usr/bin/env bash
# Twenty-sixth session (lead): `dak decode --deploy auto` (the new default) on the H200: every ratio 0 -> the placement
# only (no host copy pinned), a sweep -> the full copies; against --deploy 0 at ratio 0 (the old default), wall time
# and memory lines, OPT-6.7B batch 8 synthetic.  carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-deploy.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; W=/tmp/s26d; mkdir -p $W && tar -C $W -xJf $D/s26c7.tar.xz
R=/tmp/deploy; mkdir -p $R; S=$R/summary.txt; : > $S
dec() { local tag=$1; shift
  local t0=$(date +%s%N)
  timeout 90 $W/d/dak decode --model configs/opt-6.7b --weights synthetic --batch 8 --prompt 8 --tokens 24 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  local rc=$? t1=$(date +%s%N)
  echo "$tag rc=$rc wall $(( (t1 - t0) / 1000000 )) ms: $(grep -E '^deploy auto|^engine:|^deployment' $R/$tag.txt | tr '\n' ' ') | $(grep -E '^run ' $R/$tag.txt | tr '\n' ' ')" >> $S; }
dec auto-r0 --ratios 0
dec deploy0-r0 --ratios 0 --deploy 0
dec auto-r0-2 --ratios 0
dec auto-sweep --ratios 0,10
timeout 60 $W/d/dak decode --tiny llama --batch 3 --ratios 0 > $R/tiny.txt 2>&1; echo "tiny llama rc=$? $(grep -E '^deploy|^deployment' $R/tiny.txt | tr '\n' ' ')" >> $S
gzip -9 $R/*.json
cat $S
tar -C /tmp -czf "$OUT/s26-deploy.tgz" deploy
