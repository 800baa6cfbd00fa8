#!/usr/bin/env bash
# For the thirty-seventh session (written in the thirty-sixth, not run).  k_whole_sw over A in row groups on 11008 x
# 4096 (R 88) and 12288 x 4096 (R 96): the window of A in flight after the PDL wait and the stage size, which the plan
# took from k_whole's (64 KiB of A a CTA: 3 stages of 22 KiB at kstep 2, 6 of 11 KiB at kstep 1).  The fixed section's
# grp-pdl column follows --whole-window and --kstep (the bench's options reach it), beside the default plan's pdl.
# Prediction: a wider window (24: the ring) -0.2 to -0.5 us at N 1-8 (more of A in flight from 126 SMs), +-0.2 at N 32-64;
# kstep 1 +0.5 to +1 us (call 1 of the thirty-sixth session: 11 KiB copies slower); kstep 4 (44 KiB stages, 2-3 of
# them) unknown.  Carry build-s37-carry/s37.tar.xz with new/ (the head), then this script.
. docs/perf/raw/call-lib.sh
call_begin build-s37-carry/s37.tar.xz /tmp/s37w
F="--sections fixed --ratios 0 --reps 5 --n 1,8,32,64"
for r in 1 2; do
  for sh in 11008x4096 12288x4096; do
    for w in 0 2 6 24; do bench r$r-$sh-w$w new $F --shapes $sh --whole-window $w; done
    for k in 1 4; do bench r$r-$sh-k$k new $F --shapes $sh --kstep $k; done
  done
done
call_end s37w
