#!/usr/bin/env bash
# Twenty-sixth session (lead): the GPU tests of the kernel as it stands at the session's head (cadad5f: k_split_n8
# with narrow1_b_chunk, the refactor made after call 4's test).  carry ["build-s26-carry"]; OUT=... bash this
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; W=/tmp/s26l; mkdir -p $W && tar -C $W -xJf $D/s26c8.tar.xz
R=/tmp/last; mkdir -p $R; S=$R/summary.txt; date -u > $S
for t in test_gemm_split test_engine_gpu; do
  timeout 100 $W/f/$t > $R/$t.txt 2>&1; echo "$t rc=$? ${SECONDS}s: $(grep -E 'passed, .* failed' $R/$t.txt | tail -1)" >> $S
done
gzip -9 $R/test_*.txt; cat $S
tar -C /tmp -czf "$OUT/s26-last.tgz" last
