#!/usr/bin/env bash
# Twenty-sixth session (lead): k_split_n8 (N <= 8 on narrow1's ldmatrix offsets worked out once a tile, an
# instantiation of its own) against the head (h: 6cb2e95's kernel = af5fc34's): test_gemm_split in full on n8, then
# the fixed section (r = 0, N 1 / 4 / 8, three shapes) interleaved h n8 n8 h, then a sweep point with host rows
# (7168^2, N 1 and 8, r 10 %) each.  carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-n8.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; O=/tmp/n8; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
tar -C $D -xJf $D/s26c4.tar.xz
timeout 150 $D/n8/test_gemm_split > $O/test-n8.txt 2>&1; echo "test_gemm_split (n8) rc=$?: $(tail -1 $O/test-n8.txt) ${SECONDS}s" >>"$S"
run() { local tag=$1 v=$2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096,28672x7168 \
    --n 1,4,8 --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
run r1 h; run r1 n8; run r2 n8; run r2 h
for v in h n8; do
  timeout 120 "$D/$v/dak" bench gemm --sections sweep --ratios 10 --reps 7 --shapes 7168x7168 --n 1,8 \
    --json "$O/sweep-$v.json" >"$O/sweep-$v.txt" 2>&1; echo "sweep $v rc=$? ${SECONDS}s" >>"$S"
done
gzip -9 $O/*.json $O/test-n8.txt
cat "$S"
tar -C /tmp -czf "$OUT/s26-n8.tgz" n8
