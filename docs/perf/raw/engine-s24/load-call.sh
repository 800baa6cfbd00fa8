#!/usr/bin/env bash
# (run as build-s24-load/run.sh in the carried folder beside the binaries bins.tar.xz: v1 and v2 below)
# session 24, helper-40's one call: the engine's load, old (v1: 8b7a1ac, the load as before with its phases timed)
# against new (v2: 59d5895, host rows packed on the CPU and pinned beside the load; --load-pin register|alloc),
# interleaved, on OPT-6.7B's first 8 layers as a synthetic checkpoint (as session 23's call 4); then test_engine_gpu
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s24-load
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins.tar.xz)
R=$OUT/r; mkdir -p $R
S=$OUT/summary.txt
{ date -u; nproc; free -g | head -2; cat /sys/kernel/mm/transparent_hugepage/enabled
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader; } > $S 2>&1
t0=$(date +%s.%N); timeout 60 $C/v2/dak ckpt synth --model configs/opt-6.7b --layers 8 --out /tmp/ck.safetensors > $R/synth.txt 2>&1
echo "synth rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s, $(du -h /tmp/ck.safetensors | cut -f1)" >> $S
timeout 30 $C/v2/dak ckpt read --weights /tmp/ck.safetensors --threads 8 > $R/read.txt 2>&1; echo "read rc=$?: $(sed -n 3p $R/read.txt)" >> $S
D="decode --model configs/opt-6.7b --layers 8 --batch 8 --prompt 4 --tokens 4 --ratios 0 --baseline direct --load-times 1"
run() { # name binary extra...
  local n=$1 b=$2; shift 2; local t=$(date +%s.%N)
  timeout 60 $C/$b/dak $D "$@" > $R/$n.txt 2>&1; local rc=$?
  echo "$n rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t}") s | $(grep -o 'checkpoint weights (layers): 8/8 ([0-9.]*/s' $R/$n.txt | tail -1) | $(grep '^load' $R/$n.txt | tail -1)" >> $S
}
for k in 1 2; do
  run old-$k v1 --weights /tmp/ck.safetensors
  run new-$k v2 --weights /tmp/ck.safetensors
  run alloc-$k v2 --weights /tmp/ck.safetensors --load-pin alloc
done
run old-synth v1 --weights synthetic
run new-synth v2 --weights synthetic
run old-deploy40 v1 --weights /tmp/ck.safetensors --deploy 1 --ratios 40
run new-deploy40 v2 --weights /tmp/ck.safetensors --deploy 1 --ratios 40
grep -h "generated" $R/old-1.txt $R/new-1.txt $R/alloc-1.txt >> $S
echo "elapsed before the test: $SECONDS s" >> $S
timeout $((282 - SECONDS)) $C/v2/test_engine_gpu > $R/test_engine_gpu.txt 2>&1
echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)" >> $S
grep -m8 -i "fail" $R/test_engine_gpu.txt >> $S; grep "deployed checkpoint\|checkpoint (" $R/test_engine_gpu.txt >> $S
cd $OUT && tar czf r.tgz r && rm -rf r
