#!/usr/bin/env bash
# Twenty-seventh session (lead), call 2: the narrow tiles (N <= 32) through wgmma m64n<8j>k16 (opts.wg_narrow; w):
# test_gemm_split --wg-narrow, then test_gemm_split in full; the fixed section (r = 0, 7168^2 and 11008x4096, N 1 / 8 /
# 16 / 24 / 32) twice, whose pdl-wgn and nold-wgn columns run the same plans with wg_narrow 1 beside pdl / noload in one
# process; then Nsight Compute warp-state samples per SASS instruction of k_split_nn with wg_narrow 1 (7168^2, N = 24).
# carry ["build-s27-carry"]; OUT=... bash docs/perf/raw/s27-wgn.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27; mkdir -p $W && tar -C $W -xJf $D/s27c2.tar.xz
R=/tmp/wgn; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
timeout 120 $W/w/test_gemm_split --wg-narrow > $R/test-wgn.txt 2>&1
echo "test_gemm_split --wg-narrow rc=$? ${SECONDS}s: $(tail -1 $R/test-wgn.txt)" >> $S
grep -E "FAIL|fail" $R/test-wgn.txt | head -5 >> $S
run() { local tag=$1
  timeout 150 $W/w/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,16,24,32 --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s" >> $S; }
run r1
timeout 200 $W/w/test_gemm_split > $R/test-full.txt 2>&1
echo "test_gemm_split (full) rc=$? ${SECONDS}s: $(tail -1 $R/test-full.txt)" >> $S
run r2
prof() { local tag=$1 k=$2 n=$3
  if [ $SECONDS -gt 470 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 100 ncu --section WarpStateStats --section SourceCounters --warp-sampling-interval 0 -k regex:^$k\$ \
    --launch-skip 1 --launch-count 1 -o $R/$tag $W/w/dak bench gemm --sections sweep --shapes 7168x7168 --n $n \
    --ratios 0 --reps 3 --wg-narrow 1 > $R/$tag-run.txt 2>&1
  echo "$tag ncu rc=$? ${SECONDS}s" >> $S
  ncu -i $R/$tag.ncu-rep --page source --csv > $R/$tag-source.csv 2>> $R/$tag-run.txt
  rm -f $R/$tag.ncu-rep; }
prof ncu-wgn-n24 k_split_nn 24
gzip -9 $R/*.json $R/*.csv $R/test-*.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-wgn.tgz" wgn
