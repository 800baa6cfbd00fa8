#!/bin/bash
# dak decode and dak ckpt: bad flags and inputs are refused with a message naming the flag and status 2 (CPU; no
# GPU needed: every decode case fails before the engine starts); dak ckpt writes a synthetic checkpoint, checks it
# against its model and refuses it for another.  Usage: test_decode_cli.sh DAK_BIN CONFIG_DIR
dak=$1 cfg=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../cli_expect.sh"
expect 2 "exactly one of --model" -- "$dak" decode
expect 2 "exactly one of --model" -- "$dak" decode --model "$cfg/opt-6.7b" --tiny opt
expect 2 "--ratios" -- "$dak" decode --tiny opt --ratios 150
expect 2 "--ratios" -- "$dak" decode --tiny opt --ratios 10,-5
expect 2 "--ratios" -- "$dak" decode --tiny opt --ratios 10,abc
expect 2 "--ratios" -- "$dak" decode --tiny opt --ratios ,
expect 2 "--batch" -- "$dak" decode --tiny opt --batch 0
expect 2 "--batch" -- "$dak" decode --tiny opt --batch 5000
expect 2 "--tokens" -- "$dak" decode --tiny opt --tokens 0
expect 2 "--prompt" -- "$dak" decode --tiny opt --prompt 0
expect 2 "--baseline" -- "$dak" decode --tiny opt --baseline flexgen
expect 2 "--baseline" -- "$dak" decode --tiny opt --baseline direct,
expect 2 "--baseline" -- "$dak" decode --tiny opt --baseline um,uvm
expect 2 "--baseline" -- "$dak" decode --tiny opt --baseline ""
expect 2 "--deploy 0" -- "$dak" decode --tiny opt --baseline um --deploy 1
expect 2 "--deploy 0" -- "$dak" decode --tiny opt --baseline direct,all --deploy 1 --gpu-mem 1GiB --ratios fit
expect 2 "--tiny" -- "$dak" decode --tiny gpt
expect 2 "does not exist" -- "$dak" decode --model "$tmp/missing"
expect 2 "config.json" -- "$dak" decode --model "$tmp"
expect 2 "--layers" -- "$dak" decode --model "$cfg/opt-6.7b" --layers 33
expect 2 "--layers" -- "$dak" decode --tiny opt --layers 0
expect 2 "--host-mem" -- "$dak" decode --tiny opt --host-mem 0
expect 2 "--gpu-mem" -- "$dak" decode --tiny opt --gpu-mem lots
expect 2 "--seed" -- "$dak" decode --tiny opt --seed -1
expect 2 "--breakdown" -- "$dak" decode --tiny opt --breakdown 1001
expect 2 "--breakdown" -- "$dak" decode --tiny opt --breakdown -1
expect 2 "--breakdown" -- "$dak" decode --tiny opt --breakdown
expect 2 "--pdl" -- "$dak" decode --tiny opt --pdl 3
expect 2 "--deploy: expected 0, 1 or auto, got '2'" -- "$dak" decode --tiny opt --deploy 2
expect 2 "--deploy: expected 0, 1 or auto, got 'yes'" -- "$dak" decode --tiny opt --deploy yes
expect 2 "--ratios fit" -- "$dak" decode --tiny opt --ratios fit
expect 2 "--ratios fit" -- "$dak" decode --tiny opt --ratios fit --deploy 1
expect 2 "--ratios fit" -- "$dak" decode --tiny opt --ratios fit --gpu-mem 1GiB --deploy 0
# --deploy auto (the default) is 1 with --ratios fit, so um (which needs the full copies) is refused beside it
expect 2 "--baseline um: expected --deploy 0" -- "$dak" decode --tiny opt --baseline all --gpu-mem 1GiB --ratios fit
expect 2 "--baseline um: expected --deploy 0" -- "$dak" decode --tiny opt --baseline um --gpu-mem 1GiB --ratios fit --deploy auto
expect 2 "unknown option" -- "$dak" decode --tiny opt --frobnicate
expect 2 "positions" -- "$dak" decode --model "$cfg/opt-6.7b" --prompt 2000 --tokens 100
expect 0 "usage: dak decode" -- "$dak" decode --help
# checkpoints and prompts
expect 2 "--prompt-ids" -- "$dak" decode --tiny opt --prompt-ids 1,2,x
expect 2 "--prompt-ids" -- "$dak" decode --tiny opt --prompt-ids ""
expect 2 "--prompt-ids" -- "$dak" decode --tiny opt --prompt-ids 1,,2
expect 2 "expected 0..999" -- "$dak" decode --tiny opt --prompt-ids 1,2,1000
expect 2 "--prompt 3 and --prompt-ids of 2" -- "$dak" decode --tiny opt --prompt 3 --prompt-ids 5,6
expect 2 "--weights: $tmp/none" -- "$dak" decode --tiny opt --weights "$tmp/none"
expect 2 "no model.safetensors" -- "$dak" decode --tiny opt --weights "$tmp"
expect 0 "synthetic parameters of tiny opt" -- "$dak" ckpt synth --tiny opt --out "$tmp/opt.safetensors"
expect 0 "36 tensors the engine reads" -- "$dak" ckpt check --tiny opt --weights "$tmp/opt.safetensors"
expect 0 "tensors the engine reads" -- "$dak" ckpt check --tiny opt --layers 1 --weights "$tmp/opt.safetensors"
expect 1 "no token embedding" -- "$dak" ckpt check --tiny llama --weights "$tmp/opt.safetensors"
expect 0 "synthetic parameters of tiny llama" -- "$dak" ckpt synth --tiny llama --dtype f32 --out "$tmp/l.safetensors"
expect 0 "lm_head.weight" -- "$dak" ckpt check --tiny llama --weights "$tmp/l.safetensors"
expect 1 "has shape" -- "$dak" ckpt check --model "$cfg/llama-2-7b" --layers 1 --weights "$tmp/l.safetensors"
head -c 100 "$tmp/opt.safetensors" > "$tmp/cut.safetensors"
expect 1 "header length" -- "$dak" ckpt check --tiny opt --weights "$tmp/cut.safetensors"
expect 2 "--dtype" -- "$dak" ckpt synth --tiny opt --dtype f16 --out "$tmp/x.safetensors"
expect 2 "--out" -- "$dak" ckpt synth --tiny opt
expect 2 "unknown subcommand" -- "$dak" ckpt convert
expect 2 "unknown option '--weights'" -- "$dak" ckpt synth --tiny opt --weights x --out "$tmp/y"
expect 2 "exactly one of --model" -- "$dak" ckpt check --weights "$tmp/opt.safetensors"
expect 1 "no checkpoint in" -- "$dak" ckpt check --model "$cfg/opt-6.7b"
expect 0 "usage: dak ckpt" -- "$dak" ckpt --help
# dak ckpt read: bad flags refused (2), a bad checkpoint refused (1); a read's table and JSON; the same bf16 values
# (hash) with 1 thread and with 3, and reads of 8 MiB and more split only when threads are allowed
expect 2 "read: --weights: missing" -- "$dak" ckpt read
expect 2 "read: --weights: '$tmp/none' does not exist" -- "$dak" ckpt read --weights "$tmp/none"
expect 2 "--threads: expected an integer in \[0, 64\], got '65'" -- "$dak" ckpt read --weights "$tmp/opt.safetensors" --threads 65
expect 2 "--threads: expected an integer" -- "$dak" ckpt read --weights "$tmp/opt.safetensors" --threads many
expect 2 "unknown option '--tiny'" -- "$dak" ckpt read --tiny opt --weights "$tmp/opt.safetensors"
expect 2 "unknown option '--threads'" -- "$dak" ckpt check --tiny opt --threads 2
expect 1 "header length" -- "$dak" ckpt read --weights "$tmp/cut.safetensors"
expect 1 "read: --json: cannot write '$tmp/no/r.json'" -- "$dak" ckpt read --weights "$tmp/opt.safetensors" --json "$tmp/no/r.json"
expect 0 "GB/s" -- "$dak" ckpt read --weights "$tmp/opt.safetensors" --threads 1 --json "$tmp/read.json"
check "dak ckpt read's JSON: 36 tensors, 1 thread, its rate" \
    grep -q '"tensors_read":36,.*"threads":1,.*"gb_per_s":[0-9]' "$tmp/read.json"
