#!/usr/bin/env bash
# Twenty-sixth session (lead), first call: the early-segment A/B and clk run prepared in session 25
# (raw/early-seg-ab-s25.sh), then test_engine_gpu at ef0403f (owed since d096b4e's round_up mend).
# carry ["build-s25-carry","build-s26-carry"]; OUT=... bash docs/perf/raw/s26-call1.sh
set -u
export CUDA_MODULE_LOADING=EAGER
O=${OUT:-/tmp/s26}; mkdir -p "$O/early" "$O/engine"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$O/gpu.txt" 2>&1
OUT=$O/early D=build-s25-carry bash docs/perf/raw/early-seg-ab-s25.sh
mkdir -p build-s26-carry/head && tar -C build-s26-carry/head -xJf build-s26-carry/engine.tar.xz
timeout 200 build-s26-carry/head/test_engine_gpu > "$O/engine/test_engine_gpu.txt" 2>&1
echo "test_engine_gpu (ef0403f) rc=$?: $(tail -1 "$O/engine/test_engine_gpu.txt")" | tee -a "$O/early/summary.txt"
tar -C "$O" -czf /tmp/s26-call1.tgz . && rm -rf "$O"/* && mv /tmp/s26-call1.tgz "$O/"
