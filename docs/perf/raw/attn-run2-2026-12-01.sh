#!/bin/bash
# run 2 of the split attention on the H200: test, r = 0 comparison (groups 1 / 2 / no math), bench, sweep, OPT-30B
export CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:$LD_LIBRARY_PATH
mkdir -p /tmp/b && tar -xzf build-attn-carry/bin.tar.gz -C /tmp/b || exit 1
D=/tmp/b/dak
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
date -u
timeout 150 /tmp/b/test_attn_gpu > $OUT/attn-test.log 2>&1; echo TEST_RC=$?
grep -c "failed:" $OUT/attn-test.log; grep "failed:" $OUT/attn-test.log | head -8; tail -2 $OUT/attn-test.log
for g in 1 2; do
  echo "## r=0 groups $g" >> $OUT/attn-r0.txt
  timeout 60 $D bench attn --batch 8,64,512 --len 32,128,1024 --ratios 0 --reps 10 --groups $g --json /tmp/r0g$g.json >> $OUT/attn-r0.txt 2>/tmp/e; echo R0_G${g}_RC=$?; tail -c 200 /tmp/e
done
echo "## r=0 diag-nomath (groups 2)" >> $OUT/attn-r0.txt
timeout 60 $D bench attn --batch 8,64,512 --len 32,128,1024 --ratios 0 --reps 10 --diag-nomath --json /tmp/r0n.json >> $OUT/attn-r0.txt 2>/tmp/e; echo R0N_RC=$?; tail -c 200 /tmp/e
cat $OUT/attn-r0.txt | grep -v "^#\|^$" | grep -v "batch"
timeout 150 $D bench attn --batch 8,64,512 --len 32,128,1024 --ratios 0,1,2,5,10,20,50,100 --reps 10 --json $OUT/attn-bench.json > $OUT/attn-bench.txt 2>/tmp/e; echo BENCH_RC=$?; tail -c 200 /tmp/e
cat $OUT/attn-bench.txt
timeout 60 $D bench attn --batch 64 --len 1024 --ratios 20 --reps 5 --sweep-congestion --json $OUT/attn-sweep.json > $OUT/attn-sweep.txt 2>/tmp/e; echo SWEEP_RC=$?; tail -c 200 /tmp/e
cat $OUT/attn-sweep.txt | tail -10
timeout 60 $D bench attn --model opt-30b --batch 8,64 --len 1024 --ratios 0,5,20,100 --reps 10 --json $OUT/attn-opt30b.json > $OUT/attn-opt30b.txt 2>/tmp/e; echo OPT30B_RC=$?; tail -c 200 /tmp/e
cat $OUT/attn-opt30b.txt | tail -10
date -u