printf '%s\n' '{"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 1, "num_attention_heads": 8,' \
    '"vocab_size": 8192, "max_position_embeddings": 512, "do_layer_norm_before": true, "enable_bias": true}' \
    >"$tmp/wide.json" # fc1, fc2: 8 MiB, the embedding 16 MiB: reads that are split
"$dak" ckpt synth --model "$tmp/wide.json" --out "$tmp/wide.safetensors" >/dev/null 2>&1
expect 0 "3 of them split" -- "$dak" ckpt read --weights "$tmp/wide.safetensors" --threads 3 --json "$tmp/wide3.json"
expect 0 "0 of them split" -- "$dak" ckpt read --weights "$tmp/wide.safetensors" --threads 1 --json "$tmp/wide1.json"
hash_of() { grep -o '"bf16_hash":"[0-9a-f]*"' "$1"; }
check "dak ckpt read: the same bf16 values (hash) with 3 threads as with 1" \
    test -n "$(hash_of "$tmp/wide3.json")" -a "$(hash_of "$tmp/wide3.json")" = "$(hash_of "$tmp/wide1.json")"
check "dak ckpt read: another checkpoint, another hash (the comparison above can fail)" \
    test "$(hash_of "$tmp/wide1.json")" != "$(hash_of "$tmp/read.json")"
