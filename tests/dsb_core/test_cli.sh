#!/usr/bin/env bash
# CLI behaviour of `dsb solve`, `dsb bench cpu` and `dsb bench solve`: bad flags and values exit
# with status 2 and say what was expected; a good solve prints the fields.
set -u
DSB=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../cli_expect.sh"

expect 2 "usage" -- "$DSB"
expect 2 "unknown command" -- "$DSB" frobnicate
expect 2 "exactly one of FILE or --gen" -- "$DSB" solve
expect 2 "--steps: expected an integer" -- "$DSB" solve --gen sk:n=16 --steps abc
expect 2 "--steps: expected an integer" -- "$DSB" solve --gen sk:n=16 --steps 0
expect 2 "--replicas: expected an integer" -- "$DSB" solve --gen sk:n=16 --replicas -3
expect 2 "--dt: expected a number" -- "$DSB" solve --gen sk:n=16 --dt nan
expect 2 "--xi: expected a number" -- "$DSB" solve --gen sk:n=16 --xi 1x
expect 2 "--backend: expected cpu or gpu" -- "$DSB" solve --gen sk:n=16 --backend tpu
expect 2 "--format: expected auto" -- "$DSB" solve --gen sk:n=16 --format int4
expect 2 "unknown option" -- "$DSB" solve --gen sk:n=16 --bogus 1
expect 2 "expected a value" -- "$DSB" solve --gen sk:n=16 --steps
expect 2 "second one" -- "$DSB" solve a.txt b.txt
expect 2 "gen" -- "$DSB" solve --gen warp:n=16
expect 1 "pm1" -- "$DSB" solve --gen ternary:n=64 --format pm1
expect 1 "nonexistent" -- "$DSB" solve "$tmp/nonexistent.txt"
expect 2 "field" -- "$DSB" solve --gen sk:n=16 --field 3
expect 2 "dsb bench: unknown command 'nothing'" -- "$DSB" bench nothing
expect 2 "usage: dsb bench COMMAND" -- "$DSB" bench
expect 0 "pipeline" -- "$DSB" bench --help
expect 2 "applies to --backend gpu only" -- "$DSB" solve --gen sk:n=16 --sums tensor
expect 2 "--sums: expected auto, cuda or tensor" -- "$DSB" solve --gen sk:n=16 --backend gpu --sums x
expect 2 "expected a list of up to three of auto, cuda, tensor" -- "$DSB" bench solve --sums fast
expect 2 "only with CUDA-core sums" -- "$DSB" bench solve --sums tensor --variant no-sum

expect 0 "best energy" -- "$DSB" solve --gen sk:n=64 --steps 50
expect 0 "reached" -- "$DSB" solve --gen mattis:n=256 --steps 100
expect 0 '"best_energy2"' -- "$DSB" solve --gen portfolio:n=64 --json
printf '4 4\n1 2 1\n2 3 1\n3 4 1\n4 1 1\n' >"$tmp/ring.txt"
expect 0 "cut" -- "$DSB" solve "$tmp/ring.txt" --replicas 4 --steps 100
expect 0 "" -- "$DSB" solve --gen sk:n=40 --spins-out "$tmp/spins.txt"
if [ "$(grep -c -E '^(1|-1)$' "$tmp/spins.txt")" -eq 40 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: --spins-out did not write 40 spins" >&2; fi
# the 4-ring's maximum cut is 4: a solve that returns it shows the readout
"$DSB" solve "$tmp/ring.txt" --replicas 8 --steps 200 --json >"$tmp/ring.json"
if grep -q '"objective":4[,}]' "$tmp/ring.json"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: 4-ring max cut is 4: $(cat "$tmp/ring.json")" >&2; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
