#!/usr/bin/env bash
# Twenty-fifth session (lead): the producer's first segment worked out before the block barrier (early) against the
# merged head (tests.tar.xz's dak): test_gemm_split in full on early, then PDL graphs in the fixed section, two rounds
# interleaved; then the clk patch's second form (the first segment twice, each timed).
# D=build-s25-carry OUT=... bash docs/perf/raw/early-seg-ab-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/early}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
mkdir -p $D/head $D/early && tar -C $D/head -xJf $D/tests.tar.xz ./dak && tar -C $D/early -xJf $D/early.tar.xz
timeout 150 $D/early/test_gemm_split > $O/test-early.txt 2>&1; echo "test_gemm_split (early) rc=$?: $(tail -1 $O/test-early.txt)" >>"$S"
run() { local tag=$1 v=$2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 --n 1,24,64 \
    --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
run r1 head; run r1 early; run r2 early; run r2 head
OUT=$O D=$D bash docs/perf/raw/prologue-clk-s25.sh >>"$S" 2>&1
cat "$S"
