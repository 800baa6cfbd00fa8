#!/usr/bin/env bash
# Thirty-fifth session, call 10: the final build (43d35b8) through the whole GPU suites: test_gemm_split (every group,
# full; the auto clusters of 4 from N 25 reach every group that plans 7168^2 by default) and test_engine_gpu.
. docs/perf/raw/call-lib.sh
call_begin build-s35-carry/s35h.tar.xz /tmp/c10
call_test test_gemm_split new
call_test test_engine_gpu new
call_end c10
