#!/usr/bin/env bash
# Thirty-fourth session (lead), call 2: k_whole_sw, whole-K tiles with A's rows as the wgmma's n (a CTA takes R rows,
# the multiple of 8 at or above M / SMs: 4096^2 on 128 CTAs of 32 rows where k_whole has 64 of 64; 11008 x 4096 on
# 126 of 88 where the split runs 86 128-row tiles split in K; 22016 x 4096 on 132 of 168, each warpgroup half).  Why:
# the 7B models' GEMMs are all 4096 wide, their 64-row tiles fill 48 % / 130 % / 260 % of the SMs, and Llama-2-7B runs
# at ~77 % of the bound a token (EB 3.38 of 4.25 TB/s; 3.93 ms against the planner's 2.99).  (a) test_gemm_split
# --whole (k_whole and k_whole_sw in full: every wgmma width n8..n128, halves, partial last CTAs).  (b) The GEMM
# bench's PDL graphs, --whole 1 --whole-swap 2 against the default, two rounds, N 1 / 8 / 16 / 32 / 64.  Prediction:
# 4096^2 N 8 11.2 -> ~9.5 us; 11008 x 4096 N 8 / 32 23.3 / 25.3 -> ~22.5 / ~23; 4096 x 11008 ~ -5 %; 7168^2 N 8 within
# 1 %, N 64 +3 % (128 CTAs each reading all of B); N 64 everywhere worse (B's bytes 2x A's at 32 rows).  (c) dak
# decode, swall/ (a build whose auto takes k_whole_sw wherever it applies) against head/ (ad759b9), two rounds,
# Llama-2-7B b1 / b8 / b32, OPT-6.7B b8; one b8 breakdown each.  Prediction: b1 / b8 -3 to -6 %, b32 smaller.
# (d) test_engine_gpu on swall/ (k_whole_sw in the engine's chains).
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call2.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c2.tar.xz /tmp/c2
call_test test_gemm_split sw --whole
SH=4096x4096,4096x11008,11008x4096,12288x4096,22016x4096,7168x7168
for r in 1 2; do
  bench r$r-swap sw --sections fixed --ratios 0 --reps 5 --shapes $SH --n 1,8,16,32,64 --whole 1 --whole-swap 2
  bench r$r-def sw --sections fixed --ratios 0 --reps 5 --shapes $SH --n 1,8,16,32,64
done
for r in 1 2; do
  for b in 1 8 32; do
    decode r$r-l-b$b-swall swall llama-2-7b $b
    decode r$r-l-b$b-head head llama-2-7b $b
  done
  decode r$r-o-b8-swall swall opt-6.7b 8
  decode r$r-o-b8-head head opt-6.7b 8
done
decode bd-l-b8-swall swall llama-2-7b 8 --breakdown 3
decode bd-l-b8-head head llama-2-7b 8 --breakdown 3
call_test test_engine_gpu swall
call_end c2
