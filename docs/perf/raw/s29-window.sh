#!/usr/bin/env bash
# Twenty-ninth session (lead), call 2: the HBM window at N 9-32.  Call 1 (s28-ring.sh) found a 3-slot ring at N 24-32
# 1.0 us faster a GEMM than the 4-slot one in graphs without PDL (last-slot spread 4.1 -> 2.2 us) and neutral under
# PDL; 4 slots at N 16 0.6 us faster without PDL, 0.5 slower with it.  The window (at most W copies in flight, the ring
# kept for the PDL prefetch) is auto only at N <= 8 without PDL (twelfth session: "mixed at N = 32", before
# consume_narrow_offs).  Zero-code runs of the head's kernels, two interleaved rounds.
# carry ["build-s28-carry"]; OUT=... bash docs/perf/raw/s29-window.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s28-carry; W=/tmp/s28; mkdir -p $W && tar -C $W -xJf $D/s28c1.tar.xz
R=/tmp/window; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  run r$r-a --shapes 7168x7168 --n 16,24,32
  run r$r-b --shapes 7168x7168 --n 16,24,32 --hbm-window 3
  run r$r-c --shapes 7168x7168 --n 16 --hbm-window 4
  run r$r-d --shapes 7168x7168 --n 24,32 --hbm-window 2
  run r$r-e --shapes 11008x4096 --n 16,24,32
  run r$r-f --shapes 11008x4096 --n 16,24,32 --hbm-window 3
  run r$r-g --shapes 11008x4096 --n 24,32 --stages 3
  run r$r-h --shapes 28672x7168 --n 16,32
  run r$r-i --shapes 28672x7168 --n 16,32 --hbm-window 3
done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-window.tgz" window
