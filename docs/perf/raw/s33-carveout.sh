#!/usr/bin/env bash
# Thirty-third session (lead), call 1.  (a) The shared-memory carveout: in the thirty-second session's breakdowns the
# GEMM two kernels after each k_whole (ffn_in after o_proj -> norm, qkv after ffn_out -> norm) ran 2-3 us a layer
# slower, though its stamps were not slower from wait to exit.  No kernel sets a carveout preference, so the driver
# picks one per kernel: k_whole (222.7 KB) the 228 KB configuration, the split under the engine's 4-slot rings (157.7
# KB) the 164 KB one, the norm a small one; an SM changes configuration only once idle, so a GEMM whose CTAs land on
# SMs last configured by a kernel of another size waits for that.  Build cv/ = the head + `s33-carveout.patch`
# (DAK_CV=1: the GEMM kernels prefer the maximum carveout; 2: every kernel of the step).  dak decode OPT-30B b1 / b8 /
# b64 at DAK_CV 0 / 1 / 2 interleaved, two rounds (breakdowns at b8 in round 1), Llama-2-7B b1 / b8 at 0 / 2.
# Prediction: b1 / b8 -0.5 to -1 % (2-3 us a layer of 48, of ~14.5 ms: up to -1 %) at 1 and 2; b64 +-0.2 %;
# Llama (no k_whole) within noise at 0 / 2 unless the norm's switches cost too.
# (b) The thirty-second session's unrun call 7 (s32-arrive.sh): arr/ = cv/ + s32-arrive.patch; the GEMM bench's PDL
# graphs, cv against arr at DAK_CV unset, interleaved, two rounds; test_gemm_split --whole on arr/.  Prediction
# within +-0.3 %.
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-carveout.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c1.tar.xz /tmp/carveout
for r in 1 2; do
  for b in 1 8 64; do
    for cv in 0 1 2; do
      bk=""; [ $r = 1 ] && [ $b = 8 ] && bk="--breakdown 3"
      DAK_CV=$cv decode r$r-b$b-cv$cv cv opt-30b $b $bk
    done
  done
  for b in 1 8; do
    for cv in 0 2; do DAK_CV=$cv decode r$r-llama-b$b-cv$cv cv llama-2-7b $b; done
  done
done
call_test test_gemm_split arr --whole
for r in 1 2; do
  for b in cv arr; do
    bench g-$r-$b $b --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,7168x28672 --n 1,8,16,32,48,64
  done
done
call_end s33-carveout
