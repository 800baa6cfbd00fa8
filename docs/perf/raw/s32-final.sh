#!/usr/bin/env bash
# Thirty-second session (lead), call 6: the build to land (whole-K tiles auto as the default, opts.whole_stages apart
# from the split's opts.stages, a window of 4 stages of A after the wait by default).  The GPU suites in full; dak
# decode OPT-30B at b1 / b8 / b32 / b64, the default against --gemm-whole 0, interleaved, two rounds; the GEMM
# bench's PDL graphs on 7168^2 at every N 1..64, the default against --whole 0; and 7168x28672 at N 9..64 with
# k_whole asked for (--whole 1: the auto rule keeps the split there) against the split, for the K rule.
# Prediction (call 5): b8 -1.0 %, b64 -0.4 %, b1 +0.3 %, b32 within 0.3 %; 7168^2 as the ring's sweep (s31-whole3)
# within ~1 %: faster than the split at every N; 7168x28672 N > 8 with the window: within 1 % of the split.
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-final.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c6.tar.xz /tmp/final
call_test test_gemm_split new
call_test test_engine_gpu new
grep -q ', 0 failed' $R/test_gemm_split.txt && grep -q ', 0 failed' $R/test_engine_gpu.txt || { call_end s32-final; exit 0; }
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 b=$2; shift 2
  timeout 90 $W/new/dak decode --model configs/opt-30b --batch $b --prompt 8 --tokens 24 --ratios 0 --deploy 1 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for r in 1 2; do
  for b in 1 8 32 64; do
    dec r$r-b$b-def $b
    dec r$r-b$b-split $b --gemm-whole 0
  done
done
for q in 1 17 33 49; do
  for w in 2 0; do
    bench sw-$q-w$w new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, $q $((q + 15))) --whole $w
  done
done
for w in 1 0; do
  bench k4-w$w new --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 9,16,24,32,48,64 --whole $w
done
call_end s32-final
