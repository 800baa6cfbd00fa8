#!/usr/bin/env bash
# Twenty-sixth session (lead): u2, the offsets consumers' block loops unrolled by 2 (k_split_nn / nn2's
# consume_narrow_offs, k_split_n8's consume_narrow1_offs) against the head (h: 42d2878): test_gemm_split in full on
# u2, then the fixed section (r = 0, N 1 / 8 / 16 / 24 / 32, two shapes) interleaved h u2 u2 h.
# carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-u2.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; O=/tmp/u2; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
tar -C $D -xJf $D/s26c5.tar.xz
timeout 150 $D/u2/test_gemm_split > $O/test-u2.txt 2>&1; echo "test_gemm_split (u2) rc=$?: $(tail -1 $O/test-u2.txt) ${SECONDS}s" >>"$S"
run() { local tag=$1 v=$2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,16,24,32 --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
run r1 h; run r1 u2; run r2 u2; run r2 h
gzip -9 $O/*.json $O/test-u2.txt
cat "$S"
tar -C /tmp -czf "$OUT/s26-u2.tgz" u2
