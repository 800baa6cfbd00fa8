#!/usr/bin/env bash
# Twenty-seventh session (lead), call 4: the ring's depth at N 9-32.  At kstep 4 a slot holds 32 KiB of A and 12-16 KiB
# of B there, so only 4-5 slots fit (6 at N <= 8): fewer bytes of A in flight per SM.  The fixed section (r = 0,
# 7168^2 and 11008x4096, N 8 / 16 / 24 / 32 / 64) with kstep auto (4), 2 and 1, interleaved 0 2 1 2 0; each run has the
# pdl and pdl-wgn (wg_narrow 1) columns.  Same binary as call 3.  carry ["build-s27-carry"]; OUT=... bash ...
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27; mkdir -p $W && tar -C $W -xJf $D/s27c3.tar.xz
R=/tmp/kstep; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1 k=$2
  timeout 150 $W/w/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 8,16,24,32,64 --kstep $k --json $R/$tag-k$k.json > $R/$tag-k$k.txt 2>&1
  echo "$tag kstep $k rc=$? ${SECONDS}s" >> $S; }
run r1 0; run r1 2; run r1 1; run r2 2; run r2 0
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-kstep.tgz" kstep
