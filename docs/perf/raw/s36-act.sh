#!/usr/bin/env bash
# For the thirty-sixth session (written in the thirty-fifth, not run: no device time left).  The thirty-fifth session
# found why the split GEMM after a small kernel enters late (raw/s35-fit.cu): its 10 warps of 168 registers fill two of
# an SM's four register quarters, so it never shares an SM with another kernel's warps.  So every SM the activation (or
# the norm) holds when the split GEMM after it is scheduled is an SM that GEMM's CTA waits for, and loses its ring's
# prefetch on: after the split's ffn_in the activation sat on 51 SMs and 47 of ffn_out's 128 CTAs entered ~14 us late
# (raw/s34-call7); after k_whole_sw's, on all 132.  raw/s36-act.patch (DAK_ACT_CTAS=k: the activation on k CTAs of 1024
# threads; DAK_LEAVE=1: q/k/v and ffn_in planned on the SMs the norm's batch CTAs leave, ffn_out on those the
# activation's k leave).  Apply it, build into new/, then (carry build-s36-carry) this script: dak decode Llama-2-7B b8
# with the split's ffn_in (swap 1) and k_whole_sw's (swap 0), b1, b32, OPT-6.7B b8, OPT-30B b8, with DAK_ACT_CTAS 0 / 4
# and DAK_LEAVE 0 / 1, two rounds; the stamps of Llama-2-7B b8 swap 0 with both.
# Prediction: ACT_CTAS 4 with LEAVE 1: Llama-2-7B b8 swap 1 -0.5 to -1.5 %, swap 0 -2 to -3 % against swap 1 without
# (k_whole_sw then worth the engine's default), OPT-6.7B b8 -0.5 to -1 %, b1 -0.3 to -1 % (the activation's 43 CTAs);
# OPT-30B +-0.3 % (fc2 is k_whole, 58 registers, which shares SMs); the activation on 4 SMs itself ~1 us longer.
# If ffn_out's late CTAs were not the loss, +-0.3 % everywhere and ffn_out's stamps show every CTA entering early.
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36.tar.xz /tmp/act
for r in 1 2; do
  for cfg in "0 0" "4 1" "8 1" "0 1"; do
    set -- $cfg; a=$1; lv=$2
    for sw in 1 0; do DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b8-sw$sw-a$a-l$lv new llama-2-7b 8 --gemm-whole-swap $sw; done
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b1-a$a-l$lv new llama-2-7b 1
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b32-a$a-l$lv new llama-2-7b 32
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-o67-b8-a$a-l$lv new opt-6.7b 8
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-o30-b8-a$a-l$lv new opt-30b 8
  done
done
DAK_ACT_CTAS=4 DAK_LEAVE=1 timeout 120 $W/new/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 \
  --ratios 0 --baseline direct --layers 8 --deploy 0 --gemm-whole-swap 0 --diag-times $R/st-b8-sw0-a4-l1-times.json \
  > $R/st-b8-sw0-a4-l1.txt 2>&1
echo "st-b8-sw0-a4-l1 rc=$? ${SECONDS}s" >> $S
call_end act
