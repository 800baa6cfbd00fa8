#!/usr/bin/env bash
# CLI behaviour of `dsb serve` and `dsb client`: bad flags exit 2 with what was
# expected; a server on a loopback port answers a short closed-loop run whose
# checks pass, and the server prints its counters at exit.  Loopback only,
# bounded in time.
set -u
DSB=$1
pass=0 fail=0
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

EXPECT_TIMEOUT=60
. "$(dirname "$0")/../cli_expect.sh"

expect 0 "usage: dsb serve" -- "$DSB" serve --help
expect 0 "usage: dsb client" -- "$DSB" client --help
expect 2 "expected udp or packet" -- "$DSB" serve --transport tcp
expect 2 "expected cpu, launch, proxy or gpu" -- "$DSB" serve --dispatch fpga
expect 2 "--sums: expected auto, cuda or tensor" -- "$DSB" serve --dispatch gpu --sums fast
expect 2 "applies to the GPU dispatchers" -- "$DSB" serve --sums tensor
expect 2 "--gpu-workers: expected an integer in \[1, 100000\], got '0'" -- "$DSB" serve --dispatch gpu --gpu-workers 0
expect 2 "applies to the persistent-worker dispatchers" -- "$DSB" serve --dispatch launch --gpu-workers 132
expect 2 "--port: expected" -- "$DSB" serve --port 70000
expect 2 "--workers: expected" -- "$DSB" serve --workers 0
expect 2 "--batch: expected" -- "$DSB" serve --batch 65
expect 2 "--mac: expected aa:bb:cc:dd:ee:ff" -- "$DSB" serve --mac 1:2:3
expect 2 "unknown option" -- "$DSB" serve --frobnicate 1
expect 2 "exactly one of --closed W or --rate R" -- "$DSB" client
expect 2 "exactly one of --closed W or --rate R" -- "$DSB" client --closed 1 --rate 100
expect 2 "--closed: expected" -- "$DSB" client --closed 0
expect 2 "--rate: expected" -- "$DSB" client --rate -5
expect 2 "--model-id: expected" -- "$DSB" client --closed 1 --model-id 64
expect 2 "--format: expected" -- "$DSB" client --closed 1 --format int4
expect 2 "either --gen or --file" -- "$DSB" client --closed 1 --gen sk:n=8 --file x
expect 2 "--gen" -- "$DSB" client --closed 1 --gen bogus:n=8
expect 2 "unexpected argument" -- "$DSB" client stray
expect 1 "no LOAD_ACK" -- "$DSB" client --closed 1 --port 9 --requests 1 --warmup 0

# a live server on a free high port (retry a few ports)
for port in $((20000 + RANDOM % 20000)) $((20000 + RANDOM % 20000)) $((20000 + RANDOM % 20000)); do
    "$DSB" serve --port "$port" --workers 2 --duration 30 --json >"$tmp/srv.out" 2>"$tmp/srv.err" &
    srv=$!
    sleep 0.3
    if kill -0 "$srv" 2>/dev/null; then break; fi
    srv=
done
if [ -z "$srv" ]; then
    echo "FAIL: could not start dsb serve" >&2
    cat "$tmp/srv.err" >&2
    fail=$((fail + 1))
else
    expect 0 "CPU reference 20/20 bit-exact" -- "$DSB" client --port "$port" --closed 4 \
        --gen portfolio:n=64 --steps 50 --requests 200 --warmup 50
    expect 0 '"reference_mismatch": *0' -- "$DSB" client --port "$port" --rate 300 \
        --gen sk:n=64 --format pm1 --model-id 3 --steps 50 --requests 100 --warmup 20 --json
    expect 0 "unknown_model" -- "$DSB" client --port "$port" --closed 1 --gen sk:n=64 \
        --model-id 5 --no-upload --requests 5 --warmup 0
    kill -USR1 "$srv"
    sleep 0.2
    kill -INT "$srv"
    wait "$srv"
    rc=$?
    srv=
    # the 370 solves (250 closed-loop, 120 open-loop) each answered: solved, or refused as overloaded when the
    # open-loop client outruns the workers (a loaded machine: CI's 2 cores under ctest -j); none unanswered
    counter() { grep -o "\"$1\": *[0-9]*" "$tmp/srv.out" | head -1 | grep -o '[0-9]*$'; }
    ok=$(counter solve_ok) over=$(counter overloaded) unans=$(counter unanswered)
    if [ "$rc" -eq 0 ] && grep -q "final: .*solve_ok=" "$tmp/srv.err" && [ -n "$ok" ] && [ -n "$over" ] &&
        [ "$ok" -ge 1 ] && [ $((ok + over)) -eq 370 ] && [ "$unans" = 0 ] && grep -q "^\[" "$tmp/srv.err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: server exit $rc or counters missing (solve_ok ${ok:-?} + overloaded ${over:-?} != 370, or unanswered ${unans:-?})" >&2
        cat "$tmp/srv.err" "$tmp/srv.out" >&2
    fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
