#!/usr/bin/env bash
# Thirty-second session (lead), call 1: whole-K tiles auto (dak_gemm_opts.whole 2) as the GEMMs' default.  The GPU
# suites on that build (test_gemm_split: the split's tests with whole 0, test_whole, k_whole in PDL chains alone and
# beside host-row layers; test_engine_gpu: k_whole in every GEMM it applies to, --whole-variant cases), then dak decode
# OPT-30B (the one model of configs/ with a shape in the auto band: o_proj's 7168^2, and fc2's 7168x28672 at batch
# <= 8) at r = 0, default (--gemm-whole 2) against --gemm-whole 0 (the split), interleaved, two rounds, and the
# unrun 28672x7168 width sweep (s30-nsweep3: the split's plans, k_whole does not apply there).
# Prediction (thirty-first session's GEMM figures, PDL graphs): b1 / b8 ~ -0.9 % a token (o_proj -1 us and fc2 -1.8 us
# a layer, 48 layers, of ~15.5 ms), b32 ~ -0.3 % (o_proj only, -0.9 us), b64 within noise (-0.2 us a layer).  Less if
# the engine's 4-slot rings (gemm_stages) or o_proj's nothing-before-the-wait (gemm_pre_none) take k_whole's lead.
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-default.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c1.tar.xz /tmp/default
call_test test_gemm_split new
call_test test_engine_gpu new
grep -q ', 0 failed' $R/test_gemm_split.txt && grep -q ', 0 failed' $R/test_engine_gpu.txt || { call_end s32-default; exit 0; }
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 b=$2; shift 2
  timeout 90 $W/new/dak decode --model configs/opt-30b --batch $b --prompt 8 --tokens 24 --ratios 0 --deploy 1 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for r in 1 2; do
  for b in 1 8 32 64; do
    bk=""; [ $r = 1 ] && { [ $b = 8 ] || [ $b = 64 ]; } && bk="--breakdown 3"
    dec r$r-b$b-w2 $b $bk
    dec r$r-b$b-w0 $b --gemm-whole 0 $bk
  done
done
for q in 1 17 33 49; do
  bench sw-28672x7168-$q new --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n $(seq -s, $q $((q + 15)))
done
call_end s32-default
