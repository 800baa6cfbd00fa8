#!/usr/bin/env bash
# Thirty-third session (lead), call 5: the two r = 0 shapes still behind cuBLAS, with the landed build (call 4's fin/).
# 4096^2 (Llama-2-7B's q / k / v / o; the thirty-first session: 13.2-13.95 us against cuBLAS's 12.0-12.6 as graphs,
# bound 7.9 us, N 8 slower than N 32) at N 8 / 32 / 64, and 11008x4096 at N 17 / 24 / 32 (0.97-0.99x), each with the
# plan's knobs one at a time: 64-column blocks a slot (kstep 1 / 2 against the auto 4 at N <= 32), all 132 SMs
# (tile-align 0), one tile a CTA (hbm-sms 64), 64-row tiles at N 64 (bm 64), k_whole (64 CTAs; clusters of 4).  PDL
# graphs, two rounds.  Prediction: a 33.5 MB GEMM is mostly fixed cost (~5 us above the bound), so a plan with
# fewer, deeper stages or no split-K fix-up can take 0.5-1 us; k_whole's 64 idle SMs cost more than it saves.
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-small.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c4.tar.xz /tmp/small
for r in 1 2; do
  for m in "def" "k1 --kstep 1" "k2 --kstep 2" "ta0 --tile-align 0" "h64 --hbm-sms 64" "bm64 --bm 64" \
           "w1 --whole 1" "w1c4 --whole 1 --whole-cl 4"; do
    set -- $m; t=$1; shift
    bench sq-$r-$t fin --sections fixed --ratios 0 --reps 5 --shapes 4096x4096 --n 8,32,64 "$@"
  done
  for m in "def" "k1 --kstep 1" "k2 --kstep 2" "w1 --whole 1"; do
    set -- $m; t=$1; shift
    bench ff-$r-$t fin --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n 17,24,32 "$@"
  done
done
call_end s33-small
