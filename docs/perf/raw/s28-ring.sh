#!/usr/bin/env bash
# Twenty-eighth session (lead), call 1: is the pre-wait depth of A what N 9-32 lose under PDL?  Single launches end
# at the same time at N = 8 and 24 on 7168^2 (call 6's stamps, max span 26.9 / 27.0 us), PDL graphs 1.8 us apart;
# N <= 8 holds 6 slots + a 2-chunk stash of A before griddepcontrol.wait, N 24-32 4 slots (B's 16 KiB box a slot).
# Zero-code runs of the head's kernels (9581db1's code; the bench with per-CTA graph-pair stamps), interleaved in two rounds: N = 8 with the stash off and the
# ring cut to 5 / 4 slots; N 16-32 with fewer slots; 128-row tiles at N 24-32 (kstep 2, 5 slots).
# carry ["build-s28-carry"]; OUT=... bash docs/perf/raw/s28-ring.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s28-carry; W=/tmp/s28; mkdir -p $W && tar -C $W -xJf $D/s28c1.tar.xz
R=/tmp/ring; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  run r$r-a --shapes 7168x7168 --n 8,16,24,32
  run r$r-b --shapes 7168x7168 --n 8 --stash 0
  run r$r-c --shapes 7168x7168 --n 8 --stash 0 --stages 5
  run r$r-d --shapes 7168x7168 --n 8 --stash 0 --stages 4
  run r$r-e --shapes 7168x7168 --n 8 --stages 4
  run r$r-f --shapes 7168x7168 --n 16 --stages 4
  run r$r-g --shapes 7168x7168 --n 24,32 --stages 3
  run r$r-h --shapes 7168x7168 --n 24,32 --bm 128
  run r$r-i --shapes 11008x4096 --n 8,24,32
  run r$r-j --shapes 11008x4096 --n 8 --bm 64
  run r$r-k --shapes 11008x4096 --n 24,32 --bm 128
done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s28-ring.tgz" ring
