#!/usr/bin/env bash
# session 20, call 4 (final): the tree to land: split attention (teams, inline combine, reserve), the engine with
# attn_plans + dak_attn_ctx_reserve and engine_kernels.cu; GPU tests and one decode figure
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s20-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins4.tar.xz)
R=$OUT/r; mkdir -p $R
timeout 100 $C/v4/test_attn_gpu > $R/test_attn_gpu.log 2>&1; echo "attn rc=$?"; grep -E "passed|failed" $R/test_attn_gpu.log | tail -2
timeout 80 $C/v4/test_engine_gpu > $R/test_engine_gpu.log 2>&1; echo "engine rc=$?"; grep -E "passed|failed" $R/test_engine_gpu.log | tail -2
for P in 1 2; do
  timeout 40 $C/v4/dak decode --model configs/opt-6.7b --batch 8 --ratios 0 --baseline direct --pdl $P --breakdown 3 --json $R/opt-pdl$P.json > $R/opt-pdl$P.txt 2>/dev/null
  echo "pdl $P rc=$?: $(grep -A3 '^   r %' $R/opt-pdl$P.txt | tail -1)"; grep -E "^  attention" $R/opt-pdl$P.txt | head -1
done
cd $OUT && tar czf r.tgz r && rm -rf r
