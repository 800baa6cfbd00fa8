#!/usr/bin/env bash
# Thirty-fourth session (lead), call 1.  (a) The thirty-third session's unlanded rule (s33-narrow.patch, now in the
# narrow/ build): k_whole auto also for 64-row tiles filling 45-80 % of the SMs at N <= 32 and K <= 4096 (4096^2 only:
# o_proj of Llama-2-7B and OPT-6.7B).  dak decode, narrow/ against head/, two rounds interleaved: Llama-2-7B b1 / b8 /
# b32, OPT-6.7B b1 / b8.  Prediction: o_proj 13.2-13.7 -> 11.2-11.8 us a layer (-1.5 to -2.5 us x 32 layers = -50 to
# -80 us a token): Llama-2-7B b1 / b8 / b32 -1.2 to -2 % (3.9-4.6 ms a token), OPT-6.7B the same (its fc2 untouched
# now); call 6's b32 -1.25 % with the wider rule is the check.  The GEMM bench's 4096^2 at N 1..64 default against
# --whole 0 (prediction: -10 to -17 % at N 1-32, the same at 33-64).  (b) K rotation (rot/: narrow/ built with
# -DDAK_WHOLE_ROT): each CTA (each cluster) starts its K loop at stage (cluster index x KC / clusters), so that the 112
# CTAs read different B stages from L2 at any moment instead of the same one.  Why: k_whole loses 11 % to the bound from
# N 1 to 64 on 7168^2 and at N 64 without clusters L2 serves A + B at ~7.4 TB/s; if the same 16 KiB stage read by 112
# SMs at once is a hot spot (a few L2 slices), spreading the stages evens it.  Prediction: N 1-8 +-0.3 %, N 32-64 0 to
# -3 %; 7168x28672 (clusters of 4) +-1 %.  Bench rot/ against narrow/ (= head/ on these shapes), two rounds.
# (c) test_gemm_split on rot/ (k_whole's results with the rotation), test_engine_gpu on narrow/.
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call1.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c1.tar.xz /tmp/c1
for r in 1 2; do
  for b in 1 8 32; do
    decode r$r-l-b$b-narrow narrow llama-2-7b $b
    decode r$r-l-b$b-head head llama-2-7b $b
  done
  for b in 1 8; do
    decode r$r-o-b$b-narrow narrow opt-6.7b $b
    decode r$r-o-b$b-head head opt-6.7b $b
  done
done
for r in 1 2; do
  for v in rot narrow; do
    bench r$r-sq-$v $v --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,24,32,40,48,56,64
    bench r$r-long-$v $v --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 8,32,64
  done
done
bench s4-narrow narrow --sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 1,4,8,16,24,32,33,48,64
bench s4-split narrow --sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 1,4,8,16,24,32,33,48,64 --whole 0
call_test test_gemm_split rot
call_test test_engine_gpu narrow
call_end c1
