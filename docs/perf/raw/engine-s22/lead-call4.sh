#!/usr/bin/env bash
# session 22, call 4 (lead): the block sum by shuffles (v4) against the held norm as landed (v3), interleaved; o_proj's
# GEMM reading nothing before its wait (--gemm-pre-none o_proj); the merged tree's GPU tests; text prompts end to end
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s22-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins3.tar.xz && tar xJf bins4.tar.xz)
R=$OUT/r; mkdir -p $R
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 v=$2 model=$3 batch=$4; shift 4
  timeout 80 $C/$v/dak decode --model configs/$model --batch $batch --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
ab() { local round=$1
  run opt8-v3-$round v3 opt-6.7b 8
  run opt8-v4-$round v4 opt-6.7b 8
  run opt8-v4o-$round v4 opt-6.7b 8 --gemm-pre-none o_proj
  run llama8-v3-$round v3 llama-2-7b 8
  run llama8-v4-$round v4 llama-2-7b 8
  run llama8-v4o-$round v4 llama-2-7b 8 --gemm-pre-none o_proj
  run opt64-v3-$round v3 opt-6.7b 64
  run opt64-v4-$round v4 opt-6.7b 64; }
ab 1
timeout 200 $C/v4/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)"
grep -m5 FAIL $R/test_engine_gpu.txt
timeout 100 $C/v4/test_stream_gpu > $R/test_stream_gpu.txt 2>&1; echo "test_stream_gpu rc=$?: $(tail -1 $R/test_stream_gpu.txt)"
timeout 100 $C/v4/test_stream_net_gpu > $R/test_stream_net_gpu.txt 2>&1; echo "test_stream_net_gpu rc=$?: $(tail -1 $R/test_stream_net_gpu.txt)"
run opt8-v3-2 v3 opt-6.7b 8
run opt8-v4-2 v4 opt-6.7b 8
run llama8-v3-2 v3 llama-2-7b 8
run llama8-v4-2 v4 llama-2-7b 8
for m in llama-2-7b:llama2 opt-6.7b:gpt2; do
  timeout 60 $C/v4/dak decode --model configs/${m%%:*} --layers 2 --batch 2 --tokens 8 --ratios 0,30 --baseline direct \
    --tokenizer $C/v4/tok/${m##*:}.json --prompt-text "The capital of France is" --json $R/text-${m##*:}.json \
    > $R/text-${m##*:}.txt 2>&1; echo "text ${m%%:*} rc=$?: $(grep -m2 -i 'text\|error' $R/text-${m##*:}.txt | tr '\n' ' ')"
done
cd $OUT && tar czf r.tgz r && rm -rf r
