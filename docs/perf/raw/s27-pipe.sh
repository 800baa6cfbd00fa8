#!/usr/bin/env bash
# Twenty-seventh session (lead), call 1: the offsets consumers a k16 step ahead (DAK_PIPELINED_BLOCKS in
# gemm_tile.cuh; p) against the head (h: 9581db1's kernel): test_gemm_split in full on p; the fixed section (r = 0,
# 7168^2 and 11008x4096, N 1 / 8 / 16 / 24 / 32) interleaved h p p h; then Nsight Compute warp-state samples per SASS
# instruction of p's k_split_nn (7168^2, N = 24) and the SASS of p's k_split_nn2 (its 32 B of spills: in the loop?).
# carry ["build-s27-carry"]; OUT=... bash docs/perf/raw/s27-pipe.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27; mkdir -p $W && tar -C $W -xJf $D/s27c1.tar.xz
R=/tmp/pipe; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
timeout 150 $W/p/test_gemm_split > $R/test-p.txt 2>&1
echo "test_gemm_split (p) rc=$? ${SECONDS}s: $(tail -1 $R/test-p.txt)" >> $S
run() { local tag=$1 v=$2
  timeout 120 $W/$v/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,16,24,32 --json $R/$tag-$v.json > $R/$tag-$v.txt 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >> $S; }
run r1 h; run r1 p; run r2 p; run r2 h
prof() { local tag=$1 k=$2 n=$3
  if [ $SECONDS -gt 480 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 100 ncu --section WarpStateStats --section SourceCounters --warp-sampling-interval 0 -k regex:^$k\$ \
    --launch-skip 1 --launch-count 1 -o $R/$tag $W/p/dak bench gemm --sections sweep --shapes 7168x7168 --n $n \
    --ratios 0 --reps 3 > $R/$tag-run.txt 2>&1
  echo "$tag ncu rc=$? ${SECONDS}s" >> $S
  ncu -i $R/$tag.ncu-rep --page source --csv > $R/$tag-source.csv 2>> $R/$tag-run.txt
  rm -f $R/$tag.ncu-rep; }
prof ncu-nn-n24 k_split_nn 24
CO=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$CO" ]; then $CO -sass -fun k_split_nn2 $W/p/dak > $R/sass-nn2-p.txt 2>&1 || $CO -sass $W/p/dak 2>/dev/null | \
  awk '/Function : .*k_split_nn2/{f=1} /Function : /&&!/k_split_nn2/{f=0} f' > $R/sass-nn2-p.txt
  echo "sass nn2: $(grep -c -E 'LDL|STL' $R/sass-nn2-p.txt) local ops" >> $S; else echo "no cuobjdump" >> $S; fi
gzip -9 $R/*.json $R/*.csv $R/test-p.txt $R/sass-nn2-p.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-pipe.tgz" pipe
