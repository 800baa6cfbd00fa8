#!/usr/bin/env bash
# Twenty-fifth session (lead): where the split kernel's 1.6 us from entry to its first copy go, by clock64 deltas
# printed from CTAs 0, 37, 74, 111 of the fixed section's stamped launches (raw/prologue-clk-2026-12-02-s25.patch; a
# throwaway build).  D=build-s25-carry OUT=... bash docs/perf/raw/prologue-clk-s25.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=${D:?carry folder}; O=${OUT:-/tmp/clk}; mkdir -p "$O"
[ -d "$D/clk" ] || { mkdir -p "$D/clk" && tar -C "$D/clk" -xJf "$D/clk.tar.xz"; }
timeout 120 "$D/clk/dak" bench gemm --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 1,24 \
  --json "$O/clk.json" >"$O/clk.txt" 2>&1
echo "rc=$?"
grep -c CLK "$O/clk.txt"
