#!/usr/bin/env bash
# CPU test of the latency-under-load driver (scripts/bench-servers, issue 6): two
# settings of the paper's grid, closed 1/2, two open-loop rates and the client's
# ceiling against the cpu dispatcher, ~50 requests a point.  The JSON must hold
# every field the tables need, nothing may be lost or mismatched, the markdown
# tables must come out, bad flags exit 2, and a dispatcher that does not start
# is reported (exit 1) without stopping the others.
set -u
DSB=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

"$ROOT/scripts/bench-servers" --dsb "$DSB" --dispatch cpu --grid small --ref int8:64:8:50 \
    --unloaded-requests 50 --unloaded-warmup 5 --warmup 10 --windows 1,2 --rates 200,400 \
    --ceiling-rates 1k,2k --point-seconds 0.2 --min-requests 50 --max-requests 200 --drain 5 \
    --out "$tmp/b.json" >"$tmp/tables.md" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ]; then ok; else bad "driver exit $rc: $(tail -5 "$tmp/err")"; fi
grep -q "ETA" "$tmp/err" && ok || bad "no progress line with an ETA on stderr"
for pat in "Table V analog" "Table VI analog" "Table IX analog" "Table X analog" \
    "client's own ceiling" "p99 at the highest load" "int8 n=64 B=8 K=50" "pm1 n=64 B=8 K=100"; do
    grep -qF "$pat" "$tmp/tables.md" && ok || bad "tables: no '$pat'"
done
python3 - "$tmp/b.json" "$DSB" <<'PY' && ok || bad "JSON checks (above)"
import json, sys
d = json.load(open(sys.argv[1]))
errs = []
def need(c, msg):
    if not c: errs.append(msg)
need(d.get("tool") == "bench-servers", "tool")
rows = d.get("rows", [])
fields = ["rtt_p50_us", "rtt_p99_us", "rtt_p999_us", "queue_p50_us", "queue_p99_us", "solve_p50_us",
          "solve_p99_us", "transmit_p50_us", "transmit_p99_us", "residual_p50_us", "residual_p99_us",
          "residence_p50_us", "residence_p99_us", "achieved_rate", "emitted_rate", "sent", "ok"]
for r in rows:
    tag = f"{r.get('server')} {r.get('phase')} {r.get('setting')} {r.get('outstanding')} {r.get('offered_rate')}"
    for k in ["server", "dispatch", "phase", "setting", "mode", "command", "wall_s", "server_cpu_cores",
              "client_cpu_cores", "client_exit", "client"]:
        need(k in r, f"{tag}: no '{k}'")
    need(r.get("command", "").startswith(sys.argv[2] + " client "), f"{tag}: command")
    need(r.get("client_exit") == 0, f"{tag}: client exit {r.get('client_exit')}")
    need(isinstance(r.get("server_cpu_cores"), (int, float)) and r["server_cpu_cores"] >= 0, f"{tag}: cores")
    ld = (r.get("client") or {}).get("load") or {}
    for k in fields:
        need(isinstance(ld.get(k), (int, float)), f"{tag}: load.{k} = {ld.get(k)}")
    need(ld.get("lost") == 0, f"{tag}: lost {ld.get('lost')}")
    need(ld.get("energy_mismatch") == 0 and ld.get("reference_mismatch") == 0, f"{tag}: mismatch")
    need(ld.get("ok", 0) >= 50, f"{tag}: ok {ld.get('ok')}")
ph = [r["phase"] for r in rows]
need(ph.count("unloaded") == 2, f"unloaded rows: {ph.count('unloaded')}")
need(sorted(r["outstanding"] for r in rows if r["phase"] == "closed") == [1, 2], "closed windows")
need(ph.count("open") >= 1 and ph.count("ceiling") >= 1, "open / ceiling rows")
un = {(r["setting"]["format"], r["setting"]["n"], r["setting"]["B"], r["setting"]["K"])
      for r in rows if r["phase"] == "unloaded"}
need(un == {("int8", 64, 8, 50), ("pm1", 64, 8, 100)}, f"unloaded settings {un}")
sv = d.get("servers", [])
need([s["server"] for s in sv] == ["cpu", "ceiling"], "servers")
for s in sv:
    need(s.get("exit_status") == 0 and s.get("error") is None, f"server {s['server']}: {s}")
    need((s.get("counters") or {}).get("counters", {}).get("unanswered") == 0, f"server {s['server']} unanswered")
for e in errs:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
# a dispatcher that cannot start is recorded, the run goes on and exits 1
"$ROOT/scripts/bench-servers" --dsb "$DSB" --dispatch nosuch,cpu --phases unloaded --settings int8:64:1:10 \
    --unloaded-requests 20 --unloaded-warmup 0 --drain 5 --out "$tmp/c.json" >"$tmp/c.md" 2>"$tmp/c.err"
rc=$?
[ "$rc" -eq 1 ] && ok || bad "a dispatcher that does not start: exit $rc, want 1"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = {x["server"]: x for x in d["servers"]}
errs = []
if "did not start" not in (s.get("nosuch", {}).get("error") or ""):
    errs.append("nosuch: no \"did not start\" error: %s" % s.get("nosuch"))
if s.get("cpu", {}).get("error") is not None:
    errs.append("cpu server: error %s" % s.get("cpu"))
rows = d.get("rows", [])
if len(rows) != 1:
    errs.append("%d rows, want 1: %s" % (len(rows), rows))
else:
    ld = ((rows[0].get("client") or {}).get("load") or {})
    if ld.get("lost") != 0 or ld.get("ok", 0) < 20:
        errs.append("cpu row: lost %s ok %s; row %s" % (ld.get("lost"), ld.get("ok"), rows[0]))
for e in errs:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
' "$tmp/c.json" && ok || { bad "failed dispatcher not recorded as such (above); driver stderr:"; cat "$tmp/c.err" >&2; }
# bad input: a clear message and exit status 2
for args in "--grid huge" "--rates 10x" "--settings int4:64:8:50" "--windows 0" "--bogus" \
    "--dispatch Gpu" "--variant nolabel" "--phases unloaded,warm"; do
    # shellcheck disable=SC2086
    "$ROOT/scripts/bench-servers" --dsb "$DSB" $args >/dev/null 2>"$tmp/e"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "bench-servers: .*\(expected\|unknown\|missing\)" "$tmp/e"; then ok; else
        bad "bench-servers $args: exit $rc: $(cat "$tmp/e")"; fi
done
python3 "$ROOT/bench/servers_tables.py" "$tmp/tables.md" >/dev/null 2>"$tmp/e"
[ $? -eq 1 ] && grep -q "servers_tables.py" "$tmp/e" && ok || bad "servers_tables.py on a non-JSON file"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
