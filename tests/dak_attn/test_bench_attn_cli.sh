#!/usr/bin/env bash
# CPU test of `dak bench attn`'s flags: every bad value refused with a message naming the flag and
# status 2, before anything touches a GPU; --help on stdout with status 0.
# $1: the dak program.
set -u
DAK=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../cli_expect.sh"

expect 0 "usage: dak bench attn" -- "$DAK" bench attn --help
expect 2 "gemm or attn" -- "$DAK" bench
expect 2 "\-\-model: expected opt-6.7b" -- "$DAK" bench attn --model gpt-5
expect 2 "\-\-batch: expected an integer" -- "$DAK" bench attn --batch 0
expect 2 "\-\-batch: expected an integer" -- "$DAK" bench attn --batch 8,x
expect 2 "\-\-batch: expected a non-empty" -- "$DAK" bench attn --batch ,
expect 2 "\-\-len: expected an integer" -- "$DAK" bench attn --len 0
expect 2 "\-\-len: expected an integer" -- "$DAK" bench attn --len 2000000
expect 2 "\-\-ratios: expected a number" -- "$DAK" bench attn --ratios 101
expect 2 "\-\-ratios: expected a number" -- "$DAK" bench attn --ratios nan
expect 2 "\-\-ratios: expected a number" -- "$DAK" bench attn --ratios -1
expect 2 "\-\-window: expected an integer" -- "$DAK" bench attn --window 7
expect 2 "\-\-host-ctas: expected an integer" -- "$DAK" bench attn --host-ctas -3
expect 2 "\-\-reps: expected an integer" -- "$DAK" bench attn --reps 0
expect 2 "\-\-groups: expected an integer" -- "$DAK" bench attn --groups 3
expect 2 "\-\-launches: expected an integer" -- "$DAK" bench attn --launches 65
expect 2 "\-\-teams: expected 0, 1, 2, 4 or 8" -- "$DAK" bench attn --teams 3
expect 2 "\-\-teams: expected an integer" -- "$DAK" bench attn --teams 16
expect 2 "\-\-teams 8: expected at most 4 x groups" -- "$DAK" bench attn --groups 1 --teams 8
expect 2 "\-\-teams 2: expected 0 or 1 with 8 query heads" -- "$DAK" bench attn --model custom --heads 64 --kv-heads 8 --teams 2
expect 2 "\-\-combine: expected auto, inline or kernel" -- "$DAK" bench attn --combine twice
expect 2 "\-\-sweep-ratio: expected a ratio" -- "$DAK" bench attn --sweep-ratio 0
expect 2 "\-\-hbm-budget" -- "$DAK" bench attn --hbm-budget lots
expect 2 "expected --heads and --kv-heads" -- "$DAK" bench attn --model custom --heads 32
expect 2 "expected heads a multiple of kv-heads" -- "$DAK" bench attn --model custom --heads 32 --kv-heads 3
expect 2 "expected heads a multiple of kv-heads" -- "$DAK" bench attn --model custom --heads 32 --kv-heads 2
expect 2 "expected only with --model custom" -- "$DAK" bench attn --model opt-30b --heads 8
expect 2 "\-\-json: expected a file name" -- "$DAK" bench attn --json=
expect 2 "unknown option '--bogus'" -- "$DAK" bench attn --bogus
expect 2 "\-\-reps" -- "$DAK" bench attn --reps

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
