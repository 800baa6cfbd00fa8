#!/usr/bin/env bash
# Thirty-sixth session, call 2: A packed in k_whole_sw's row groups (dak_pack_groups, dak_gemm_a_group_rows) as built
# for landing.  new/ = the working tree; ex/ = new/ + s36-swapkinds.patch (DAK_SWAP_KINDS, decode only).
# (1) test_gemm_split --whole (the two grouped cases), test_engine_gpu (the V_GROUPS deployments at r = 0).
# (2) dak bench gemm's fixed section, its new grp-pdl column (the pdl graph over A in the groups the GEMM asks for)
#     beside pdl (the default plan over 64-row tiles) and cuBLAS: the shapes where the auto rule asks groups (R > 64:
#     11008 / 12288 / 16384 / 22016 / 32000 x 4096, 21504 / 28672 x 7168) and, with --whole-swap 2, those at R <= 64
#     (4096^2, 7168^2, 4096 x 11008, 7168 x 28672) beside their default runs; two rounds.
# Prediction: 11008 / 12288 as call 1 (-0.7 to -2.6 us at N 1-64); 16384 x 4096 (R 128, 128 CTAs; the split today)
# -1 to -2 us; 22016 / 32000 x 4096 and 21504 / 28672 x 7168 (R 168-248: k_whole_sw on pieces of boxes today, at
# ~100 % of the 8 KiB probe's bound for 22016) within +-1 %; R <= 64: 4096^2 +0.1-0.5 us as call 1, 7168^2 (R 56 on
# 128 CTAs against k_whole's 112) unknown, +-3 %.
# (3) dak decode r = 0 deployed, two rounds: --gemm-whole-swap 1 (default) / 0 (auto: qkv, Llama's ffn_in, lm_head
# grouped) / 2 (every matrix grouped), and 0 with k_whole_sw only in qkv and lm_head (DAK_SWAP_KINDS 516).
# Prediction: Llama-2-7B b8 swap 0 +1 to +2 % (the ffn_out-after-k_whole_sw loss, thirty-fourth session, less qkv's
# ~1.5 us a layer), with kinds 516 -0.8 to -1.5 % against swap 1; OPT-6.7B b8 (qkv 12288, fc1 16384 grouped) -1 to -2 %.
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36b.tar.xz /tmp/c2
call_test test_gemm_split new --whole
F="--sections fixed --ratios 0 --reps 5 --n 1,8,16,24,32,48,64"
for r in 1 2; do
  for sh in 11008x4096 12288x4096 16384x4096 22016x4096 32000x4096 21504x7168 28672x7168; do
    bench r$r-$sh new $F --shapes $sh
  done
  for sh in 4096x4096 7168x7168 4096x11008 7168x28672; do
    bench r$r-$sh new $F --shapes $sh
    bench r$r-$sh-sw2 new $F --shapes $sh --whole-swap 2
  done
done
for r in 1 2; do
  for mb in "llama-2-7b 1" "llama-2-7b 8" "llama-2-7b 32" "opt-6.7b 8" "opt-30b 8"; do
    set -- $mb; mo=$1; b=$2
    for sw in 1 0 2; do decode r$r-$mo-b$b-sw$sw ex $mo $b --gemm-whole-swap $sw; done
    DAK_SWAP_KINDS=516 decode r$r-$mo-b$b-sw0-k516 ex $mo $b --gemm-whole-swap 0
  done
done
call_test test_engine_gpu new
call_end c2
