#!/usr/bin/env bash
# Thirty-second session (lead), call 7: k_whole's stage of 2 blocks (the auto kstep) with its 8 wgmma unrolled and
# the fence in their block, so that ptxas no longer injects warpgroup.arrive there (C7519: 16 -> 0 on that path; the
# generic kstep loop keeps its 16), against the landed build (s32c6), both with the defaults, interleaved, two rounds;
# and test_gemm_split --whole on the new build.  Prediction: within +-0.3 % (the kernel waits on HBM, not on its
# wgmma issue), perhaps up to 1 % at N = 64 where the math per stage is largest.
# Not run in the thirty-second session: the device could not be started (refused, then too little device time
# left).  Run in the thirty-third as part of s33-carveout.sh (its arr/), then landed (gemm_whole.cu's whole_block_mma).  The change is
# `s32-arrive.patch` beside this script (not in the tree: untested on the GPU); the carry's arr/ was its build
# (`git apply docs/perf/raw/s32-arrive.patch`, build, pack dak and test_gemm_split as arr/ into s32c7.tar.xz).
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-arrive.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c7.tar.xz /tmp/arrive
tar -C $W -xJf build-s32-carry/s32c6.tar.xz  # new/ = the landed build; arr/ = the unrolled stage
call_test test_gemm_split arr --whole
grep -q ', 0 failed' $R/test_gemm_split.txt || { call_end s32-arrive; exit 0; }
for r in 1 2; do
  for b in new arr; do
    bench g-$r-$b $b --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,7168x28672 --n 1,8,16,32,48,64
  done
done
call_end s32-arrive
