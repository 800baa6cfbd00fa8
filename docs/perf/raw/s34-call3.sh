#!/usr/bin/env bash
# Thirty-fourth session (lead), call 3: why k_whole_sw streams slowly.  Call 2: k_whole_sw 30-50 % slower than the
# defaults on 4096^2, 4096 x 11008, 11008 x 4096, 7168^2 (7168^2 N 8: 36.7 against 24.5 us; its stamps: streaming 31.9
# us against k_whole's ~20.7, the last-slot spread 9.2 us against 2.5), +10 % on 12288 x 4096, but 2.4-7 % FASTER
# on 22016 x 4096 (42.1 us at N 1: ~100 % of the bound), the one shape whose R (168) splits the rows between the
# warpgroups (halves) instead of alternating stages.  Candidates: (i) R not a multiple of 64, so that a CTA's rows
# share 64-row boxes with its neighbours' and its copies are pieces (1-7 KiB) of 8 KiB blocks: test R = 64 on 7168^2
# (--bm 64: 112 CTAs, whole boxes, k_whole's tiles) and R = 128 on 11008 x 4096 (--bm 128, 86 CTAs); (ii) the
# alternate stages: the half/ build takes halves at every R; (iii) too few bytes in flight: --whole-window 10.
# Reference: the default (k_whole / split).  Prediction: if (i), bm 64 streams like k_whole (7168^2 N 8 ~24.6 us)
# and halves changes little; if (ii), half/ brings 7168^2 toward 24.6.
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call3.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c3.tar.xz /tmp/c3
for r in 1 2; do
  for sh in 7168x7168 11008x4096 4096x4096; do
    bm=64; [ $sh = 11008x4096 ] && bm=128
    bench r$r-$sh-def sw --sections fixed --ratios 0 --reps 5 --shapes $sh --n 8,32
    bench r$r-$sh-swap sw --sections fixed --ratios 0 --reps 5 --shapes $sh --n 8,32 --whole 1 --whole-swap 2
    [ $sh = 4096x4096 ] || bench r$r-$sh-bm sw --sections fixed --ratios 0 --reps 5 --shapes $sh --n 8,32 --whole 1 --whole-swap 2 --bm $bm
    bench r$r-$sh-half half --sections fixed --ratios 0 --reps 5 --shapes $sh --n 8,32 --whole 1 --whole-swap 2
    bench r$r-$sh-w10 sw --sections fixed --ratios 0 --reps 5 --shapes $sh --n 8,32 --whole 1 --whole-swap 2 --whole-window 10
  done
done
call_test test_gemm_split sw --whole
call_end c3
