#!/usr/bin/env bash
# Thirtieth session (lead), call 1 (the first start was refused, so the N sweep and the change run together).
# (a) The decode GEMM at every batch width N = 1..64 (an engine serving 17 or 40 requests runs those), the head's
#     binary (d648a38), the fixed section's PDL graph against cuBLAS's graph.  Prediction: steps where the plan
#     changes (8 -> 9 k_split_n8 -> k_split_nn, 16 -> 17, 24 -> 25 the box, 32 -> 33 128-row wgmma tiles whose
#     64-row B box makes every N 33-64 cost N = 64's ~28.3 us on 7168^2), flat in between.
# (b) opts.bnw: at N 33..56 the B box N rounded up to 8 rows and wgmma m64n40/48/56 (10-14 KiB of B a 128-row slot,
#     not 16; a fifth slot at N 33-48).  Prediction (the twenty-ninth session's 0.75 us per 8 KiB a slot at N 17-32,
#     plus a slot): 7168^2 N 33-40 -0.5 to -1.0 us as PDL graphs (28.3 -> 27.3-27.8, cuBLAS ~27.5), N 41-48 -0.4 to
#     -0.8, N 49-56 -0.1 to -0.3, N 57-64 unchanged (the same code but a uniform branch a slot); the same in
#     proportion on 11008x4096 and 28672x7168.  test_gemm_split in full first (small shapes now at N 33/52/57 too).
# carry ["build-s30-carry"]; OUT=... bash docs/perf/raw/s30-bnw.sh
. docs/perf/raw/call-lib.sh
call_begin build-s30-carry/s30c2.tar.xz /tmp/bnw
call_test test_gemm_split new
NB=33,36,40,44,48,52,56,57,64
for r in 1 2; do
  bench r$r-new-a new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n $NB
  bench r$r-w0-a new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n $NB --bnw 0
  bench r$r-head-a head --sections fixed --ratios 0 --reps 5 --shapes 7168x7168,11008x4096 --n $NB
  bench r$r-new-b new --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n 40,48,64
  bench r$r-w0-b new --sections fixed --ratios 0 --reps 5 --shapes 28672x7168 --n 40,48,64 --bnw 0
done
bench sw-a1 head --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, 1 32)
bench sw-b1 head --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n $(seq -s, 1 32)
bench sw-a2 new --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n $(seq -s, 33 64)
bench sw-b2 new --sections fixed --ratios 0 --reps 5 --shapes 11008x4096 --n $(seq -s, 33 64)
call_test test_engine_gpu new
call_end s30-bnw
