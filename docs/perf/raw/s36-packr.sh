#!/usr/bin/env bash
# For the thirty-sixth session (written in the thirty-fifth, compiled here, not run: no device time left).  11008 x 4096
# (Llama-2-7B's ffn_out rows) is issue 7's last r = 0 shape below 95 % (the split: 90.5 % at N 1, 81.6-82.4 % at N 17-32,
# 0.98-0.99x cuBLAS there).  k_whole_sw takes it on 126 CTAs of R = 88 rows, but from the 64-row tile layout a CTA's rows
# come as pieces of boxes (copies of 1-7 KiB: +34 %, thirty-fourth session), and even whole boxes in 8 KiB copies cost
# 14 % (one 16 KiB copy a stage: 4-5 %, thirty-fifth).  raw/s36-packr.patch packs A in groups of R rows (dak_pack_rows;
# dak_tiered.box_rows; the split kernels refuse such an A), so that a stage of kstep blocks of a CTA's R rows is one
# contiguous copy (kstep 1: 11 KiB, 2: 22 KiB); `dak bench gemm`'s fixed section packs its copies of A so with
# DAK_PACK_R=R (its split columns then nan: only the pdl column, k_whole_sw, and cuBLAS's run); test_gemm_split's swap
# group gains two cases with A in R-row groups (PDL x3; bf16 with kstep 1).  Apply it, build into pk/, carry
# build-s36-carry, then this script.
# Prediction: 11008 x 4096 with A in 88-row groups at kstep 2: 22.5-23.5 us at N 1-32 (95-90 % of the bound) against
# the split's 23.4-26.0; at kstep 1 (11 KiB copies) 1-2 us slower than kstep 2; if k_whole_sw's own cost (+4-5 % at R 64
# on 7168^2) holds, 23.5-24.5, still ahead of the split and cuBLAS at N 17-32.  12288 x 4096 (R 96, 128 CTAs) alike
# against its split (26.0-28.5); 4096^2 (R 32, 128 CTAs, kstep 4: 16 KiB) against k_whole's 64 CTAs (10.8-11.4 us):
# ~9-10 us if 128 SMs stream it.
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36p.tar.xz /tmp/packr
call_test test_gemm_split pk --whole
F="--sections fixed --ratios 0 --reps 5 --n 1,8,16,24,32,48,64"
for r in 1 2; do
  bench r$r-11008-def pk $F --shapes 11008x4096
  DAK_PACK_R=88 bench r$r-11008-p88k2 pk $F --shapes 11008x4096 --whole 1 --whole-swap 2 --kstep 2
  DAK_PACK_R=88 bench r$r-11008-p88k1 pk $F --shapes 11008x4096 --whole 1 --whole-swap 2 --kstep 1
  bench r$r-12288-def pk $F --shapes 12288x4096
  DAK_PACK_R=96 bench r$r-12288-p96k2 pk $F --shapes 12288x4096 --whole 1 --whole-swap 2 --kstep 2
  bench r$r-4096-def pk $F --shapes 4096x4096
  DAK_PACK_R=32 bench r$r-4096-p32 pk $F --shapes 4096x4096 --whole 1 --whole-swap 2
done
call_end packr
