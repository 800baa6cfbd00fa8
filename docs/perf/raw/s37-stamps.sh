#!/usr/bin/env bash
# For the thirty-seventh session (written in the thirty-sixth, not run: no device time left).  11008 x 4096 and
# 12288 x 4096 in k_whole_sw's row groups run 85-92 % of the bound at N 1-64 while 22016 x 4096 (twice the rows a CTA)
# reaches 99-101 %: a fixed ~2.5-3 us a GEMM (prologue, the PDL boundary, the tail) that the larger GEMM amortises.
# The fixed section now stamps the grouped launch too ("grp stamps" lines, mode stamps_grp in the JSON; bench_fixed.c
# after 2ae2d3f).  Build the head into new/, carry build-s37-carry/s37.tar.xz, then this script.
# Prediction: grp stamps at N 1 on 11008 x 4096: first slot full +3.5-4 us after entry (as the split's static stamps,
# raw/s36-call1), streaming ~17-18 us, tail after the last slot ~1.5 us; the PDL pair's next-launch wait returning
# ~1.3-1.5 us after the last exit.  If the first slot lands much later than the split's, the prologue (barrier init,
# the B map's first copy) is what to shorten; if the tail, the epilogue's C store.
# First, what the thirty-sixth session could not GPU-run: 443b798 (whole_swap 3 over the tiles as 0; the engine's full
# copies take no k_whole_sw) through test_gemm_split --whole and test_engine_gpu, and the full copies at r = 0 and 10 %
# (--deploy 0) with the default against --gemm-whole-swap 1: prediction equal within 0.3 % (the same kernels).
. docs/perf/raw/call-lib.sh
call_begin build-s37-carry/s37.tar.xz /tmp/s37
call_test test_gemm_split new --whole
call_test test_engine_gpu new
for sw in 3 1; do
  timeout 120 $W/new/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 --ratios 0,10 --deploy 0 \
    --baseline direct --gemm-whole-swap $sw --json $R/full-sw$sw.json > $R/full-sw$sw.txt 2>&1
  echo "full-sw$sw rc=$? ${SECONDS}s" >> $S
done
F="--sections fixed --ratios 0 --reps 5 --n 1,8,32,64"
for r in 1 2; do
  bench r$r-11008 new $F --shapes 11008x4096
  bench r$r-12288 new $F --shapes 12288x4096
  bench r$r-22016 new $F --shapes 22016x4096
done
call_end s37
