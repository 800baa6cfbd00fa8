#!/usr/bin/env bash
# Thirty-fifth session, call 4.  Call 3: the K pair (whole_kpair 2) was 0.7-1.3 us slower than k_whole on 7168^2 at
# every N, but its stamps show why: each CTA streamed faster (20.1 against 21.1 us) while the last-slot spread grew from
# 2.5-3.0 to 5.5-5.7 us, with a window of 4 stages (of 32 KiB of A: 128 KiB in flight, twice k_whole's 64 KiB, which
# is what evened the SMs' shares in the thirty-second session); and the tail after the last slot (1.3 us at N 1, 1.9
# at N 32, 3.0 at N 64) is most of what grows with N, not B's bytes (the pair halves them and grew as much).  This call,
# 7168^2 PDL graphs, N 1-64, two rounds, against the head's binary (head/, the kernels of 3a49695):
#  (a) new/ default: k_whole's 64-row tiles stage each warpgroup's sums apart and add them in the store loop (one
#      barrier and one read-modify-write pass fewer).  Prediction -0.1 to -0.3 us at N 16-64, +-0.1 at N 1-8.
#  (b) the K pair with a window of 2 stages (64 KiB): spread back to ~3 us; -0.3 to -0.8 us against (a) or no gain.
#  (c) k_whole_sw with R 64 (--bm 64): one 16 KiB copy a stage now (whole boxes), warpgroups on alternate stages:
#      ~(a) +-2 % (the thirty-fourth session's +14 % was the 8 KiB copies).
#  (d) (c) with the warpgroups on every stage, 32 rows each (DAK_SWH=1, an experiment): no reduction between them at
#      the end, the last stage shared: the tail -0.5 us, so -0.3 to -0.6 us against (a) at N 16-64.
# test_gemm_split --whole first (k_whole's new epilogue; the K pair; R 64), and again with DAK_SWH=1 (halves at every R).
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35d.tar.xz /tmp/c4
call_test test_gemm_split new --whole
DAK_SWH=1 timeout 200 $W/new/test_gemm_split --whole > $R/swh-test.txt 2>&1
echo "swh test rc=$? $(grep -E 'passed, .* failed' $R/swh-test.txt | tail -1)" >> $S; grep -m5 FAIL $R/swh-test.txt >> $S
SH="--sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,24,32,40,48,56,64"
for r in 1 2; do
  bench r$r-head head $SH
  bench r$r-new new $SH
  bench r$r-kpw2 new $SH --whole 1 --whole-kpair 2 --whole-window 2
  bench r$r-sw64 new $SH --whole 1 --whole-swap 2 --bm 64
  DAK_SWH=1 bench r$r-sw64h new $SH --whole 1 --whole-swap 2 --bm 64
done
call_end c4
