#!/usr/bin/env bash
# Thirty-third session (lead), call 2.  (a) The build to land: k_whole's auto stage without the injected
# warpgroup.arrive (call 1's arr/, written as a helper per block; the SASS differs from arr/ only in the order of the
# descriptors' uniform arithmetic, the same 32 WARPGROUP.ARRIVE) and the review's leftovers (the window's slot as
# running counters, pre = pre_hbm).  The GPU suites; the GEMM bench's PDL graphs against arr/ (expected equal), and
# dak decode OPT-30B b1 / b8 / b64 against the head (cv/ with DAK_CV unset), two rounds.  Prediction: b8 / b64 -0.1
# to -0.3 % (o_proj / ffn_out 0.6-1 % of their ~31 / 100 us a layer at N 64), b1 within noise.
# (b) Why k_whole loses ~11 % to the bound from N 1 to 64 on 7168^2 (24.96 -> 27.7 us): each of the 112 CTAs reads
# all of B from L2 (0.92 MB at N 64, 103 MB in all, as much as A), so L2 serves ~7.4 TB/s at N 64 (A + B over 27.7
# us), 6.0 at N 32.  If that is the limit, multicast (B read once per cluster, whole_cluster) takes N 64 toward
# (103 + 51) MB / 7.4 TB/s ~ 21 us, i.e. to the HBM bound (24.2) plus the N 1 overhead: ~25 us with clusters of 2.
# The thirty-first session saw clusters cost at N 64 (28.1 / 28.85 / 29.28 us at 1 / 2 / 4), with one-block stages
# and no window.  7168^2 N 16..64 and 7168x28672 N 16 / 32 / 64 with --whole 1 --whole-cl 1 / 2 / 4, two rounds.
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-cluster.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c2.tar.xz /tmp/cluster
tar -C $W -xJf build-s33-carry/s33c1.tar.xz  # cv/ = the head + s33-carveout.patch, arr/ = cv/ + s32-arrive.patch
call_test test_gemm_split new
call_test test_engine_gpu new
grep -q ', 0 failed' $R/test_gemm_split.txt && grep -q ', 0 failed' $R/test_engine_gpu.txt || { call_end s33-cluster; exit 0; }
for r in 1 2; do
  for cl in 1 2 4; do
    bench c-$r-sq-cl$cl new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 16,24,32,40,48,56,64 \
      --whole 1 --whole-cl $cl
    bench c-$r-k4-cl$cl new --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 16,32,64 --whole 1 \
      --whole-cl $cl
  done
done
for r in 1 2; do
  for b in 1 8 64; do
    decode r$r-b$b-new new opt-30b $b
    decode r$r-b$b-head cv opt-30b $b
  done
  for b in new arr; do
    bench g-$r-$b $b --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,32,48,64
  done
done
call_end s33-cluster
