#!/usr/bin/env bash
# Thirty-fifth session, call 8.  Call 7: with no cluster barrier at k_whole's end (005d221) clusters of 4 now also win
# at 7168^2 N 32 (24.83-24.86 against 25.18-25.20 us without) and N 40 (25.05-25.12 against 25.65-25.79), where the
# auto rule (4 from N 41, plan.c's WHOLE_CL_MIN_N) takes none; windows 3 / 6 were no better.  Where does the gain
# begin?  7168^2 N 1-40 and 4096^2 (64 tiles; k_whole at N <= 32) with --whole-cl 4 against the default, PDL graphs,
# two rounds.  Prediction: clusters 4 faster from N ~17 (B a third of A's bytes or more), +-0.2 us below.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35f.tar.xz /tmp/c8
S7="--sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,9,16,17,24,25,32"
S4="--sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 1,8,16,24,32"
for r in 1 2; do
  bench r$r-7-def new $S7
  bench r$r-7-cl4 new $S7 --whole-cl 4
  bench r$r-4-def new $S4
  bench r$r-4-cl4 new $S4 --whole-cl 4
done
call_end c8
