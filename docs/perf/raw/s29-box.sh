#!/usr/bin/env bash
# Twenty-ninth session (lead), call 7: is it B's box or the ring's depth that N 17-32 lose against N = 16?  With the
# window of 2 (auto), 7168^2 N = 16 (16-row box, 5 slots of 40 KiB) ran 26.06 us as a PDL graph, N 24 / 32 (32-row
# box, 4 slots of 48 KiB) 26.8-26.9.  N = 16 on 4 slots isolates the box: if it stays ~26.1, B's extra 8 KiB a slot is
# the 0.8 us (a 24-row box at N 17-24 would get ~0.4 of it back); if it goes to ~26.8, the depth is.  The committed
# binary (1c4b4db), flags only, two interleaved rounds.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-box.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c7.tar.xz
R=/tmp/box; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  run r$r-a --shapes 7168x7168 --n 16,24
  run r$r-b --shapes 7168x7168 --n 16 --stages 4
  run r$r-c --shapes 28672x7168 --n 16,24
  run r$r-d --shapes 28672x7168 --n 16 --stages 4
done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-box.tgz" box
