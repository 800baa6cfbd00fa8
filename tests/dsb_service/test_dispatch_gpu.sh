#!/usr/bin/env bash
# GPU test (label gpu): `dsb serve --dispatch D` (launch, proxy or gpu) answers over UDP loopback
# with replies bit-exact with the CPU reference (the client recomputes every
# energy and re-solves the first 20 requests on the CPU), counts what does not
# fit one block as too_large, and loses nothing.  DSB_SERVE_ARGS: more server
# flags (e.g. "--gpu-workers 132": one persistent worker per SM).
set -u
DSB=$1
DISPATCH=${2:-launch}
pass=0 fail=0
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

check() { # check NAME FILE PATTERN...
    local name=$1 file=$2; shift 2
    for pat in "$@"; do
        if grep -q -- "$pat" "$file"; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAIL: $name: no '$pat' in: $(cat "$file")" >&2; fi
    done
}

for port in $((20000 + RANDOM % 20000)) $((20000 + RANDOM % 20000)); do
    "$DSB" serve --dispatch "$DISPATCH" ${DSB_SERVE_ARGS:-} --port "$port" --duration 120 --json >"$tmp/srv.out" 2>"$tmp/srv.err" &
    srv=$!
    sleep 1
    if kill -0 "$srv" 2>/dev/null; then break; fi
    srv=
done
if [ -z "$srv" ] && grep -q "no usable CUDA device\|no CUDA device\|not built" "$tmp/srv.err"; then
    echo "skipped: $(cat "$tmp/srv.err")"
    exit 77
fi
if [ -z "$srv" ]; then
    echo "FAIL: could not start dsb serve --dispatch $DISPATCH: $(cat "$tmp/srv.err")" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# the reference request, 4 outstanding
"$DSB" client --port "$port" --closed 4 --gen portfolio:n=128 --steps 100 --requests 2000 \
    --warmup 200 --json >"$tmp/a.json" 2>"$tmp/a.err"
check "int8 n=128" "$tmp/a.json" '"lost":0' '"energy_mismatch":0' '"reference_checked":20' \
    '"reference_mismatch":0' '"ok":2200'
# PM1 and TERNARY models in other slots, n not a multiple of 32
"$DSB" client --port "$port" --closed 16 --gen sk:n=200 --format pm1 --model-id 2 --steps 50 \
    --requests 1000 --warmup 100 --json >"$tmp/b.json" 2>"$tmp/b.err"
check "pm1 n=200" "$tmp/b.json" '"lost":0' '"energy_mismatch":0' '"reference_mismatch":0' '"ok":1100'
"$DSB" client --port "$port" --closed 1 --gen ternary:n=77 --format ternary --model-id 3 \
    --replicas 32 --steps 30 --requests 300 --warmup 30 --json >"$tmp/c.json" 2>"$tmp/c.err"
check "ternary n=77 B=32" "$tmp/c.json" '"lost":0' '"energy_mismatch":0' '"reference_mismatch":0' '"ok":330'
# B n_p = 64 x 128 > 4096: does not fit one block -> answered too_large
"$DSB" client --port "$port" --closed 1 --gen portfolio:n=128 --replicas 64 --steps 10 \
    --requests 20 --warmup 0 --json >"$tmp/d.json" 2>"$tmp/d.err"
check "too large" "$tmp/d.json" '"lost":0' '"too_large":20'
# overload: open loop far above what any dispatcher sustains here; every request is answered
# (OK or OVERLOADED) or its loss is counted by a socket or ring drop on one side
"$DSB" client --port "$port" --rate 600000 --gen portfolio:n=128 --steps 100 --requests 200000 \
    --warmup 0 --energy-checks 0 --ref-checks 0 --drain 2 --json >"$tmp/e.json" 2>"$tmp/e.err"
kill -INT "$srv"
wait "$srv"
rc=$?
srv=
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: server exit $rc" >&2; fi
if python3 - "$tmp/e.json" "$tmp/srv.out" "$DISPATCH" "${DSB_SERVE_ARGS:-}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))['load']
srv = json.load(open(sys.argv[2]))
s = srv['counters']
ok = (c['sent'] == c['answered'] + c['lost'] and c['answered'] == c['ok'] + c['by_status']['overloaded']
      and c['lost'] <= s['kernel_drops'] + c['client_socket_drops'])
# the persistent-worker dispatchers report their worker blocks; --gpu-workers N sets them
args = sys.argv[4].split()
if sys.argv[3] in ('proxy', 'gpu'):
    want = None  # --gpu-workers N or --gpu-workers=N, as the CLI accepts both
    for j, a in enumerate(args):
        if a.startswith('--gpu-workers='):
            want = int(a.split('=', 1)[1])
        elif a == '--gpu-workers' and j + 1 < len(args):
            want = int(args[j + 1])
    got = srv.get('gpu_workers', 0)
    print('gpu_workers %d%s' % (got, '' if want is None else ' (asked %d)' % want))
    ok = ok and got > 0 and (want is None or got == want)
print('overload: sent %d answered %d (ok %d, overloaded %d) lost %d; server kernel/ring drops %d, '
      'client socket drops %d' % (c['sent'], c['answered'], c['ok'], c['by_status']['overloaded'],
                                  c['lost'], s['kernel_drops'], c['client_socket_drops']))
sys.exit(0 if ok else 1)
PY
then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: overload not accounted" >&2; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
