#!/usr/bin/env bash
# Twenty-fifth session (lead): the prologue's parameter lines and tensor maps asked for at once at entry (warm) against
# the merged head (tests.tar.xz's dak), PDL graphs in the fixed section, two rounds interleaved; then the clock64
# prologue prints of the warm build (clk.tar.xz).  D=build-s25-carry OUT=... bash docs/perf/raw/warm-ab-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/warm}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
mkdir -p $D/head $D/warm && tar -C $D/head -xJf $D/tests.tar.xz ./dak && tar -C $D/warm -xJf $D/warm.tar.xz
run() { local tag=$1 v=$2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 --n 1,24,64 \
    --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
run r1 head; run r1 warm; run r2 warm; run r2 head
timeout 120 $D/warm/test_gemm_split --quick > $O/test-warm-quick.txt 2>&1; echo "test_gemm_split --quick (warm) rc=$?: $(tail -1 $O/test-warm-quick.txt)" >>"$S"
OUT=$O D=$D bash docs/perf/raw/prologue-clk-s25.sh >>"$S" 2>&1
cat "$S"
