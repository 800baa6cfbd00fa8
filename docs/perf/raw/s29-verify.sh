#!/usr/bin/env bash
# Twenty-ninth session (lead), call 4: the auto HBM window of 2 on k_split_nn's 64-row tiles (N 9-32, PDL or not).
# The GPU tests of the tree (test_gemm_split in full, test_engine_gpu), then the same binary's auto plan against
# --hbm-window 24 (the ring: the head's plan), interleaved, two rounds: 7168^2 N 12-32, 11008x4096 and 4096x11008 at
# N 24-32, host rows (r = 10 / 50 %) at N 16 / 32, 28672x7168 N 16; then dak decode OPT-6.7B at batch 16 and 32.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-verify.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c4.tar.xz
R=/tmp/verify; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $R/$n.txt 2>&1; local rc=$?
  echo "$n rc=$rc $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $R/$n.txt | tail -1)" >> $S; }
t test_gemm_split 200 $W/b/test_gemm_split
t test_engine_gpu 200 $W/b/test_engine_gpu
grep -h -m8 -i 'fail' $R/test_*.txt | grep -v ' 0 failed' >> $S
run() { local tag=$1; shift
  timeout 100 $W/b/dak bench gemm --sections fixed --reps 7 "$@" --json $R/$tag.json > $R/$tag.txt 2>&1
  echo "$tag rc=$? ${SECONDS}s: $*" >> $S; }
for r in 1 2; do
  for w in 0 24; do
    run r$r-w$w-a --ratios 0 --shapes 7168x7168 --n 12,16,24,32 --hbm-window $w
    run r$r-w$w-b --ratios 0 --shapes 11008x4096,4096x11008 --n 24,32 --hbm-window $w
    run r$r-w$w-c --ratios 10,50 --shapes 7168x7168 --n 16,32 --hbm-window $w
    run r$r-w$w-d --ratios 0 --shapes 28672x7168 --n 16 --hbm-window $w
  done
done
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
for r in 1 2; do for b in 16 32; do for w in 0 24; do
  tag=dec-r$r-b$b-w$w
  timeout 80 $W/b/dak decode --model configs/opt-6.7b --batch $b --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    --gemm-hbm-window $w --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S
done; done; done
gzip -9 $R/*.json 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-verify.tgz" verify
