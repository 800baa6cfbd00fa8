#!/usr/bin/env bash
# Twenty-fifth session (lead): flags only, on 5e64e51's binary (two producers under PDL).  Does the wgmma consumer on
# cuBLAS's shape of work (whole-K 128-row tiles on 86 CTAs, 16 KiB slots, two producers) reach cuBLAS at N 40 / 64 on
# 11008x4096, and 64-row whole-K tiles at 7168^2 N 40 / 64?  Two interleaved rounds; PDL graphs in the fixed section.
# D=build-s25-carry OUT=... bash docs/perf/raw/prod2-wgmma-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/prod2-wg}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
[ -d "$D/prod2" ] || { mkdir -p "$D/prod2" && tar -C "$D/prod2" -xJf "$D/prod2.tar.xz"; }
run() { local tag=$1; shift
  timeout 120 "$D/prod2/dak" bench gemm --sections fixed --ratios 0 --reps 5 "$@" --json "$O/$tag.json" >"$O/$tag.txt" 2>&1
  echo "$tag rc=$? ${SECONDS}s" >>"$S"; }
for r in 1 2; do
  run w-def-r$r --shapes 11008x4096 --n 24,32,40,64
  run w-k1p2-r$r --shapes 11008x4096 --n 40,64 --bm 128 --hbm-sms 86 --kstep 1 --prod2 1
  run w-k2p2-r$r --shapes 11008x4096 --n 40,64 --bm 128 --hbm-sms 86 --kstep 2 --prod2 1
  run s-def-r$r --shapes 7168x7168 --n 40,64
  run s-k2p2-r$r --shapes 7168x7168 --n 40,64 --bm 64 --kstep 2 --prod2 1
  run s-k2p2pre2-r$r --shapes 7168x7168 --n 40,64 --bm 64 --kstep 2 --prod2 1 --pdl-pre 2
done
cat "$S"
