#!/usr/bin/env bash
# session 21 (helper-33), the one device call: the unified-memory baseline of `dak decode`.  Run from the repository
# root with the carried binaries (HEAD b01d522 + this session's engine / cmd_decode / tests, Release, sm_90a, stripped).
# Every step bounded by `timeout`; results under $OUT/r (tarred at the end), key lines on stdout.
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-h33
(cd $C && tar xJf bins.tar.xz)
R=$OUT/r; mkdir -p $R
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; } > $R/machine.txt 2>&1
cat $R/machine.txt
row() { sed -n '/^   r %/,$p' $1 | tail -n +3; }
# 1. the GPU test (direct, prefetch, um against the CPU reference; the um refusals)
( time timeout 80 $C/test_engine_gpu ) > $R/test_engine_gpu.log 2>&1; echo "test_engine_gpu rc=$?"
grep -E "passed|FAIL" $R/test_engine_gpu.log | tail -4; grep -E "^(opt|llama).* um " $R/test_engine_gpu.log | tail -3
# 2. OPT-6.7B batch 8, r = 0, 10, 40 %: direct + prefetch, then um (separate runs: a um failure keeps the others)
D="--model configs/opt-6.7b --batch 8 --prompt 8 --tokens 8 --ratios 0,10,40 --breakdown 1"
timeout 50 $C/dak decode $D --baseline both --json $R/opt67-dp.json > $R/opt67-dp.txt 2> $R/opt67-dp.err; echo "opt-6.7b direct+prefetch rc=$?"
grep "^run " $R/opt67-dp.txt; row $R/opt67-dp.txt
timeout 110 $C/dak decode $D --baseline um --json $R/opt67-um.json > $R/opt67-um.txt 2> $R/opt67-um.err; echo "opt-6.7b um rc=$?"
grep -E "^run |^unified" $R/opt67-um.txt; grep -E "^  (evict|qkv|ffn_in|ffn_out) " $R/opt67-um.txt; tail -c 300 $R/opt67-um.err | tr '\r' '\n' | tail -2
# 3. OPT-30B, all 48 layers, r = 0 (a deployment: ~61 GB of HBM)
timeout 65 $C/dak decode --model configs/opt-30b --batch 8 --deploy 1 --ratios 0 --baseline direct --breakdown 3 --json $R/opt30-r0.json > $R/opt30-r0.txt 2> $R/opt30-r0.err; echo "opt-30b r=0 rc=$?"
grep -E "^run |^breakdown" $R/opt30-r0.txt; tail -c 300 $R/opt30-r0.err | tr '\r' '\n' | tail -2
# 4. um at r = 100 %: every weight row moves each step (what LRU would move at any r > 0)
timeout 55 $C/dak decode --model configs/opt-6.7b --batch 8 --prompt 2 --tokens 4 --ratios 100 --baseline um --breakdown 1 --json $R/opt67-um100.json > $R/opt67-um100.txt 2> $R/opt67-um100.err; echo "um r=100 rc=$?"
grep -E "^run |^  evict " $R/opt67-um100.txt; tail -c 300 $R/opt67-um100.err | tr '\r' '\n' | tail -2
# 5. the probe: TMA (split GEMM) and cuBLAS over managed memory pushed back to the CPU
timeout 20 $C/probe_um_tma > $R/probe_um_tma.log 2>&1; echo "probe rc=$?"; cat $R/probe_um_tma.log
cd $OUT && tar czf r.tgz r && rm -rf r
