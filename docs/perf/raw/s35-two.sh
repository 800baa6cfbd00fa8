#!/usr/bin/env bash
# For the thirty-fifth session (written in the thirty-fourth, not run).  11008 x 4096 (Llama-2-7B's MLP rows) is issue
# 7's last r = 0 gap (82-91 % of the bound, 0.97-0.99x cuBLAS at N 17-32): its 172 64-row tiles outnumber the SMs, so
# k_whole takes 86 128-row tiles (idle SMs, 1.6-1.8 us slower than the split) and k_whole_sw's 88-row shares come as
# pieces of the packed boxes (+34 %).  s35-two.patch lets k_whole (asked: --whole 1 --bm 64) run two CTAs an SM where
# the 64-row tiles come to at most twice the SMs, each ring in half the shared memory: 11008 x 4096 on 172 CTAs, 40
# SMs with two.  Why it might stream evenly: while all 172 stream, an SM with two CTAs pulls twice its neighbours'
# share until the per-SM rate caps it (~50 GB/s an SM, the thirty-third session's 64-SM figure); at 4.25 TB/s over 132
# SMs the 92 single SMs run at ~24 GB/s and finish their 0.52 MB in ~21.5 us, in which the 40 doubled SMs at ~50 GB/s
# move ~1.07 MB, about their two tiles' 1.05 MB.  Prediction: 11008 x 4096 N 8-32 ~22.5-23.5 us (95-94 %) against the
# split's 23.4-25.6; 12288 x 4096 (192 tiles: 60 doubled) and 16384 x 4096 (256: 124 doubled) faster than the split
# where the doubled SMs are few or nearly all; if an SM with two CTAs does not pull twice the rate, the doubled SMs
# take ~2x as long: ~35 us (then drop it).  Apply the patch, build into two/, carry build-s35-carry, then this script.
# Correctness: the patch adds test_gemm_split's whole case "bm 64 two an SM" (11008 x 4096: 172 tiles, 8640 x 1024:
# 135) and two test_gemm_plan checks; this script runs test_gemm_split --whole first.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35.tar.xz /tmp/two
call_test test_gemm_split two --whole
for r in 1 2; do
  bench r$r-two two --sections fixed --ratios 0 --reps 5 --shapes 11008x4096,12288x4096,16384x4096 \
    --n 1,8,16,24,32,48 --whole 1 --bm 64 --whole-cl 1
  bench r$r-def two --sections fixed --ratios 0 --reps 5 --shapes 11008x4096,12288x4096,16384x4096 --n 1,8,16,24,32,48
done
call_end two
