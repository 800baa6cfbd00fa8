#!/usr/bin/env bash
# Thirty-fifth session, call 7: with k_whole's new end (005d221, no cluster barrier), are the auto clusters (4 from N
# 41) and the window (4 stages) still the best at 7168^2 N 32-64, where it stays at 92.5-95.8 % of the bound?  The
# barrier had kept a cluster's members together at the end; without it a cluster costs only the lock step while
# streaming.  PDL graphs, two rounds: clusters 1 / 2 / 4 asked, windows 3 and 6 (auto clusters), against the default.
# Prediction: clusters 4 still best at N 48-64 (by 0.2-0.5 us, as the thirty-third session), window +-0.2 us.  And
# 11008 x 4096 on k_whole's 128-row tiles (--whole 1, 86 CTAs) against the split (the thirty-third session: 1.6-1.8 us
# slower), once: prediction still 1-1.5 us slower.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35f.tar.xz /tmp/c7
SH="--sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 32,40,48,56,64"
for r in 1 2; do
  bench r$r-def new $SH
  bench r$r-cl1 new $SH --whole-cl 1
  bench r$r-cl2 new $SH --whole-cl 2
  bench r$r-cl4 new $SH --whole-cl 4
  bench r$r-w3 new $SH --whole-window 3
  bench r$r-w6 new $SH --whole-window 6
done
bench r1-11008-w128 new --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n 1,8,16,24,32,48,64 --whole 1
bench r1-11008-def new --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n 1,8,16,24,32,48,64
call_end c7
