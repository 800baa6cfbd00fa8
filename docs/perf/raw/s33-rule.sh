#!/usr/bin/env bash
# Thirty-third session (lead), call 3.  Call 2 found clusters of 4 (B multicast) fast where k_whole reads B long:
# 7168x28672 N 16 / 32 / 64 92.5 / 93.1 / 95.0 us against 95.5 / 98.2 / 104.8 without and 96.0-99.5 for the split (the
# auto plan at N > 8); 7168^2 -0.5 / -0.9 / -2.4 % at N 48 / 56 / 64, +3.3 to -0.2 % at N 16-40; clusters of 2 slower
# than both.  The rule built (rule/): auto cluster 4 where K > 8192 (every N, and k_whole there at every N <= 64,
# the K rule gone) or N >= 48; else 1.  (a) The GPU suites on rule/.  (b) The GEMM bench, PDL graphs: 7168x28672 at
# N 1..64 (12 points), the rule against the split (--whole 0) and k_whole without multicast (--whole 1 --whole-cl
# 1); 7168^2 N 33..64 every N with clusters of 4 against 1 (the threshold).  (c) dak decode OPT-30B b1 / b8 / b32 /
# b64, rule/ against new/ (call 2's build: the head + the arrive fix), two rounds, breakdowns at b8 / b64 in round 1.
# Prediction: 7168x28672 N 1-8 ~92.5 (-2.5 %), N 9-64 -3.5 to -4.5 % against the split; decode b1 / b8 -0.7 % (ffn_out
# -2.4 us of 48 layers' ~14.6 ms), b32 / b64 -1.2 % (ffn_out -4.5 us, o_proj at b64 -0.65 us).
# carry ["build-s33-carry"]; OUT=... bash docs/perf/raw/s33-rule.sh
. docs/perf/raw/call-lib.sh
call_begin build-s33-carry/s33c3.tar.xz /tmp/rule
tar -C $W -xJf build-s33-carry/s33c2.tar.xz  # new/: the head + the arrive fix (call 2)
call_test test_gemm_split rule
call_test test_engine_gpu rule
grep -q ', 0 failed' $R/test_gemm_split.txt && grep -q ', 0 failed' $R/test_engine_gpu.txt || { call_end s33-rule; exit 0; }
for r in 1 2; do
  for m in "rule" "split --whole 0" "cl1 --whole 1 --whole-cl 1"; do
    set -- $m
    t=$1; shift
    bench k4-$r-$t rule --sections fixed --ratios 0 --reps 5 --shapes 7168x28672 --n 1,2,4,8,12,16,24,32,40,48,56,64 "$@"
  done
  for cl in 4 1; do
    for q in 33 49; do
      bench sq-$r-cl$cl-$q rule --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, $q $((q + 15))) \
        --whole 1 --whole-cl $cl
    done
  done
done
for r in 1 2; do
  for b in 1 8 32 64; do
    bk=""; [ $r = 1 ] && { [ $b = 8 ] || [ $b = 64 ]; } && bk="--breakdown 3"
    decode r$r-b$b-rule rule opt-30b $b $bk
    decode r$r-b$b-new new opt-30b $b $bk
  done
done
call_end s33-rule
