#!/usr/bin/env bash
# GPU test of `dak bench gemm`'s sections that time their own N lists (wave and diag: N 1, 8, 64), run with a
# narrower --n: B and C must be allocated for the sections' widest N.  Until the sixteenth session they were sized
# by --n alone; the N = 64 launches wrote past C into the split-K counters and the next fix-up polled forever (the
# "stall on small shapes").  Asserts: the run ends (timeout), status 0, no GEMM refused or failed on stderr, and
# the wave table's JSON has every N of its list with finite, positive bandwidths; the diag section's ring hand-over
# probe has its 12 cells, each a rate HBM can reach.
# $1: the dak program.
set -u
DAK=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 100 "$DAK" bench gemm --sections wave,diag --shapes 1024x1024 --n 1 --reps 1 --json "$tmp/b.json" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ $rc -ne 0 ]; then
    echo "FAIL: dak bench gemm exited with status $rc (124: did not end within 100 s)" >&2
    fail=1
fi
if grep -q "dak bench: split:" "$tmp/err"; then
    echo "FAIL: a GEMM was refused or failed:" >&2
    grep "dak bench: split:" "$tmp/err" | head -5 >&2
    fail=1
fi
python3 - "$tmp/b.json" <<'PY' || fail=1
import json, math, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"FAIL: the bench's JSON: {e}")
waves = [v for k, v in d.items() if k.startswith("wave")] if isinstance(d, dict) else []
rows = [r for w in waves for r in (w if isinstance(w, list) else [])]
ns = sorted({r.get("N") for r in rows})
bad = [r for r in rows if not all(isinstance(r.get(k), (int, float)) and math.isfinite(r[k]) and r[k] > 0
                                  for k in ("aligned_GBs", "unaligned_GBs"))]
if ns != [1, 8, 64] or bad:
    sys.exit(f"FAIL: wave rows: N {ns} (want [1, 8, 64]); rows without finite positive GB/s: {bad[:3]}")
# the ring hand-over probe: 3 copy sizes x 4 waiter configurations, each a finite positive rate; the plain probe
# (consumer_warps 0) within the HBM's reach (under 6 TB/s: the H200's peak is 4.8)
ho = d.get("diag_handover", [])
cells = {(r.get("chunk"), r.get("consumer_warps"), r.get("lane0")) for r in ho}
hbad = [r for r in ho if not (isinstance(r.get("GBs"), (int, float)) and 0 < r["GBs"] < 6000)]
if len(ho) != 12 or len(cells) != 12 or hbad:
    sys.exit(f"FAIL: diag_handover: {len(ho)} rows, {len(cells)} distinct (want 12); out of range: {hbad[:3]}")
PY
if [ $fail -ne 0 ]; then
    tail -20 "$tmp/out" >&2
    exit 1
fi
echo "bench sections wave, diag with --n 1: ok"
