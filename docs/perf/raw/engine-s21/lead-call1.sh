#!/usr/bin/env bash
# session 21, call 1 (lead): dc19729's tree: the engine from checkpoints (put_bf16 / put_f32, prompt ids), the
# stacking in one place, dak_tiered_view_rows, cm_attr_pdl; then a full-size checkpoint end to end
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s21-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins1.tar.xz)
R=$OUT/r; mkdir -p $R
B=$C/v1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,pcie.link.gen.current --format=csv > $R/nvsmi.txt 2>&1
( time timeout 150 $B/test_engine_gpu ) > $R/test_engine_gpu.log 2>&1; echo "engine rc=$?: $(grep -E 'passed' $R/test_engine_gpu.log | tail -1)"
grep -E "checkpoint|prompt ids" $R/test_engine_gpu.log | head -8
( time timeout 120 $B/test_attn_gpu ) > $R/test_attn_gpu.log 2>&1; echo "attn rc=$?: $(grep -E 'passed' $R/test_attn_gpu.log | tail -1)"
( time timeout 200 $B/test_gemm_split --quick ) > $R/test_gemm_split.log 2>&1; echo "gemm quick rc=$?: $(grep -E 'passed' $R/test_gemm_split.log | tail -1)"
grep -E "view over" $R/test_gemm_split.log
# a full-size model's checkpoint, end to end: OPT-6.7B's first 8 layers (3.6 GB BF16) and Llama-2-7B's first 4
df -h /tmp | tail -1
for M in opt-6.7b:8 llama-2-7b:4; do
  mdl=${M%%:*} L=${M##*:} F=/tmp/$mdl-$L.safetensors
  ( time timeout 120 $B/dak ckpt synth --model configs/$mdl --layers $L --out $F ) > $R/synth-$mdl.txt 2>&1; echo "synth $mdl rc=$?: $(ls -la $F | awk '{print $5}') bytes"
  timeout 60 $B/dak ckpt check --model configs/$mdl --layers $L --weights $F > $R/check-$mdl.txt 2>&1; echo "check $mdl rc=$?: $(tail -1 $R/check-$mdl.txt)"
  for W in $F synthetic; do
    tag=$([ $W = synthetic ] && echo syn || echo ckpt)
    ( time timeout 120 $B/dak decode --model configs/$mdl --layers $L --weights $W --prompt-ids 2,100,200,300,400 --tokens 12 --ratios 0,10 --baseline direct --json $R/dec-$mdl-$tag.json ) > $R/dec-$mdl-$tag.txt 2> $R/dec-$mdl-$tag.err
    echo "decode $mdl $tag rc=$?: $(grep 'sequence 0: generated' $R/dec-$mdl-$tag.txt)"; grep -A3 '^   r %' $R/dec-$mdl-$tag.txt | tail -2; grep real $R/dec-$mdl-$tag.err
  done
  cmp <(grep 'sequence 0' $R/dec-$mdl-ckpt.txt) <(grep 'sequence 0' $R/dec-$mdl-syn.txt) && echo "$mdl: checkpoint and synthetic tokens identical"
  rm -f $F
done
cd $OUT && tar czf r.tgz r && rm -rf r
