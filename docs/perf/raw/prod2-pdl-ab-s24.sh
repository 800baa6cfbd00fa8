#!/usr/bin/env bash
# Twenty-fourth session (lead), for the next device call: two producer threads under PDL (raw/prod2-pdl-2026-12-02-s24.patch)
# against the head, interleaved, two rounds.  Build both here (sm_90a), carry them as $D/head/{dak,test_gemm_split} and
# $D/prod2/{dak,test_gemm_split}; run from the repository root: D=build-sNN-carry bash docs/perf/raw/prod2-pdl-ab-s24.sh
#   test   the patched test_gemm_split in full (test_prod2 with pdl, the chains with two producers on 16 KiB slots)
#   small  7168^2, 64-row tiles, N 24, kstep 1: one producer / two (the fixed section: split, nomath, noB, PDL graph)
#   whole  11008x4096, 86 CTAs of one whole-K 128-row tile, N 24 / 32, kstep 1 (cuBLAS's shape without the B share)
#   n64    7168^2, 64-row whole-K tiles (112 CTAs), N 64, kstep 1 and 2
#   def    the default plans, 7168^2 and 11008x4096 at N 1 / 24 / 64 (the head against the patched binary: no change)
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/prod2-ab}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
for v in head prod2; do [ -d "$D/$v" ] || [ ! -f "$D/$v.tar.xz" ] || { mkdir -p "$D/$v" && tar -C "$D/$v" -xJf "$D/$v.tar.xz"; }; done
t0=$SECONDS; timeout 240 "$D/prod2/test_gemm_split" >"$O/test-prod2.log" 2>&1
echo "test prod2 rc=$? $((SECONDS - t0)) s: $(tail -1 "$O/test-prod2.log")" >>"$S"
run() { local tag=$1 v=$2; shift 2
  timeout 120 "$D/$v/dak" bench gemm --sections fixed --ratios 0 --reps 5 "$@" --json "$O/$tag-$v.json" >"$O/$tag-$v.txt" 2>&1
  echo "$tag $v rc=$? ${SECONDS}s" >>"$S"; }
for r in 1 2; do
  run small1-r$r prod2 --shapes 7168x7168 --n 24 --bm 64 --kstep 1
  run small2-r$r prod2 --shapes 7168x7168 --n 24 --bm 64 --kstep 1 --prod2 1
  run whole1-r$r prod2 --shapes 11008x4096 --n 24,32 --bm 128 --hbm-sms 86 --kstep 1
  run whole2-r$r prod2 --shapes 11008x4096 --n 24,32 --bm 128 --hbm-sms 86 --kstep 1 --prod2 1
  run n64k1-r$r prod2 --shapes 7168x7168 --n 64 --bm 64 --kstep 1 --prod2 1
  run n64k2-r$r prod2 --shapes 7168x7168 --n 64 --bm 64 --kstep 2 --prod2 1
  for v in head prod2; do run def-r$r $v --shapes 7168x7168,11008x4096 --n 1,24,64; done
done
cat "$S"
