#!/usr/bin/env bash
# Twenty-fifth session (lead): the streaming floor (dak_diag_stream: A's bytes and nothing else, all SMs, 32 KiB
# copies, without / with PDL) beside the split GEMM and cuBLAS in the fixed section, r = 0, two rounds.
# D=build-s25-carry OUT=... bash docs/perf/raw/floor-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/floor}; mkdir -p "$O"; S=$O/summary.txt; : >"$S"
[ -d "$D/floor" ] || { mkdir -p "$D/floor" && tar -C "$D/floor" -xJf "$D/floor.tar.xz"; }
for r in 1 2; do
  timeout 200 "$D/floor/dak" bench gemm --sections fixed --ratios 0 --reps 7 --shapes 7168x7168,11008x4096,28672x7168 \
    --n 1,24,64 --json "$O/floor3-r$r.json" >"$O/floor3-r$r.txt" 2>&1
  echo "floor r$r rc=$? ${SECONDS}s" >>"$S"
done
cat "$S"
