#!/usr/bin/env bash
# Thirtieth session (lead), call 3: call 1 found bnw (the B box N rounded up to 8 rows at N 33..56) -2.0 to -2.7 us at
# N = 33 (the head had a cliff there: 7168^2 31.2 us against 28.5 at N = 36; 11008x4096 27.4 / 27.0 at N 33 / 36) and
# -0.5 to -1.4 on 11008x4096 N 36-40, but +0.4-0.5 on 7168^2 N 40 / 48 and +0.8 / +1.9 on 28672x7168 N 40 / 48, where
# the box equals N and a fifth 128-row slot fits (7168^2 N 40: last-slot spread 3.65 us against 2.1-2.3 on 4 slots, the
# deeper ring's late SMs of the twenty-eighth session).  Same binary, flags only, two rounds: bnw 1 as planned (5 slots
# at N 33-48), bnw 1 on 4 slots (--stages 4), bnw 1 with a window of 4 copies (--hbm-window 4), bnw 0.
# Prediction: bnw 1 on 4 slots <= bnw 0 everywhere (B's bytes only: -0.1 to -0.4 us) and keeps N = 33's gain (the
# cliff is not the depth); 11008x4096 N 36-40 keeps part of its gain (K = 4096: 16 slots a tile, the ring's depth
# matters more).  And 64-row tiles (--bm 64: one whole-K tile a CTA on 7168^2, no split-K tail, which is 3.2-3.3 us
# after the last slot at N 33-64 against 1.5 at N <= 32), with and without bnw: with a 40-row box B is 0.625x A's
# bytes into the SMs, not 1x as at N = 64 in the eleventh session (24.3 us streaming against 20.9): predicted
# streaming ~21.8 us, tail ~1.6: 7168^2 N 33-40 -0.5 to -1 us against bnw's 128-row tiles; worse at N 49-56.
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-bnw2.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c2.tar.xz /tmp/bnw2
NB=33,34,35,36,38,40,44,48,52,56
for r in 1 2; do
  for v in "a" "s4 --stages 4" "w4 --hbm-window 4" "w0 --bnw 0" "m64 --bm 64" "m64w0 --bm 64 --bnw 0"; do
    set -- $v; t=$1; shift
    bench r$r-$t-a new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n $NB "$@"
    bench r$r-$t-b new --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n 36,40,44,48,56 "$@"
  done
done
# 11008x4096 at N 17-32 (the width sweep of call 2: 80-81 % of the bound on 64-row tiles, against 86-87 % at N 9-16 on
# 128-row ones, a 1.4 us step at N 16 -> 17): 128-row tiles (k_split_nn2, the 32-row box) with and without a window
# of 2.  Prediction: the sixteenth session found them equal at N 24-32 without the window or the 24-row box; if the
# step is the tile height, --bm 128 at N 17-20 runs near N = 16's 24.7 us.
for r in 1 2; do
  for v in "a" "m128 --bm 128" "m128w2 --bm 128 --hbm-window 2"; do
    set -- $v; t=$1; shift
    bench r$r-$t-c new --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n 16,17,20,24,28,32 "$@"
  done
done
# the engine at batch widths where bnw plans a narrower box (the head's binary against this one; all defaults)
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
for r in 1 2; do
  for b in 33 40; do
    for bin in new head; do
      timeout 80 $W/$bin/dak decode --model configs/llama-2-7b --batch $b --prompt 8 --tokens 24 --ratios 0 \
        --baseline direct --json $R/r$r-dec-b$b-$bin.json > $R/r$r-dec-b$b-$bin.txt 2>&1
      echo "r$r-dec-b$b-$bin rc=$? ${SECONDS}s: TPOT $(row $R/r$r-dec-b$b-$bin.txt) ms" >> $S
    done
  done
done
call_end s30-bnw2
