#!/usr/bin/env bash
# Twenty-seventh session (lead), call 5: (1) does B's traffic from L2 bind at N 9-64?  The streaming floor's new
# column s-Bn streams A as strm-pdl does and, with every 32 KiB of A, N x 512 B of B (the split's slot share at kstep
# 4, at most 16 KiB), every CTA walking B from its start as the split's CTAs do.  (2) wg_narrow auto (wgmma for
# k_split_nn at N > 16): test_gemm_split in full and test_engine_gpu on it; the fixed section's pdl (auto), pdl-wgn (1)
# and pdl-mma (0) columns.  The fixed section (r = 0, 7168^2 and 11008x4096, N 1 / 8 / 16 / 24 / 32 / 64) twice.
# carry ["build-s27-carry"]; OUT=... bash docs/perf/raw/s27-bl2.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s27-carry; W=/tmp/s27; mkdir -p $W && tar -C $W -xJf $D/s27c5.tar.xz
R=/tmp/bl2; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
run() { local tag=$1
  timeout 150 $W/w/dak bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096 \
    --n 1,8,16,24,32,64 --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s" >> $S; }
run r1
timeout 200 $W/w/test_gemm_split > $R/test-full.txt 2>&1
echo "test_gemm_split (full) rc=$? ${SECONDS}s: $(tail -1 $R/test-full.txt)" >> $S
run r2
timeout 200 $W/w/test_engine_gpu > $R/test-engine.txt 2>&1
echo "test_engine_gpu rc=$? ${SECONDS}s: $(grep -E 'passed, .* failed' $R/test-engine.txt | tail -1)" >> $S
gzip -9 $R/*.json $R/test-*.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s27-bl2.tgz" bl2
