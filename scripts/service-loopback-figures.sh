#!/usr/bin/env bash
# Loopback figures of the dsb service with the cpu dispatcher (seed 000,
# Tables IX/X configurations on this machine): closed loop 1/16/64, open loop
# at a few Poisson rates, reference request INT8 n=128 B=8 K=100.
# Usage: scripts/service-loopback-figures.sh DSB_BINARY OUT.jsonl [REQUESTS] [RATES...]
set -eu
DSB=$1
OUT=$2
REQ=${3:-10000}
shift 3 2>/dev/null || shift $#
RATES=${*:-100 200 400 800}
PORT=$((30000 + RANDOM % 20000))
WORKERS=${WORKERS:-2}
TRANSPORT=${TRANSPORT:-udp}
: >"$OUT"
if [ "$TRANSPORT" = packet ]; then
    "$DSB" serve --transport packet --iface lo --workers "$WORKERS" --json >"$OUT.server" 2>"$OUT.server.err" &
    CL=(--transport packet --iface lo)
else
    "$DSB" serve --port "$PORT" --workers "$WORKERS" --json >"$OUT.server" 2>"$OUT.server.err" &
    CL=(--port "$PORT")
fi
SRV=$!
trap 'kill -INT $SRV 2>/dev/null || true' EXIT
sleep 0.5
run() {
    "$DSB" client "${CL[@]}" --gen portfolio:n=128 --steps 100 --replicas 8 \
        --requests "$REQ" --warmup 1000 --json "$@" >>"$OUT"
}
run --closed 1
for w in 16 64; do run --closed "$w" --no-upload; done
for r in $RATES; do run --rate "$r" --no-upload; done
kill -INT $SRV
wait $SRV || true
trap - EXIT
python3 - "$OUT" <<'PY'
import json, sys
print(f"{'mode':>8} {'W/rate':>7} {'kreq/s':>8} {'lost%':>6} {'ovl':>6} {'res p50':>8} {'res p99':>8} {'rtt p50':>8} {'rtt p99':>8} {'p99.9':>8} {'E ok':>6} {'ref ok':>6}")
for line in filter(str.strip, open(sys.argv[1])):
    r = json.loads(line); l = r["load"]
    x = l["outstanding"] if l["mode"] == "closed" else int(l["offered_rate"])
    print(f"{l['mode']:>8} {x:>7} {l['achieved_rate']/1e3:8.3f} {100*l['lost']/max(1,l['sent']):6.2f} "
          f"{l['by_status']['overloaded']:>6} {l['residence_p50_us']:8.1f} {l['residence_p99_us']:8.1f} "
          f"{l['rtt_p50_us']:8.1f} {l['rtt_p99_us']:8.1f} {l['rtt_p999_us']:8.1f} "
          f"{l['energy_checked']-l['energy_mismatch']:>6} {l['reference_checked']-l['reference_mismatch']:>6}")
PY
