#!/usr/bin/env bash
# Thirty-first session (lead), call 2: call 1 (s31-whole.sh) found k_whole's streaming 13-22 % slower than the split's
# (stamps: 7168^2 N 8 23.3 us against 20.3) and its multicast a loss (clusters of 1 faster than of 4 at N 8-64).  The
# split's copies are 32 KiB (kstep 4), k_whole's 8 KiB (one block a stage), and 32 KiB copies were measured faster
# per SM than 8 KiB ones (tenth session).  Here stages of kstep 2 and 4 blocks, without multicast, against the split.
# Prediction: at kstep 4 the streaming back to ~20.5 us on 7168^2 (the split's), so single launches at N 32-64 ~2-3
# us under the split's (no split-K tail, a shorter prologue: first slot full +1.7 against +2.8); PDL graphs within
# 0.5 us of the split at N 8, and 0.5-1 us faster at N 57-64 if the tail is what the split pays there.
# carry ["build-s31-carry"]; OUT=... bash docs/perf/raw/s31-whole2.sh
. docs/perf/raw/call-lib.sh
call_begin build-s31-carry/s31c2.tar.xz /tmp/whole2
call_test test_gemm_split new --whole
grep -q ', 0 failed' $R/test_gemm_split.txt || { call_end s31-whole2; exit 0; }
for r in 1 2; do
  bench r$r-split new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 8,32,64
  for k in 1 2 4; do
    bench r$r-k$k new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 8,32,64 --whole 1 \
      --whole-cl 1 --kstep $k
  done
done
call_end s31-whole2
