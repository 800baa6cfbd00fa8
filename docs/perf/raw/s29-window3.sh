#!/usr/bin/env bash
# Twenty-ninth session (lead), call 5: the window of 2 where it is not auto.  N 33-64 (128-row tiles, 48 KiB slots of
# which B 16 KiB; twelfth session: W 3 at N = 64 +0.3 us) and N <= 8 under PDL (k_split_n8, 6 slots and the stash,
# which a window below the ring turns off; twelfth session, before n8 and the stash: W 2 -0.2 on 7168^2, +0.9 on
# 11008x4096).  The committed binary (a355e97 = s29c4), flags only, two interleaved rounds; then dak decode OPT-6.7B
# batch 8 and 64 with --gemm-hbm-window 0 / 2.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-window3.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c4.tar.xz
R=/tmp/window3; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  for w in 0 2 3; do
    run r$r-w$w-a --shapes 7168x7168,11008x4096 --n 40,64 --hbm-window $w
    run r$r-w$w-b --shapes 7168x7168,11008x4096 --n 1,8 --hbm-window $w
  done
  for w in 0 2; do run r$r-w$w-c --shapes 28672x7168 --n 8,64 --hbm-window $w; done
done
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
for r in 1 2; do for b in 8 64; do for w in 0 2; do
  tag=dec-r$r-b$b-w$w
  timeout 80 $W/b/dak decode --model configs/opt-6.7b --batch $b --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    --gemm-hbm-window $w --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S
done; done; done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-window3.tgz" window3
