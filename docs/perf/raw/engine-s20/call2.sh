#!/usr/bin/env bash
# session 20, call 2: stacked q/k/v + gate/up and the register-row norm (new) against HEAD + breakdown (old)
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s20-carry
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/nvsmi.txt 2>&1
( time $C/new/test_engine_gpu ) > $R/test_engine_gpu.log 2>&1; echo "test rc=$?" | tee -a $R/test_engine_gpu.log
grep -E "passed|failed|FAIL" $R/test_engine_gpu.log | tail -5
for round in 1 2; do
  for v in old new; do
    B=$C/dak-old; [ $v = new ] && B=$C/new/dak
    $B decode --model configs/opt-6.7b --batch 8 --ratios 0 --baseline direct --breakdown 5 --json $R/opt-b8-$v-$round.json > $R/opt-b8-$v-$round.txt 2>/dev/null
    $B decode --model configs/llama-2-7b --batch 8 --ratios 0 --baseline direct --breakdown 5 --json $R/llama-b8-$v-$round.json > $R/llama-b8-$v-$round.txt 2>/dev/null
    echo "round $round $v: $(grep -A3 '^   r %' $R/opt-b8-$v-$round.txt | tail -1) | $(grep -A3 '^   r %' $R/llama-b8-$v-$round.txt | tail -1)"
  done
done
$C/new/dak decode --model configs/opt-6.7b --batch 8 --ratios 0,10,40 --breakdown 5 --json $R/opt-b8-new-ratios.json > $R/opt-b8-new-ratios.txt 2>/dev/null
$C/new/dak decode --model configs/opt-6.7b --batch 64 --ratios 0 --baseline direct --breakdown 5 --json $R/opt-b64-new.json > $R/opt-b64-new.txt 2>/dev/null
$C/dak-old decode --model configs/opt-6.7b --batch 64 --ratios 0 --baseline direct --breakdown 5 --json $R/opt-b64-old.json > $R/opt-b64-old.txt 2>/dev/null
tail -4 $R/opt-b8-new-ratios.txt
cd $OUT && tar czf r.tgz r && rm -rf r
