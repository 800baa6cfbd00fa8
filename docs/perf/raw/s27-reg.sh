#!/usr/bin/env bash
# Twenty-seventh session (lead), call 6: the head's opt-in wg_narrow (w: f83cd7f) against the session's start (h:
# 9581db1) at its default (wg_narrow off): the calls with w's binary timed 7168^2 N <= 8 0.3-0.5 us slower than call 1's
# h, on other machines.  Interleaved h w p w h in one call, the fixed section (r = 0, 7168^2 and 11008x4096, N 1 / 8 /
# 24 / 32); p (the kept patch: wg_narrow auto, the floor's s-Bn column) also gives s-Bn against strm-pdl.
# carry ["build-s27-carry"]; OUT=... bash docs/perf/raw/s27-reg.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27r; mkdir -p $W && tar -C $W -xJf $D/s27c6.tar.xz
R=/tmp/reg; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1 v=$2
  timeout 100 $W/$v/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,24,32 --json $R/$tag-$v.json > $R/$tag-$v.txt 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >> $S; }
run r1 h; run r1 w; run r1 p; run r2 w; run r2 h; run r2 p
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-reg.tgz" reg
