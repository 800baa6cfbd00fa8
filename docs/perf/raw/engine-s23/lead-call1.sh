#!/usr/bin/env bash
# session 23, call 1 (lead): the owed A/B of the twenty-second session (block sums by shuffles, v5, against the held
# norm as landed, v3 = 8fc3d0c; --gemm-pre-none o_proj), the attention's span stamped (qkv_post and attention stamps,
# v5), test_engine_gpu with the new stamps, and --prompt-text end to end
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s23-carry
cd "$(dirname "$0")/../../../.." && (cd $C && tar xJf bins1.tar.xz)
R=$OUT/r; mkdir -p $R
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
run() { local tag=$1 v=$2 model=$3 batch=$4; shift 4
  timeout 80 $C/$v/dak decode --model configs/$model --batch $batch --prompt 8 --tokens 24 --ratios 0 --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$?: TPOT $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
ab() { local round=$1
  run opt8-v3-$round v3 opt-6.7b 8
  run opt8-v5-$round v5 opt-6.7b 8
  run opt8-v5o-$round v5 opt-6.7b 8 --gemm-pre-none o_proj
  run llama8-v3-$round v3 llama-2-7b 8
  run llama8-v5-$round v5 llama-2-7b 8
  run llama8-v5o-$round v5 llama-2-7b 8 --gemm-pre-none o_proj
  run opt64-v3-$round v3 opt-6.7b 64
  run opt64-v5-$round v5 opt-6.7b 64; }
ab 1
timeout 200 $C/v5/test_engine_gpu > $R/test_engine_gpu.txt 2>&1; echo "test_engine_gpu rc=$?: $(tail -1 $R/test_engine_gpu.txt)"
grep -m5 FAIL $R/test_engine_gpu.txt
ab 2
for m in opt-6.7b llama-2-7b; do for pre in "" o_proj; do
  tag=times-$m${pre:+-pre}
  timeout 80 $C/v5/dak decode --model configs/$m --batch 8 --prompt 8 --tokens 24 --ratios 0 --baseline direct \
    ${pre:+--gemm-pre-none $pre} --diag-times $R/$tag.stamps.json > $R/$tag.txt 2>&1
  echo "$tag rc=$?"; grep -A12 "timeline" $R/$tag.txt
done; done
for m in llama-2-7b:llama2 opt-6.7b:gpt2; do
  timeout 60 $C/v5/dak decode --model configs/${m%%:*} --layers 2 --batch 2 --tokens 8 --ratios 0,30 --baseline direct \
    --tokenizer $C/v5/tok/${m##*:}.json --prompt-text "The capital of France is" --json $R/text-${m##*:}.json \
    > $R/text-${m##*:}.txt 2>&1; echo "text ${m%%:*} rc=$?: $(grep -m3 -i 'text\|error' $R/text-${m##*:}.txt | tr '\n' ' ')"
done
cd $OUT && tar czf r.tgz r && rm -rf r
