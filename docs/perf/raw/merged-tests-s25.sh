#!/usr/bin/env bash
# Twenty-fifth session (lead): the GPU tests of the merged tree (the streaming floor, one tile-layout formula, the
# PASS_END / STREAM_ACK builders), then the prologue clock run (prologue-clk-s25.sh).
# D=build-s25-carry OUT=... bash docs/perf/raw/merged-tests-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/mt}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
W=/tmp/s25t; mkdir -p $W && tar -C $W -xJf "$D/tests.tar.xz"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >>"$S" 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $O/$n.txt 2>&1; local rc=$?
  echo "$n rc=$rc $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $O/$n.txt | tail -1)" >> "$S"; }
t test_stream_net_gpu 60 $W/test_stream_net_gpu
t test_stream_gpu 120 $W/test_stream_gpu
t test_gemm_split 240 $W/test_gemm_split
t test_engine_gpu 240 $W/test_engine_gpu
grep -h -m8 -i 'fail' $O/test_*.txt | grep -v ' 0 failed' >> "$S"
OUT=$O D=$D bash docs/perf/raw/prologue-clk-s25.sh >> "$S" 2>&1
cat "$S"
