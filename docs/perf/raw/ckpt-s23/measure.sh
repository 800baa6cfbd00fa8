#!/bin/bash
# The twenty-third session's checkpoint-read measurement (helper-38): dak ckpt read over a BF16 and an F32 synthetic
# checkpoint with 1, 2 and 4 threads, warm (page cache) in interleaved rounds, then cold (the file's pages
# evicted with dd iflag=nocache, i.e. posix_fadvise DONTNEED, checked with fincore).  Usage: measure.sh DAK OUTDIR
# [WARM_ROUNDS (default 3)] [COLD_ROUNDS (default 2)]
# after:  dak ckpt synth --model configs/opt-6.7b --layers 6 --out /tmp/ckpt-s23-bf16.safetensors
#         dak ckpt synth --model configs/opt-6.7b --layers 2 --dtype f32 --out /tmp/ckpt-s23-f32.safetensors
set -u
dak=$1 out=$2 warm_rounds=${3:-3} cold_rounds=${4:-2}
mkdir -p "$out"
files="bf16:/tmp/ckpt-s23-bf16.safetensors f32:/tmp/ckpt-s23-f32.safetensors"
for kf in $files; do # warm both files once, unmeasured
    "$dak" ckpt read --weights "${kf#*:}" --threads 2 >/dev/null 2>&1
done
for round in $(seq "$warm_rounds"); do
    for kf in $files; do
        for t in 1 2 4; do
            tag="warm-${kf%%:*}-t$t-r$round"
            "$dak" ckpt read --weights "${kf#*:}" --threads "$t" --json "$out/$tag.json" >"$out/$tag.txt" 2>&1
        done
    done
done
for round in $(seq "$cold_rounds"); do
    for kf in $files; do
        for t in 1 2 4; do
            tag="cold-${kf%%:*}-t$t-r$round"
            dd if="${kf#*:}" iflag=nocache count=0 status=none
            fincore "${kf#*:}" >"$out/$tag.txt"
            "$dak" ckpt read --weights "${kf#*:}" --threads "$t" --json "$out/$tag.json" >>"$out/$tag.txt" 2>&1
        done
    done
done
