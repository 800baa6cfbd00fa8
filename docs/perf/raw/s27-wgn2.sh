#!/usr/bin/env bash
# Twenty-seventh session (lead), call 3: wg_narrow with the k16 steps of each parity on their own accumulator (two
# wgmma chains; w): test_gemm_split --wg-narrow and --wgmma, the fixed section twice (pdl-wgn / nold-wgn beside pdl /
# noload), then Nsight Compute samples of k_split_nn (N = 24) and k_split_n8 (N = 1) with wg_narrow 1.
# carry ["build-s27-carry"]; OUT=... bash docs/perf/raw/s27-wgn2.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27; mkdir -p $W && tar -C $W -xJf $D/s27c3.tar.xz
R=/tmp/wgn2; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
timeout 120 $W/w/test_gemm_split --wg-narrow > $R/test-wgn.txt 2>&1
echo "test_gemm_split --wg-narrow rc=$? ${SECONDS}s: $(tail -1 $R/test-wgn.txt)" >> $S
grep -E "FAIL|fail" $R/test-wgn.txt | head -5 >> $S
run() { local tag=$1
  timeout 150 $W/w/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,16,24,32 --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s" >> $S; }
run r1
timeout 100 $W/w/test_gemm_split --wgmma > $R/test-full.txt 2>&1
echo "test_gemm_split --wgmma rc=$? ${SECONDS}s: $(tail -1 $R/test-full.txt)" >> $S
run r2
prof() { local tag=$1 k=$2 n=$3
  if [ $SECONDS -gt 470 ]; then echo "$tag skipped (time)" >> $S; return; fi
  timeout 100 ncu --section WarpStateStats --section SourceCounters --warp-sampling-interval 0 -k regex:^$k\$ \
    --launch-skip 1 --launch-count 1 -o $R/$tag $W/w/dak bench gemm --sections sweep --shapes 7168x7168 --n $n \
    --ratios 0 --reps 3 --wg-narrow 1 > $R/$tag-run.txt 2>&1
  echo "$tag ncu rc=$? ${SECONDS}s" >> $S
  ncu -i $R/$tag.ncu-rep --page source --csv > $R/$tag-source.csv 2>> $R/$tag-run.txt
  rm -f $R/$tag.ncu-rep; }
prof ncu-wgn-n24 k_split_nn 24; prof ncu-wgn-n1 k_split_n8 1
gzip -9 $R/*.json $R/*.csv $R/test-*.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-wgn2.tgz" wgn2
