#!/usr/bin/env bash
# Thirty-fifth session, call 2.  Call 1 (s35-plain.sh) refuted the cluster-attribute guess: with DAK_PLAIN=1 no
# ffn_out CTA entered an SM holding an activation CTA either (0 of 128), TPOT within 0.5 %.  New guess (registers by SM
# sub-partition): the split kernel's 10 warps of 168 registers put 3 warps (16128 of 16384 registers) on two of an SM's
# four quarters, so it cannot enter an SM where any warp of another kernel sits in those quarters; k_whole (58
# registers) and k_whole_sw (90) leave room, so the activation's CTAs enter beside them early on every SM and the GEMM
# after the activation must wait for it to end.  After the split's ffn_in the activation can only take SMs as ffn_in
# leaves them (its registers keep it out too), so ffn_out finds free SMs.  (1) s35-fit: a probe of which CTAs enter
# beside small ones (shared memory 150-227 KiB, 168 registers at 320 and 256 threads, a "pre" kernel of 227 KiB).
# Prediction: smem up to 226 KiB enters beside one small CTA (227 KiB beside none); 168 registers x 320 threads never,
# x 256 threads yes; nothing enters beside pre at 227 KiB.  (2) DAK_WF=1 (experiment in plan.c): k_whole and k_whole_sw
# ask the whole opt-in shared memory, so that no small CTA enters beside them.  Prediction: Llama-2-7B b8 with
# --gemm-whole-swap 0 from ~4.07 to ~3.93-3.95 ms (below swap 1's ~3.98); b1 / b32 and OPT-6.7B b8 +-0.3 %; OPT-30B
# b8 (k_whole on o_proj and fc2) -0.5 to -1 %.  Stamps at b8 swap 0 with DAK_WF=1: ffn_out's CTAs enter during ffn_in.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35b.tar.xz /tmp/c2
$W/fit/s35-fit > $R/fit.txt 2>&1; echo "fit rc=$? ${SECONDS}s" >> $S
for r in 1 2; do
  for wf in 0 1; do
    for sw in 0 1; do DAK_WF=$wf decode r$r-l-b8-sw$sw-wf$wf new llama-2-7b 8 --gemm-whole-swap $sw; done
    DAK_WF=$wf decode r$r-l-b1-sw0-wf$wf new llama-2-7b 1 --gemm-whole-swap 0
    DAK_WF=$wf decode r$r-l-b32-sw0-wf$wf new llama-2-7b 32 --gemm-whole-swap 0
    DAK_WF=$wf decode r$r-o67-b8-wf$wf new opt-6.7b 8
    DAK_WF=$wf decode r$r-o30-b8-wf$wf new opt-30b 8
  done
done
DAK_WF=1 timeout 120 $W/new/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 --ratios 0 \
  --baseline direct --layers 8 --deploy 0 --gemm-whole-swap 0 --diag-times $R/st-b8-sw0-wf1-times.json \
  > $R/st-b8-sw0-wf1.txt 2>&1
echo "st-b8-sw0-wf1 rc=$? ${SECONDS}s" >> $S
cat $R/fit.txt
call_end c2
