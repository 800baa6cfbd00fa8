#!/usr/bin/env bash
# session 24, call 2 (helper-41): fused q/k/v (--fuse-qkv 1) against the separate kernel (0), interleaved, two rounds;
# the unfused step with qkv_post left out (--diag-skip: wrong results, the kernel's cost alone); r = 10 %; the stamped
# timeline of both (OPT-6.7B b8, layer 16)
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s24-fuse
mkdir -p $C/b && (cd $C/b && tar xJf ../bins1.tar.xz)
R=$OUT/fuse-call2; mkdir -p $R
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3, $6}'; }
run() { local tag=$1 model=$2 b=$3 ratio=$4; shift 4
  if [ $SECONDS -gt 272 ]; then echo "$tag skipped (time)"; return; fi
  timeout 26 $C/b/tools/dak/dak decode --model configs/$model --batch $b --prompt 8 --tokens 24 --ratios $ratio --baseline direct "$@" \
    --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT direct, r=0 ref: $(row $R/$tag.txt) ms $(grep -m1 -i 'error\|expected' $R/$tag.err)"; }
run opt-6.7b-b8-unf-1 opt-6.7b 8 0 --fuse-qkv 0
run opt-6.7b-b8-fus-1 opt-6.7b 8 0 --fuse-qkv 1
run opt-6.7b-b8-skip-1 opt-6.7b 8 0 --fuse-qkv 0 --diag-skip qkv_post
run llama-2-7b-b8-unf-1 llama-2-7b 8 0 --fuse-qkv 0
run llama-2-7b-b8-fus-1 llama-2-7b 8 0 --fuse-qkv 1
run opt-6.7b-b64-unf-1 opt-6.7b 64 0 --fuse-qkv 0
run opt-6.7b-b64-fus-1 opt-6.7b 64 0 --fuse-qkv 1
run opt-6.7b-b8-fus-2 opt-6.7b 8 0 --fuse-qkv 1
run opt-6.7b-b8-unf-2 opt-6.7b 8 0 --fuse-qkv 0
run llama-2-7b-b8-fus-2 llama-2-7b 8 0 --fuse-qkv 1
run llama-2-7b-b8-unf-2 llama-2-7b 8 0 --fuse-qkv 0
run opt-6.7b-b64-fus-2 opt-6.7b 64 0 --fuse-qkv 1
run opt-6.7b-b64-unf-2 opt-6.7b 64 0 --fuse-qkv 0
run opt-6.7b-b8-times-unf opt-6.7b 8 0 --fuse-qkv 0 --diag-times $R/times-unf.json
run opt-6.7b-b8-times-fus opt-6.7b 8 0 --fuse-qkv 1 --diag-times $R/times-fus.json
run opt-6.7b-b8-r10-unf opt-6.7b 8 10 --fuse-qkv 0
run opt-6.7b-b8-r10-fus opt-6.7b 8 10 --fuse-qkv 1
for t in unf fus; do echo "== timeline $t"; grep -A12 "timeline" $R/opt-6.7b-b8-times-$t.txt | grep -E "norm|qkv|attention|o_proj" | head -5; done
cd $OUT && tar czf fuse-call2.tgz fuse-call2 && rm -rf fuse-call2
