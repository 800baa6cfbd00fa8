#!/usr/bin/env bash
# Thirty-first session (lead), call 1: whole-K tiles (k_whole, opts.whole: one CTA a tile over the whole K, B
# multicast in clusters, a deep ring of 64-column stages, two producer warps; the shape of cuBLAS's decode kernels)
# against the split (the same binary, --whole 0), two interleaved rounds, PDL graphs and single launches.
# Prediction: 7168^2 N 57-64 (112 CTAs, clusters of 4) 27.0-27.5 us as PDL graphs against the split's 28.5 and
# cuBLAS's 27.5-27.9; N 1-8 equal within 2 % (the split already runs 112 whole 64-row tiles there); 11008x4096 N 17-32
# (86 CTAs of 128 rows, clusters of 2) 25.0-26.0 against 25.6-26.0 (86 CTAs lose PDL's overlap on the idle SMs);
# single launches at N 17-64 near cuBLAS's (3-4 us under the split's).  test_gemm_split --whole first.
# carry ["build-s31-carry"]; OUT=... bash docs/perf/raw/s31-whole.sh
. docs/perf/raw/call-lib.sh
call_begin build-s31-carry/s31c1.tar.xz /tmp/whole
call_test test_gemm_split new --whole
# a kernel that fails or hangs would take the benches' time and return nothing: stop here then
grep -q ', 0 failed' $R/test_gemm_split.txt || { call_end s31-whole; exit 0; }
for r in 1 2; do
  for w in 0 1; do
    bench r$r-w$w-a new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,24,32,40,48,57,64 --whole $w
    bench r$r-w$w-b new --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n 1,8,16,17,24,32,40,64 --whole $w
  done
done
# does the multicast matter (clusters of 1 and 2 at N 8 / 32 / 64 on 7168^2), and two more shapes (4096^2: 64 tiles;
# 16384x4096: 128 tiles of 128 rows)
bench cl1 new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 8,32,64 --whole 1 --whole-cl 1
bench cl2 new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 8,32,64 --whole 1 --whole-cl 2
for w in 0 1; do
  bench e-w$w new --sections fixed --ratios 0 --reps 5 --shapes 4096x4096,16384x4096 --n 8,32,64 --whole $w
done
call_end s31-whole
