#!/usr/bin/env bash
# Twenty-sixth session (lead), second call: (1) the consumers' tail per warp by clock64 (t: af5fc34 +
# raw/tail-clk-2026-12-02-s26.patch); (2) test_gemm_split in full on u (the owner's adds of 64-column tiles
# unrolled by 4, so that the contributors' partials are loaded in one L2 round trip); (3) PDL graphs h (af5fc34)
# against u, two interleaved rounds.  carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-call2.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; O=/tmp/s26c2; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
tar -C $D -xJf $D/s26c2.tar.xz
timeout 120 $D/t/dak bench gemm --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 1,24,64 \
  --json "$O/tail.json" >"$O/tail.txt" 2>&1
echo "tail rc=$? $(grep -c CLKT "$O/tail.txt") lines ${SECONDS}s" >>"$S"
timeout 150 $D/u/test_gemm_split > $O/test-u.txt 2>&1; echo "test_gemm_split (u) rc=$?: $(tail -1 $O/test-u.txt) ${SECONDS}s" >>"$S"
run() { local tag=$1 v=$2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 --n 1,8,16 \
    --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
run r1 h; run r1 u; run r2 u; run r2 h
gzip -9 $O/*.json
cat "$S"
tar -C /tmp -czf "$OUT/s26-call2.tgz" s26c2
