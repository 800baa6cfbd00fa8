#!/usr/bin/env bash
# Thirty-fourth session (lead), call 7: why the GEMM two kernels after a whole-K kernel loses 2-3 us (call 5: with
# k_whole_sw on Llama-2-7B's ffn_in, ffn_out +2.2 us a layer in the breakdown; the thirty-second session saw the same
# after k_whole).  Guess: a whole-K kernel holds every SM's shared memory to its last CTA's end and its CTAs end
# together, where the split's uneven tail frees SMs early, so the next GEMM's CTAs (ffn_out, after act) enter and
# issue their pre-wait copies of A later.  The stamps of layer 4 of 8 (deploy 0, b8) with --gemm-whole-swap 0 and 1.
# Prediction: with 0, ffn_in's exits within ~2 us of each other, ffn_out's earliest / median entry later relative to
# act's wait than with 1, and its first slot full later after its wait.
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call7.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c6.tar.xz /tmp/c7
for s in 0 1; do
  timeout 120 $W/fin/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    --layers 8 --deploy 0 --gemm-whole-swap $s --diag-times $R/st-b8-sw$s-times.json > $R/st-b8-sw$s.txt 2>&1
  echo "st-b8-sw$s rc=$? ${SECONDS}s" >> $S
done
call_end c7
