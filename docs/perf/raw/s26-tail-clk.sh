#!/usr/bin/env bash
# Twenty-sixth session (lead): where the consumers' tail goes, per warp, by clock64 (a throwaway build of af5fc34 +
# raw/tail-clk-2026-12-02-s26.patch: every consumer warp's clocks on its last tile: first and last slot's wait passed,
# loop end, the last slot's math complete, K-half hand-over done, the end; CTAs 0, 37, 74, 111 of the fixed section's
# stamped single launches; the clocks in a __device__ array, since 384 B more of static shared memory put the kernel
# over the opt-in limit (first try: cudaFuncSetAttribute invalid argument)).
# Also test_stream_net_gpu and test_stream_gpu at 9a6d97e.
# carry ["build-s26-carry"]; OUT=... bash docs/perf/raw/s26-tail-clk.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s26-carry; O=/tmp/tail; mkdir -p "$O"
tar -C $D -xJf $D/s26c3.tar.xz
timeout 150 $D/t/dak bench gemm --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n 1,8,24,64 \
  --json "$O/tail.json" >"$O/tail.txt" 2>&1
echo "tail rc=$? $(grep -c CLKT "$O/tail.txt") lines ${SECONDS}s" | tee "$O/summary.txt"
# and the GPU stream tests on 9a6d97e (helper-44's PASS_END backoff merged at f074b8a)
for t in test_stream_net_gpu test_stream_gpu; do
  timeout 150 $D/g/$t > "$O/$t.txt" 2>&1; echo "$t rc=$?: $(tail -1 "$O/$t.txt") ${SECONDS}s" | tee -a "$O/summary.txt"
done
gzip -9 "$O/tail.json" "$O/tail.txt"
tar -C /tmp -czf "$OUT/s26-tail.tgz" tail
