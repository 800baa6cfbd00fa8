#!/usr/bin/env bash
# Thirty-second session (lead), call 4.  Call 3 (s32-trigger.sh): where k_whole lets its dependents launch (top, after
# B's last copy, exit) does not change what the GEMM two kernels after it loses (ffn_in after o_proj -> norm, qkv after
# ffn_out -> norm: +2-3 us a layer in the breakdowns, with every trigger).  Here the stamps of every CTA of the middle
# layer (dak decode --diag-times; 8 layers, a full copy in each tier) with k_whole (default) and with the split
# (--gemm-whole 0) at b8 and b64: when ffn_in's CTAs enter, pass their wait, stream, exit.  And the whole model's
# TPOT with only the GEMMs as PDL launches (--pdl 1) and none (--pdl 0), both ways: does the loss need PDL?
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-stamps.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c3.tar.xz /tmp/stamps
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 b=$2; shift 2
  timeout 120 $W/t0/dak decode --model configs/opt-30b --batch $b --prompt 8 --tokens 24 --ratios 0 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for b in 8 64; do
  dec st-b$b-w2 $b --layers 8 --deploy 0 --diag-times $R/st-b$b-w2-times.json
  dec st-b$b-w0 $b --layers 8 --deploy 0 --diag-times $R/st-b$b-w0-times.json --gemm-whole 0
done
for r in 1 2; do
  for p in 1 0; do
    dec r$r-b8-pdl$p-w2 8 --deploy 1 --pdl $p
    dec r$r-b8-pdl$p-w0 8 --deploy 1 --pdl $p --gemm-whole 0
  done
done
call_end s32-stamps
