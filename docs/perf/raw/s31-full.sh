#!/usr/bin/env bash
# Thirty-first session (lead), call 4: the GPU suites in full on f4a1bc0's build (k_whole beside the split kernels;
# slot_release moved to gemm_tile.cuh, the wgmma dispatcher grown to n8-n32): the split kernels' results must be
# unchanged (test_gemm_split 10790 checks before this session, now with test_whole's), the engine's too.
# carry ["build-s31-carry"]; OUT=... bash docs/perf/raw/s31-full.sh
. docs/perf/raw/call-lib.sh
call_begin build-s31-carry/s31c4.tar.xz /tmp/full
call_test test_gemm_split new
call_test test_engine_gpu new
call_end s31-full