expect 2 "--diag-skip" -- "$dak" decode --tiny opt --diag-skip norm,
expect 2 "--diag-empty" -- "$dak" decode --tiny opt --diag-empty evict
expect 2 "--gemm-pdl-pre" -- "$dak" decode --tiny opt --gemm-pdl-pre 25wait
expect 2 "--diag-skip" -- "$dak" decode --tiny opt --diag-skip ""
expect 2 "--gemm-pdl-pre: expected 'none' or an integer in \[0, 24\], got '25'" -- "$dak" decode --tiny opt --gemm-pdl-pre 25
expect 2 "--gemm-pdl-pre: expected 'none' or an integer" -- "$dak" decode --tiny opt --gemm-pdl-pre nothing
expect 2 "--norm-trigger: expected top, loaded or end, got 'mid'" -- "$dak" decode --tiny opt --norm-trigger mid
expect 2 "--gemm-pre-none" -- "$dak" decode --tiny opt --gemm-pre-none o_proj,norms
expect 2 "--norm-narrow" -- "$dak" decode --tiny opt --norm-narrow 2
expect 2 "--gemm-pre-none" -- "$dak" decode --tiny opt --gemm-pre-none nothing
# 'none' is taken (the next flag's refusal is what stops the run)
expect 2 "--pdl" -- "$dak" decode --tiny opt --gemm-pre-none none --pdl 3
expect 2 "--gemm-hbm-window: expected an integer in \[0, 24\], got '25'" -- "$dak" decode --tiny opt --gemm-hbm-window 25
expect 2 "--gemm-stages" -- "$dak" decode --tiny opt --gemm-stages x
expect 2 "--gemm-stages" -- "$dak" decode --tiny opt --gemm-stages
expect 2 "--gemm-dyn: expected an integer in \[0, 1\], got '2'" -- "$dak" decode --tiny opt --gemm-dyn 2
expect 2 "--gemm-whole: expected an integer in \[0, 2\], got '3'" -- "$dak" decode --tiny opt --gemm-whole 3
expect 2 "--gemm-whole: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --gemm-whole 0
expect 2 "--gemm-whole-cl: expected an integer in \[0, 1\], got '4'" -- "$dak" decode --tiny opt --gemm-whole-cl 4
expect 2 "--gemm-whole-cl: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --gemm-whole-cl 1
expect 2 "--gemm-whole-swap: expected an integer in \[0, 3\], got '4'" -- "$dak" decode --tiny opt --gemm-whole-swap 4
expect 2 "--gemm-whole-swap: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --gemm-whole-swap 0
expect 2 "--pdl" -- "$dak" decode --tiny opt --gemm-stages 0 --gemm-hbm-window 3 --gemm-dyn 1 --gemm-whole 1 \
    --gemm-whole-cl 0 --gemm-whole-swap 0 --pdl 3
