#!/usr/bin/env bash
# Twenty-ninth session (lead), call 3: window 2 at N 9-32.  Call 2 (s29-window.sh): on 7168^2 at N 24-32 a window of 2
# copies (the 4-slot ring kept for the PDL prefetch) took 0.5 us off the PDL graph and 0.8 us off the graph without PDL
# (last-slot spread 4.1 -> 2.3 us); a window of 3 did nothing there (the consumers hold a slot), and at N 16 (5 slots)
# it took 1.0 us off without PDL, 0 with it.  Here: W = 2 at N 16 and 20, on 11008x4096 and on 28672x7168 at N 24-32.
# carry ["build-s28-carry"]; OUT=... bash docs/perf/raw/s29-window2.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s28-carry; W=/tmp/s28; mkdir -p $W && tar -C $W -xJf $D/s28c1.tar.xz
R=/tmp/window2; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  run r$r-a --shapes 7168x7168 --n 16,20,24,32
  run r$r-b --shapes 7168x7168 --n 16,20,24,32 --hbm-window 2
  run r$r-c --shapes 11008x4096 --n 16,24,32
  run r$r-d --shapes 11008x4096 --n 16,24,32 --hbm-window 2
  run r$r-e --shapes 28672x7168 --n 24,32
  run r$r-f --shapes 28672x7168 --n 24,32 --hbm-window 2
done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-window2.tgz" window2
