#!/usr/bin/env bash
# Twenty-ninth session (lead), call 9: the GPU tests of the 24-row B box after call 8's host crash (a replan request
# for every box not a multiple of 16 with B kept as [n][block][64]: diag_b_nmajor at N <= 8's 8-row box recursed
# without end; now only the 24-row box asks, once).  test_gemm_split in full, test_engine_gpu.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-bn24-tests.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c9.tar.xz
R=/tmp/bn24t; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $S 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $R/$n.txt 2>&1; local rc=$?
  echo "$n rc=$rc $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $R/$n.txt | tail -1)" >> $S; }
t test_gemm_split 200 $W/new/test_gemm_split
t test_engine_gpu 200 $W/new/test_engine_gpu
grep -h -m8 -i 'fail' $R/test_*.txt | grep -v ' 0 failed' >> $S
gzip -9 $R/test_*.txt
cat $S
tar -C /tmp -czf "$OUT/s29-bn24-tests.tgz" bn24t