expect 2 "--diag-times: expected --deploy 0" -- "$dak" decode --tiny opt --deploy 1 --diag-times "$tmp/t.json"
expect 2 "--load-times: expected an integer in \[0, 1\], got '2'" -- "$dak" decode --tiny opt --load-times 2
expect 2 "--load-times" -- "$dak" decode --tiny opt --load-times
expect 2 "--load-times: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --load-times 1
expect 2 "--load-pin: expected register or alloc, got 'mlock'" -- "$dak" decode --tiny opt --load-pin mlock
expect 2 "--load-pin: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --load-pin alloc
expect 2 "--fuse-qkv: expected an integer in \[0, 1\], got '2'" -- "$dak" decode --tiny opt --fuse-qkv 2
expect 2 "--diag-skip / --diag-empty qkv_post: expected --fuse-qkv 0" -- "$dak" decode --tiny opt --fuse-qkv 1 --diag-skip act,qkv_post
expect 2 "--diag-skip / --diag-empty qkv_post: expected --fuse-qkv 0" -- "$dak" decode --tiny llama --diag-empty qkv_post --fuse-qkv 1
# --backend cpu: greedy decoding by the CPU reference; the checkpoint's path (read, converted) against the synthetic
# fill, both on the CPU: the same tokens
expect 2 "--backend: expected auto, gpu or cpu, got 'npu'" -- "$dak" decode --tiny opt --backend npu
expect 2 "--ratios: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --ratios 0
expect 2 "--pdl: an option of the GPU engine" -- "$dak" decode --tiny llama --backend cpu --pdl 1
expect 2 "--gemm-stages: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --gemm-stages 4
expect 2 "--fuse-qkv: an option of the GPU engine" -- "$dak" decode --tiny opt --backend cpu --fuse-qkv 1
expect 0 "ms a token" -- "$dak" decode --tiny opt --backend cpu --prompt 4 --tokens 6 --json "$tmp/cpu.json"
check "the CPU run's JSON names its backend and 7 generated tokens" \
    grep -q '"backend":"cpu".*"generated_seq0":\[[0-9]*\(,[0-9]*\)\{6\}\]' "$tmp/cpu.json"
"$dak" ckpt synth --tiny opt --seed 9 --out "$tmp/seed9.safetensors" >/dev/null 2>&1
for w in "$tmp/opt.safetensors" synthetic "$tmp/seed9.safetensors"; do
    "$dak" decode --tiny opt --backend cpu --weights "$w" --prompt-ids 5,6,7 --tokens 6 --batch 2 >"$tmp/gen-$(basename "$w").txt" 2>/dev/null
done
check "tiny opt on the CPU: the checkpoint's tokens are the synthetic weights' tokens" \
    cmp -s <(grep "sequence 0: generated" "$tmp/gen-opt.safetensors.txt") <(grep "sequence 0: generated" "$tmp/gen-synthetic.txt")
check "a checkpoint of other weights (seed 9) gives other tokens (the comparison above can fail)" \
    bash -c '! cmp -s <(grep "sequence 0: generated" "$1") <(grep "sequence 0: generated" "$2")' _ \
    "$tmp/gen-seed9.safetensors.txt" "$tmp/gen-synthetic.txt"
check "the CPU run generated 7 tokens" grep -q "^sequence 0: generated\( [0-9]*\)\{7\}$" "$tmp/gen-synthetic.txt"
# heads of 64 (OPT-125m's size): the GPU engine refuses them by name, the CPU reference decodes them, from a
# checkpoint as from the synthetic fill
mkdir -p "$tmp/hd64"
cat >"$tmp/hd64/config.json" <<'JSON'
{"model_type": "opt", "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "ffn_dim": 256,
 "vocab_size": 500, "max_position_embeddings": 64, "word_embed_proj_dim": 128, "enable_bias": true}
JSON
expect 2 "head_dim 64: the GPU engine's kernels take 128 only" -- "$dak" decode --model "$tmp/hd64" --backend gpu
expect 2 "--ratios: an option of the GPU engine; expected --backend gpu (this run is on the CPU: the model's head_dim" -- \
    "$dak" decode --model "$tmp/hd64" --ratios 0
"$dak" ckpt synth --model "$tmp/hd64" --out "$tmp/hd64.safetensors" >/dev/null 2>&1
for w in "$tmp/hd64.safetensors" synthetic; do
    "$dak" decode --model "$tmp/hd64" --weights "$w" --prompt-ids 5,6,7 --tokens 6 --batch 3 >"$tmp/hd64-$(basename "$w").txt" 2>/dev/null
done
check "heads of 64 on the CPU (backend auto): 7 tokens generated" \
    grep -q "^sequence 0: generated\( [0-9]*\)\{7\}$" "$tmp/hd64-synthetic.txt"
check "heads of 64: the checkpoint's tokens are the synthetic weights' tokens" \
    cmp -s <(grep "sequence 0: generated" "$tmp/hd64-hd64.safetensors.txt") <(grep "sequence 0: generated" "$tmp/hd64-synthetic.txt")
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
