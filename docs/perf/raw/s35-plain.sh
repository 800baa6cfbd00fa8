#!/usr/bin/env bash
# For the thirty-fifth session (written in the thirty-fourth, not run: no device time left).  The thirty-fourth
# session's stamps (raw/s34-call7, s34-call8; NOTES-dak-kernels.md "Why the GEMM two kernels on loses") show that no
# CTA of ffn_out (a split GEMM, launched with the cluster attribute, cluster 1) ever entered an SM while a CTA of the
# activation before it was still there (0 of 128 in both runs, with 344 activation CTAs and with 132, so not the
# registers); after the split's ffn_in the activation sat on 51 SMs and ffn_out used the other 81 at once, after
# k_whole_sw's (and k_whole's) the activation entered early on every SM and ffn_out waited for it to end.  Guess: a
# grid launched with a cluster attribute is not placed on an SM that holds CTAs of a grid launched without one (the
# activation, the norm: plain PDL launches), while the other way round is allowed (the activation entered beside
# k_whole_sw).  Test: s35-plain.patch (DAK_PLAIN=1: every cluster-1 GEMM launched without the attribute,
# dak_gemm_opts.diag_plain_launch, tested by test_gemm_split).  Apply it, build into new/, then (carry
# build-s35-carry) this script: dak decode Llama-2-7B b8 / b1 with --gemm-whole-swap 0 and 1, OPT-30B b8 (k_whole's
# o_proj and fc2), DAK_PLAIN 0 / 1 interleaved, two rounds; the stamps at b8 with swap 0 and DAK_PLAIN=1.
# Prediction if the guess holds: ffn_out's CTAs enter during ffn_in's tail with DAK_PLAIN=1; Llama-2-7B b8 with swap 0
# from +2 % to -1 to -2 % against swap 1 without it; OPT-30B b8 -1 to -2 % (the thirty-second session's neighbours'
# 2-3 us a layer); if it fails, DAK_PLAIN changes nothing (+-0.3 %).
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35.tar.xz /tmp/plain
for r in 1 2; do
  for pl in 0 1; do
    for b in 8 1; do
      for sw in 0 1; do DAK_PLAIN=$pl decode r$r-l-b$b-sw$sw-pl$pl new llama-2-7b $b --gemm-whole-swap $sw; done
    done
    DAK_PLAIN=$pl decode r$r-o30-b8-pl$pl new opt-30b 8
  done
done
DAK_PLAIN=1 timeout 120 $W/new/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 --ratios 0 \
  --baseline direct --layers 8 --deploy 0 --gemm-whole-swap 0 --diag-times $R/st-b8-sw0-pl1-times.json \
  > $R/st-b8-sw0-pl1.txt 2>&1
echo "st-b8-sw0-pl1 rc=$? ${SECONDS}s" >> $S
call_end plain
