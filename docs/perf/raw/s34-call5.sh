#!/usr/bin/env bash
# Thirty-fourth session (lead), call 5: call 4's dak decode Llama-2-7B with k_whole_sw on ffn_in (22016 x 4096) was
# b1 -1.7 %, b32 -0.5 %, but b8 +1.9 % a token (two rounds each), where the GEMM bench had ffn_in -2.4 % at N 8 (and
# the GEMM is the same at N 1 and 8: B's box is 8 rows at both).  Where does b8 lose?  The breakdowns (an event after
# each kind of operation, median of 5) of new/ and head/ at b1 and b8, alternated, and the b8 TPOT twice more.
# Prediction: ffn_in itself faster at both; the loss in the operation after it (act) or two after (ffn_out), as the
# thirty-second session saw after k_whole ("the GEMM two kernels after each k_whole loses 2-3 us").
# carry ["build-s34-carry"]; OUT=... bash docs/perf/raw/s34-call5.sh
. docs/perf/raw/call-lib.sh
call_begin build-s34-carry/s34c4.tar.xz /tmp/c5
for b in 8 1; do
  decode bd-l-b$b-new new llama-2-7b $b --breakdown 5
  decode bd-l-b$b-head head llama-2-7b $b --breakdown 5
done
for r in 3 4; do
  decode r$r-l-b8-new new llama-2-7b 8
  decode r$r-l-b8-head head llama-2-7b 8
done
call_end c5
