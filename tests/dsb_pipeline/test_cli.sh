#!/bin/sh
# Usage errors of `dsb bench pipeline` exit with status 2 and say what was wrong.
# $1: the dsb_bench_pipeline program.
bin="$1"
pass=0
fail=0
expect() { # expected-status needle args...
    want="$1"; needle="$2"; shift 2
    out=$("$bin" "$@" 2>&1); st=$?
    if [ "$st" -eq "$want" ] && printf '%s' "$out" | grep -q -- "$needle"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $* -> status $st (want $want), output: $out"
    fi
}
expect 2 "expected pm1, ternary or int8" --format bogus
expect 2 "expected gpu, host or both" --placement disk
expect 2 "--n" --n 0
expect 2 "--B" --B 0
expect 2 "exceeds one block" --n 512 --B 9
expect 2 "at least 2000" --requests 10
expect 2 "multiple of 128" --smem 1000
expect 2 "unknown option" --bogus 1
expect 2 "expected a value" --K
expect 2 "expected a list of up to three of auto, cuda, tensor" --sums fast
expect 2 "expected a list of up to three of auto, cuda, tensor" --sums cuda,tensor,auto,cuda
expect 0 "usage" --help
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
