#!/usr/bin/env bash
# Thirty-second session (lead), call 5.  Call 4's stamps (s32-stamps.sh, dak decode OPT-30B b8, layer 4): k_whole's
# 112 CTAs streamed unevenly in the engine: o_proj's fastest CTA filled its last stage 18 us after entry, the median
# 25, the slowest 44 (the split's 112 CTAs there: 24-30 us); ffn_out's spread 108 us (the split's 64).  With 12
# stages (192 KiB of A) in flight a CTA, some SMs take more than their share of HBM; in the GEMM bench's PDL graphs the
# next launch's CTAs fill what the early ones leave, in the engine a norm follows.  The split's remedy (the engine's
# gemm_hbm_window 2, twenty-ninth session) is a window of copies in flight after the wait; k_whole now has one
# (opts.whole_window: stages of A in flight).  Builds of one tree with the auto window 0 (the ring: t0 = ww0), 3, 4, 6
# stages; dak decode OPT-30B b1 / b8 / b64 with each and with the split, interleaved, two rounds; the GEMM bench's
# PDL graphs of 7168^2 and 7168x28672 with --whole-window 0 / 3 / 4 / 6 and the split; the b8 stamps with 4.
# Prediction: a window of 4 (64 KiB of A a CTA, 7 MiB over 112 CTAs) evens the CTAs out (o_proj's slowest within
# ~3 us of the median): the engine's b8 loss (+0.5 %) turns into a gain (~-0.5 %), b64 -0.5 -> ~-1 %; in the GEMM
# bench +0-2 % against the ring (the early CTAs' share no longer runs ahead).
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-window.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c5.tar.xz /tmp/window
call_test test_gemm_split ww0 --whole
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 bin=$2 b=$3; shift 3
  timeout 120 $W/$bin/dak decode --model configs/opt-30b --batch $b --prompt 8 --tokens 24 --ratios 0 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for r in 1 2; do
  for b in 1 8 64; do
    bk=""; [ $r = 1 ] && [ $b = 8 ] && bk="--breakdown 3"
    for t in ww0 ww3 ww4 ww6; do dec r$r-b$b-$t $t $b --deploy 1 $bk; done
    dec r$r-b$b-split ww0 $b --deploy 1 --gemm-whole 0 $bk
  done
done
dec st-b8-ww4 ww4 8 --layers 8 --deploy 0 --diag-times $R/st-b8-ww4-times.json
for w in 0 3 4 6; do
  bench g-ww$w ww0 --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,7168x28672 --n 1,8,16,32,64 --whole-window $w
done
bench g-split ww0 --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,7168x28672 --n 1,8,16,32,64 --whole 0
call_end s32-window
