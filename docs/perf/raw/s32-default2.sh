#!/usr/bin/env bash
# Thirty-second session (lead), call 2.  Call 1 (s32-default.sh) found dak decode OPT-30B 19-21 % slower a token at
# batch 1 / 8 with k_whole (ffn_out 100 -> 131 us, o_proj 33 -> 38.5 us at b8): the engine's gemm_stages (4 ring slots
# for the split kernels) capped k_whole at 4 stages of 2 blocks, a third of the 12 that fit (37 KiB of A in flight a
# SM while two stages are in the consumers: ~2.8 TB/s).  Now k_whole has its own stage count (opts.whole_stages, 0:
# as many as fit) and opts.stages no longer applies to it.  The same comparison on that build: the default against
# --gemm-whole 0, interleaved, two rounds; at b8 also o_proj reading before its wait (--gemm-pre-none none) both ways.
# Prediction: b1 / b8 -0.5 to -1 % a token (ffn_out ~-2 us, o_proj ~-1 us a layer, as the GEMM bench), b32 ~-0.3 %,
# b64 within noise.  Then test_gemm_split --whole (whole_stages in test_whole) and test_engine_gpu (its k_whole cases
# now on the deepest ring).
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-default2.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c2.tar.xz /tmp/default2
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
  dec r$r-b8-w2-pre 8 --gemm-pre-none none
  dec r$r-b8-w0-pre 8 --gemm-whole 0 --gemm-pre-none none
done
call_test test_gemm_split new --whole
call_test test_engine_gpu new
call_end s32-default2
