#!/usr/bin/env bash
# Twenty-ninth session (lead), call 8: a 24-row B box at N 17-24 (opts.bn24).  Call 7 (s29-box.sh): 7168^2 N = 16 on 4
# slots 26.12 us as a PDL graph against N = 24's 26.85 on as many: B's 16 KiB a slot (not the depth, not the third
# n8 tile: N 24 and 32 run alike) is the 0.75 us.  Prediction: 12 KiB a slot gives back ~0.35 us at N 17-24 on
# 7168^2 (26.85 -> ~26.5), ~0.4 % on 28672x7168, ~0.1-0.2 on 11008x4096; N = 32 unchanged against the head's binary
# (the offsets setup's clamp only).  test_gemm_split in full, then the new binary with bn24 1 / 0 and the head's
# (1c4b4db), interleaved, two rounds.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-bn24.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c8.tar.xz
R=/tmp/bn24; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
t0=$SECONDS; timeout 200 $W/new/test_gemm_split > $R/test_gemm_split.txt 2>&1
echo "test_gemm_split rc=$? $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $R/test_gemm_split.txt | tail -1)" >> $S
grep -m5 -i 'fail' $R/test_gemm_split.txt | grep -v ' 0 failed' >> $S
run() { local tag=$1 bin=$2; shift 2
  timeout 100 $W/$bin/dak bench gemm --sections fixed --ratios 0 --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $bin $*" >> $S; }
for r in 1 2; do
  run r$r-new-a new --shapes 7168x7168 --n 17,20,24,32
  run r$r-b32-a new --shapes 7168x7168 --n 17,20,24,32 --bn24 0
  run r$r-head-a head --shapes 7168x7168 --n 17,20,24,32
  run r$r-new-b new --shapes 11008x4096,28672x7168 --n 20,24
  run r$r-b32-b new --shapes 11008x4096,28672x7168 --n 20,24 --bn24 0
done
gzip -9 $R/*.json $R/test_gemm_split.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-bn24.tgz" bn24
