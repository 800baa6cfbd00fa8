#!/usr/bin/env bash
# Thirty-third session (lead), call 6.  Call 5 (s33-small.sh) found k_whole (--whole 1, 64 CTAs) on 4096^2 at N 8 /
# 32 11.2 / 11.8 us against the split's 13.5-13.7 / 13.2 and cuBLAS's 12.5 / 13.2 (N 64: 14.4 against 13.9).  The
# rule built (rule2/): k_whole auto also where 64-row tiles fill 45-80 % of the SMs at N <= 32 (4096^2, 4096 x 11008,
# 4096 x 16384: 64 tiles; at K > 8192 and N > 8 only with clusters of 4, i.e. not in the engine).  Little device time
# left, so results go straight under $OUT, by priority: (1) the GEMM bench's PDL graphs, rule2 default against
# --whole 0: 4096^2 N 1..40, 4096 x 11008 and 4096 x 16384 N 1 / 8 / 16 / 32; (2) dak decode, rule2 against the head
# (fin/), one round: Llama-2-7B b1 / b8 / b32, OPT-6.7B b8; (3) test_engine_gpu on rule2 (its hidden-4096 cases now
# run k_whole on o_proj with dak decode's defaults).  Prediction: 4096^2 -10 to -17 % at N 1-32; 4096 x 11008 / 16384
# at N <= 8 (cl 1) within 5 % either way (K longer, 64 CTAs), at N 9-32 (cl 4) unknown; Llama-2-7B b1 / b8 -2 to -3 %
# a token (o_proj 2.3 us of ~15 us of GEMMs a layer... o_proj is 1 of 4 GEMMs: ~-1.5 %).
# Ran (raw s33-narrow/, partial: results straight under $OUT meant only 8 files came back; summary.txt holds every
# line): 4096 x 11008 / 16384 with k_whole 12-17 % slower than the split at N 1-32 (kl-*), OPT-6.7B b8 +6.7 % (its
# fc2 4096 x 16384 on k_whole at N 8), Llama-2-7B b32 -1.25 % (o_proj alone on k_whole: fc2 kept the split there),
# b1 / b8 -0.2 / +0.2 % (o_proj's gain against fc2's loss).  So the rule was restricted to K <= 4096
# (s33-narrow.patch: 4096^2 only, i.e. o_proj of the 4096-hidden models) and NOT landed: the device time was spent.
# Next: apply the patch (and test_gemm_plan's 4096^2 N 8 check: k_whole now), then Llama-2-7B b1 / b8 / b32 and
# OPT-6.7B b1 / b8 against the head, two rounds, with a tar at the end.
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-narrow.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c5.tar.xz $OUT/narrow
tar -C $W -xJf build-s33-carry/s33c4.tar.xz  # fin/: the head
bench sq-rule rule2 --sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 1,2,4,8,12,16,20,24,28,32,36,40
bench sq-split rule2 --sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 1,2,4,8,12,16,20,24,28,32,36,40 --whole 0
bench kl-rule rule2 --sections fixed --ratios 0 --reps 5 --shapes 4096x11008,4096x16384 --n 1,8,16,32
bench kl-split rule2 --sections fixed --ratios 0 --reps 5 --shapes 4096x11008,4096x16384 --n 1,8,16,32 --whole 0
for b in 1 8 32; do
  decode l-b$b-rule rule2 llama-2-7b $b
  decode l-b$b-head fin llama-2-7b $b
done
decode o-b8-rule rule2 opt-6.7b 8
decode o-b8-head fin opt-6.7b 8
call_test test_engine_gpu rule2
echo "total ${SECONDS}s" >> $S; cat $S
