#!/usr/bin/env bash
# Thirty-fifth session, call 5.  Call 4: k_whole's 64-row tiles with each warpgroup's sums staged apart (one barrier
# and one read-modify-write pass fewer) took 0.1-0.3 us off 7168^2 at N 16-64 (PDL graphs, two rounds, against the
# head's binary) but wrote warpgroup 1's sums over the columns past N that warpgroup 0 stages (wrong C where N is not
# a multiple of 8: 204 test failures); fixed (warpgroup 1's area past 8 wn columns).  The K pair with a window of 2 and
# k_whole_sw at R 64 (one 16 KiB copy a stage now) stayed 0.8-1.9 and 1.0-1.3 us slower: dropped.  This call:
#  (a) new/: the fixed epilogue, and the consumers no longer release the last S stages (nobody refills them);
#      7168^2 and 7168 x 28672, N 1-64, PDL graphs, two rounds, against head/.  Prediction: 7168^2 as call 4 (-0.1 to
#      -0.3 us at N 16-64), 7168 x 28672 (clusters of 4) within +-0.3 us.
#  (b) DAK_NOSYNC=1 (experiment): k_whole's members leave without the end's cluster barrier (no member arrives on
#      another's barriers after that one's producers' last wait, (a)), so an SM is free as soon as its own CTA ends.  The
#      stamps put 0.9 us of k_whole's epilogue at N >= 41 in that barrier.  Prediction: 7168^2 N 41-64 and 7168 x 28672
#      -0.3 to -0.8 us against (a).
#  (c) dak decode (r = 0, deploy 1) Llama-2-7B b8, OPT-6.7B b8 and OPT-30B b8 (their o_proj on k_whole's 64-row tiles),
#      head/ against new/, two rounds: prediction -0.1 to -0.3 % (0.1-0.3 us of 16-25 us a layer).
# test_gemm_split --whole first, and again with DAK_NOSYNC=1.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35e.tar.xz /tmp/c5
call_test test_gemm_split new --whole
DAK_NOSYNC=1 timeout 200 $W/new/test_gemm_split --whole > $R/nosync-test.txt 2>&1
echo "nosync test rc=$? $(grep -E 'passed, .* failed' $R/nosync-test.txt | tail -1)" >> $S; grep -m5 FAIL $R/nosync-test.txt >> $S
SH="--sections fixed --ratios 0 --reps 5 --shapes 7168x7168,7168x28672 --n 1,8,16,24,32,40,48,56,64"
for r in 1 2; do
  bench r$r-head head $SH
  bench r$r-new new $SH
  DAK_NOSYNC=1 bench r$r-nosync new $SH
done
for r in 1 2; do
  for b in head new; do
    decode r$r-l-b8-$b $b llama-2-7b 8
    decode r$r-o67-b8-$b $b opt-6.7b 8
    decode r$r-o30-b8-$b $b opt-30b 8
  done
done
call_end c5
