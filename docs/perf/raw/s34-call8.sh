#!/usr/bin/env bash
# Thirty-fourth session (lead), call 8: call 7's stamps (Llama-2-7B b8, layer 4 of 8) showed why the GEMM two kernels
# after a whole-K kernel loses: with k_whole_sw on ffn_in the activation's 344 CTAs entered at once beside ffn_in's
# CTAs (90 registers x 320 threads leave room on every SM) and waited there, 2-3 on every SM, so that no SM had the
# registers for ffn_out's CTAs (168 x 320 = 53.8 k of 64 k) until the activation ended: ffn_out's CTAs entered at
# 168.5-169.2 us, after the activation's wait (167.3), instead of during ffn_in's tail (the split's ffn_in: ffn_out
# entered at 143-145, 14 us before its wait, its ring prefetched).  Change (act/ build): at most one activation CTA an
# SM (grid-stride; 256 threads x 24 registers beside ffn_out's 53.8 k fit in 64 k).  dak decode, two rounds: act/
# with --gemm-whole-swap 0 and 1 against head/ (ad759b9), Llama-2-7B b1 / b8 / b32, OPT-6.7B b8.  Prediction: with
# swap 0 b8 comes back from +2 % to -1 to -2 %; swap 1 and OPT-6.7B within +-0.5 % of the head (the split before the
# activation left it few SMs).  Then the stamps again (swap 0) and test_engine_gpu.
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call8.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c8.tar.xz /tmp/c8
for r in 1 2; do
  for b in 8 1 32; do
    decode r$r-l-b$b-act0 act llama-2-7b $b --gemm-whole-swap 0
    decode r$r-l-b$b-act1 act llama-2-7b $b
    decode r$r-l-b$b-head head llama-2-7b $b
  done
  decode r$r-o-b8-act1 act opt-6.7b 8
  decode r$r-o-b8-head head opt-6.7b 8
done
timeout 120 $W/act/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
  --layers 8 --deploy 0 --gemm-whole-swap 0 --diag-times $R/st-b8-act0-times.json > $R/st-b8-act0.txt 2>&1
echo "st-b8-act0 rc=$? ${SECONDS}s" >> $S
call_test test_engine_gpu act
call_end c8
