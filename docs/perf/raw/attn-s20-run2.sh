#!/bin/bash
# Session 20, run 2: the final code (auto teams and combine recalibrated from run 1's forced-teams rows):
# test_attn_gpu, r = 0 old then new (run 1 interleaved them twice: spread < 1 %), host ratios 0 / 5 / 20 % old vs new interleaved (twice),
# new with --pdl.  old = HEAD 5a99e2a (session 19's kernel); both built here (nvcc 13.0, sm_90a) and carried.
export CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:$LD_LIBRARY_PATH
mkdir -p /tmp/b /tmp/j && tar -xJf build-s20-attn/bin.tar.xz -C /tmp/b || exit 1
O=/tmp/b/old/dak N=/tmp/b/new/dak
left() { [ $SECONDS -lt $1 ]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv | tee $OUT/attn-s20-r0.txt
date -u
timeout 90 /tmp/b/new/test_attn_gpu > $OUT/attn-s20-test.log 2>&1; echo TEST_RC=$? SECONDS=$SECONDS
grep -c "failed:" $OUT/attn-s20-test.log; grep "failed:" $OUT/attn-s20-test.log | head -5; tail -4 $OUT/attn-s20-test.log
G="--batch 8,64,512 --len 32,128,256,1024 --ratios 0 --reps 10"
for rep in 1; do for v in old new; do
  B=$O; [ $v = new ] && B=$N
  left 200 || break
  echo "## r=0 $v rep $rep" >> $OUT/attn-s20-r0.txt
  timeout 40 $B bench attn $G --json /tmp/j/r0-$v-$rep.json >> $OUT/attn-s20-r0.txt 2>/tmp/e; echo R0_${v}_$rep RC=$? SECONDS=$SECONDS
done; done
for rep in 1 2; do for v in old new; do
  B=$O; [ $v = new ] && B=$N
  left 230 || break
  echo "## host ratios $v rep $rep" >> $OUT/attn-s20-host.txt
  timeout 20 $B bench attn --batch 64 --len 128 --ratios 0,5,20 --reps 10 --json /tmp/j/host-$v-$rep.json >> $OUT/attn-s20-host.txt 2>/tmp/e; echo HOST_${v}_$rep RC=$? SECONDS=$SECONDS
done; done
if left 250; then
  echo "## new --pdl" >> $OUT/attn-s20-var.txt
  timeout 30 $N bench attn $G --pdl --json /tmp/j/pdl.json >> $OUT/attn-s20-var.txt 2>/tmp/e; echo PDL RC=$? SECONDS=$SECONDS
fi
tar -czf $OUT/attn-s20-json.tar.gz -C /tmp/j .
grep -E "^##|^ +[0-9]+ +[0-9]+ +0.00" $OUT/attn-s20-r0.txt $OUT/attn-s20-var.txt | awk '/##/{print; next} {print $1,$2,$6,$7,$9,$NF}'
grep -E "^##|B_h|^ +64 +128" $OUT/attn-s20-host.txt | awk '/##|B_h/{print; next} {print $3,$6,$7,$8,$9,$NF}'
date -u
