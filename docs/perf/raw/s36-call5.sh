#!/usr/bin/env bash
# Thirty-sixth session, call 5: call 4's two test failures mended (test_gemm_split: the stash and m256 loops had been
# widened to 12 variants with the whole-swap loop by mistake; test_engine_gpu: the grouped count's expectation under
# dak_eng_opts_default's gemm_whole_swap 3): both suites in full again.
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36e.tar.xz /tmp/c5
call_test test_gemm_split new
call_test test_engine_gpu new
call_end c5
