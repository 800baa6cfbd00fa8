#!/usr/bin/env python3
"""Markdown tables of `scripts/bench-servers` JSON beside the paper's figures.

usage: servers_tables.py JSON [--map LABEL=PAPER_SERVER ...]

Tables V (unloaded RTT over the 19-setting grid), VI (residence split of the
reference request), IX (closed loop 1-64), X (open loop Poisson), the client's
ceiling, and per server the CPU cores busy and p99(highest load) / p99(unloaded).
Python 3 standard library only.  Our servers are set beside the paper's by
dispatcher name: launch -> "launch, tuned", proxy -> "proxy, tuned", gpu ->
"GPUNetIO" (--map overrides, e.g. --map gpu-1='GPUNetIO, per-reply send').
"""
import math
import sys
from jsonio import load_json

# ---- the paper's figures: seed 000, Sec. VII-D/VII-F (RTX PRO 6000 server, GH200 client,
# 400 GbE back to back; "default"/"tuned" host states of Sec. VI-A) ---------------------------
PAPER_SERVERS = ["launch, default", "proxy, default", "launch, tuned", "proxy, tuned", "GPUNetIO"]

# Table V: unloaded RTT (closed loop 1, 100,000 requests), client-measured, us: per setting
# (format, n, B, K) the (p50, p99) of each server in PAPER_SERVERS order.
PAPER_TABLE_V = {
    ("int8", 64, 8, 50): [(71.7, 78.3), (73.9, 80.8), (67.7, 70.6), (70.9, 75.6), (62.1, 65.1)],
    ("int8", 64, 8, 100): [(110.4, 121.3), (113.5, 208.2), (106.6, 108.9), (110.0, 114.5), (101.6, 103.5)],
    ("int8", 64, 8, 200): [(283.1, 295.0), (278.4, 292.8), (182.9, 192.1), (188.5, 192.9), (181.4, 183.5)],
    ("int8", 64, 8, 400): [(422.0, 442.1), (436.8, 449.9), (338.3, 341.1), (345.5, 350.0), (340.8, 343.8)],
    ("int8", 128, 8, 50): [(109.9, 115.3), (108.6, 114.9), (104.5, 107.4), (104.7, 109.1), (95.9, 98.1)],
    ("int8", 128, 8, 100): [(183.2, 188.4), (264.8, 280.6), (178.5, 180.8), (175.6, 180.3), (166.4, 168.2)],
    ("int8", 128, 8, 200): [(407.0, 418.9), (406.5, 420.9), (313.8, 316.4), (314.4, 319.3), (307.1, 310.4)],
    ("int8", 128, 8, 400): [(680.5, 692.2), (685.6, 700.7), (586.5, 590.3), (595.6, 600.5), (588.0, 590.6)],
    ("int8", 192, 8, 50): [(245.0, 259.4), (245.2, 260.4), (154.2, 157.6), (155.2, 160.1), (146.4, 149.3)],
    ("int8", 192, 8, 100): [(357.6, 371.5), (364.7, 377.0), (266.0, 270.0), (271.5, 276.4), (262.8, 265.7)],
    ("int8", 192, 8, 200): [(591.0, 603.0), (595.8, 610.1), (498.4, 502.2), (505.0, 509.8), (500.2, 504.2)],
    ("int8", 192, 8, 400): [(1051.3, 1067.6), (1063.3, 1077.1), (958.1, 967.9), (971.1, 976.3), (959.8, 964.4)],
    ("int8", 128, 1, 100): [(96.9, 102.2), (94.1, 100.2), (92.6, 95.8), (90.2, 94.6), (82.9, 86.8)],
    ("int8", 128, 32, 100): [(601.7, 615.4), (596.2, 626.4), (510.5, 513.4), (507.0, 529.3), (500.4, 525.9)],
    ("pm1", 64, 8, 100): [(108.3, 174.2), (103.2, 109.4), (104.4, 107.2), (100.0, 104.3), (92.1, 94.7)],
    ("pm1", 128, 8, 100): [(217.1, 234.3), (220.9, 236.8), (129.4, 132.5), (130.6, 135.0), (124.6, 130.1)],
    ("pm1", 256, 8, 100): [(306.0, 320.3), (304.6, 320.6), (215.7, 219.0), (215.3, 220.1), (206.8, 210.5)],
    ("pm1", 512, 8, 100): [(541.1, 555.8), (527.8, 550.2), (450.9, 453.9), (437.0, 451.5), (431.5, 447.4)],
    ("ternary", 256, 8, 100): [(345.6, 358.6), (346.5, 363.1), (252.7, 256.2), (256.3, 263.3), (249.6, 255.5)],
}

# Table VI: the reference request (int8 n=128 B=8 K=100), us, p50/p99 of
# queue, solve, server I/O (baselines: recv()..sendto() minus solve; GPUNetIO: transmit wait),
# residual (RTT minus recorded residence), RTT.
PAPER_TABLE_VI = {
    "launch, default": [(0.0, 0.0), (151.7, 152.0), (16.1, 17.0), (15.5, 20.5), (183.2, 188.4)],
    "proxy, default": [(0.0, 0.0), (152.6, 155.0), (11.3, 14.8), (101.1, 115.9), (264.8, 280.6)],
    "launch, tuned": [(0.0, 0.0), (151.7, 152.0), (16.1, 17.0), (10.7, 12.6), (178.5, 180.8)],
    "proxy, tuned": [(0.0, 0.0), (152.9, 155.4), (12.0, 15.5), (10.5, 12.5), (175.6, 180.3)],
    "GPUNetIO": [(2.0, 2.1), (149.9, 151.1), (0.8, 2.0), (13.5, 15.7), (166.4, 168.2)],
}

# Table IX: closed loop, reference request: window -> (kreq/s, residence p50, p99, RTT p50, p99, p99.9)
PAPER_TABLE_IX = {
    "launch, default": {1: (5.5, 167.8, 168.8, 183.2, 188.4, 197.6), 4: (21.4, 161.3, 169.8, 178.6, 278.7, 324.1),
                        16: (24.0, 162.6, 166.5, 667.0, 765.0, 772.6), 64: (24.1, 162.4, 166.4, 2658.7, 2760.1, 2772.7)},
    "proxy, default": {1: (3.8, 163.9, 168.2, 264.8, 280.6, 300.2), 4: (20.4, 163.4, 172.0, 178.9, 293.5, 322.3),
                       16: (66.6, 167.4, 198.2, 237.1, 349.5, 440.6), 64: (160.0, 175.4, 223.6, 416.1, 548.1, 619.3)},
    "launch, tuned": {1: (5.7, 167.8, 168.7, 178.5, 180.8, 184.4), 4: (22.7, 162.0, 170.2, 175.9, 184.8, 190.2),
                      16: (24.4, 162.0, 165.6, 654.3, 661.9, 665.7), 64: (24.4, 162.0, 165.7, 2618.3, 2629.5, 2635.2)},
    "proxy, tuned": {1: (5.7, 164.9, 169.3, 175.6, 180.3, 186.5), 4: (22.9, 163.2, 168.2, 174.0, 180.0, 194.0),
                     16: (91.3, 162.5, 182.8, 174.2, 194.6, 204.3), 64: (339.1, 168.9, 198.1, 185.7, 215.7, 223.9)},
    "GPUNetIO": {1: (6.0, 152.7, 154.0, 166.4, 168.2, 177.0), 4: (23.9, 153.4, 156.0, 167.2, 170.2, 178.1),
                 16: (95.4, 153.1, 174.4, 166.9, 188.5, 196.2), 64: (363.1, 155.2, 178.9, 174.5, 198.8, 205.4)},
    "GPUNetIO, per-reply send": {1: (5.9, 152.9, 154.3, 168.6, 172.4, 178.2), 4: (23.6, 153.3, 154.7, 169.2, 173.7, 187.3),
                                 16: (94.2, 152.6, 171.7, 169.1, 188.6, 199.0), 64: (326.5, 165.8, 195.7, 191.4, 221.5, 268.6)},
}

# Table X: open loop, Poisson, reference request: offered kreq/s ->
# (achieved kreq/s, lost %, residence p50, p99, RTT p50, p99, p99.9).  GPUNetIO and tuned proxy at
# 400-800: medians over repeated runs (Table XI).  At 700/800 offered the client emitted 596-681.
PAPER_TABLE_X = {
    "launch, default": {10: (10.1, 0.0, 161.1, 174.4, 249.8, 425.8, 549.6), 50: (24.1, 51.8, 162.0, 166.2, 11844.4, 12397.1, 12507.5),
                        100: (23.9, 76.0, 162.1, 166.6, 11984.0, 12352.3, 12433.8), 200: (23.6, 88.0, 162.2, 166.5, 11918.4, 12185.4, 12246.8),
                        400: (23.0, 94.0, 162.3, 166.7, 11887.1, 12099.1, 12131.7), 800: (22.5, 96.1, 162.8, 167.4, 11898.8, 12124.2, 12152.1)},
    "proxy, default": {10: (10.1, 0.0, 163.2, 188.9, 180.4, 387.8, 501.7), 50: (50.2, 0.0, 175.1, 220.3, 592.5, 1479.1, 1631.9),
                       100: (100.5, 0.0, 178.0, 224.8, 587.2, 1072.8, 1181.6), 200: (200.9, 0.0, 185.4, 237.6, 474.5, 742.8, 795.0),
                       400: (401.5, 0.0, 208.5, 290.8, 481.4, 636.9, 691.2), 800: (499.2, 27.5, 334.8, 494.1, 959.1, 1169.2, 1205.0)},
    "launch, tuned": {10: (10.1, 0.0, 160.9, 170.0, 172.3, 264.1, 315.7), 50: (24.3, 51.3, 161.6, 165.0, 11467.3, 11589.9, 11600.4),
                      100: (24.2, 75.7, 161.8, 165.2, 11504.1, 11608.7, 11618.8), 200: (23.9, 87.8, 161.7, 165.7, 11544.8, 11617.6, 11621.7),
                      400: (23.4, 93.9, 161.8, 165.6, 11585.3, 11629.4, 11635.8), 800: (22.8, 96.1, 161.8, 165.7, 11598.5, 11646.0, 11650.1)},
    "proxy, tuned": {10: (10.1, 0.0, 162.9, 176.7, 173.6, 188.1, 201.4), 50: (50.3, 0.0, 161.6, 185.9, 172.9, 197.3, 204.5),
                     100: (100.5, 0.0, 162.2, 188.3, 174.2, 200.5, 207.2), 200: (201.0, 0.0, 164.5, 193.3, 178.4, 208.1, 215.2),
                     400: (401.8, 0.0, 173.4, 207.6, 192.6, 229.0, 242.3), 600: (602.4, 0.0, 207.0, 264.4, 239.8, 327.0, 363.0),
                     700: (627.9, 0.0, 222.1, 287.4, 263.2, 381.2, 614.0), 800: (641.6, 0.0, 235.2, 316.8, 288.3, 608.5, 699.1)},
    "GPUNetIO": {10: (10.1, 0.0, 153.4, 156.8, 166.7, 171.2, 178.3), 50: (50.3, 0.0, 153.1, 166.6, 166.5, 180.8, 195.6),
                 100: (100.5, 0.0, 153.3, 178.2, 167.7, 193.0, 200.1), 200: (201.0, 0.0, 154.4, 178.7, 170.9, 195.7, 202.4),
                 400: (401.9, 0.0, 156.2, 183.6, 177.8, 207.0, 213.7), 600: (602.5, 0.0, 159.0, 186.1, 188.1, 215.8, 235.3),
                 700: (628.2, 0.0, 159.0, 185.7, 188.8, 423.5, 508.3), 800: (622.5, 0.0, 158.7, 180.1, 188.6, 217.9, 222.9)},
    "GPUNetIO, per-reply send": {10: (10.1, 0.0, 153.4, 160.6, 169.1, 176.9, 195.3), 50: (50.3, 0.0, 152.9, 177.7, 169.5, 194.6, 203.7),
                                 100: (100.5, 0.0, 153.4, 180.5, 171.4, 199.0, 206.7), 200: (201.0, 0.0, 157.3, 186.0, 178.2, 209.1, 218.8),
                                 400: (401.5, 0.0, 249.9, 484.9, 311.5, 537.0, 564.6), 800: (333.7, 40.9, 23323.4, 24793.2, 24307.5, 25902.0, 25946.6)},
}
PAPER_CLIENT_CEILING = "596-681 kreq/s emitted at 700-800 offered (tuned GH200 client, one send thread, Sec. VI-C)"
DEFAULT_MAP = {"launch": "launch, tuned", "proxy": "proxy, tuned", "gpu": "GPUNetIO"}
REF = ("int8", 128, 8, 100)


def f(v, d=1):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:.{d}f}"


def pair(a, b, d=1):
    return f"{f(a, d)} / {f(b, d)}"


def load(row):
    c = row.get("client") or {}
    return c.get("load") or {}


def setting_key(row):
    s = row["setting"]
    return (s["format"], int(s["n"]), int(s["B"]), int(s["K"]))


def setting_name(k):
    return f"{k[0]} n={k[1]} B={k[2]} K={k[3]}"


def lost_pct(ld):
    sent = ld.get("sent") or 0
    return 100.0 * ld.get("lost", 0) / sent if sent else None


def overloaded(ld):
    return (ld.get("by_status") or {}).get("overloaded", 0)


def clean(row):
    """answered completely: the client ran, nothing lost, nothing refused"""
    ld = load(row)
    return bool(ld) and row.get("client_exit") == 0 and ld.get("lost", 1) == 0 and overloaded(ld) == 0 \
        and ld.get("ok", 0) > 0


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    path, mapping = None, dict(DEFAULT_MAP)
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--map":
            if i + 1 >= len(args) or "=" not in args[i + 1]:
                print("servers_tables.py: --map: expected LABEL=PAPER_SERVER", file=sys.stderr)
                return 2
            lab, ps = args[i + 1].split("=", 1)
            if ps not in PAPER_TABLE_IX:
                print(f"servers_tables.py: --map: unknown paper server '{ps}', expected one of "
                      + ", ".join(PAPER_TABLE_IX), file=sys.stderr)
                return 2
            mapping[lab] = ps
            i += 2
        elif a.startswith("-"):
            print(f"servers_tables.py: unknown option '{a}'", file=sys.stderr)
            return 2
        elif path is None:
            path = a
            i += 1
        else:
            print(f"servers_tables.py: unexpected argument '{a}'", file=sys.stderr)
            return 2
    try:
        d = load_json(path)
    except (OSError, ValueError) as e:
        print(f"servers_tables.py: {path}: {e}", file=sys.stderr)
        return 1
    if d.get("tool") != "bench-servers" or not isinstance(d.get("rows"), list):
        print(f"servers_tables.py: {path}: not a bench-servers JSON file", file=sys.stderr)
        return 1
    rows = d["rows"]
    cfg = d.get("config", {})
    ref = tuple(cfg.get("reference", "int8:128:8:100").split(":"))
    ref = (ref[0], int(ref[1]), int(ref[2]), int(ref[3])) if len(ref) == 4 else REF
    labels = []
    for s in d.get("servers", []):
        if s["server"] != "ceiling" and s["server"] not in labels:
            labels.append(s["server"])
    for r in rows:
        if r["phase"] != "ceiling" and r["server"] not in labels:
            labels.append(r["server"])
    disp = {s["server"]: s["dispatch"] for s in d.get("servers", [])}
    pmap = {lab: mapping.get(lab, mapping.get(disp.get(lab, ""), None)) for lab in labels}

    def paper_of(lab):
        return pmap.get(lab)

    print(f"# dsb serve under load — {d.get('date', '?')}, host {d.get('host', '?')}\n")
    print(f"dsb: `{d.get('dsb')}`; phases {cfg.get('phases')}; reference {setting_name(ref)}; "
          f"unloaded {cfg.get('unloaded_requests')} requests after {cfg.get('unloaded_warmup')} warm-up; "
          f"loaded points ~{cfg.get('point_seconds')} s after {cfg.get('warmup')} warm-up "
          f"(requests in [{cfg.get('min_requests')}, {cfg.get('max_requests')}]).  "
          "Paper: seed 000, RTX PRO 6000 server, GH200 client, 400 GbE; ours: one machine over UDP loopback.\n")
    for s in d.get("servers", []):
        if s.get("error"):
            print(f"**{s['server']}** (`--dispatch {s['dispatch']}`): {s['error']}\n")
    bad = [r for r in rows if r.get("client_exit") not in (0, None) or r.get("error")]
    for r in bad:
        print(f"- failed point: {r['server']} {r['phase']} {setting_name(setting_key(r))} "
              f"{r['mode']} {r.get('outstanding') or r.get('offered_rate')}: {r.get('error')}")
    if bad:
        print()

    # ---- Table V --------------------------------------------------------------------------
    un = [r for r in rows if r["phase"] == "unloaded"]
    if un:
        keys = []
        for r in un:
            k = setting_key(r)
            if k not in keys:
                keys.append(k)
        papers = [p for p in ["launch, tuned", "proxy, tuned", "GPUNetIO"]]
        head = ["setting"] + [f"{lab} p50 / p99" for lab in labels] + [f"paper {p}" for p in papers]
        body = []
        for k in keys:
            cells = [setting_name(k) + (" (ref)" if k == ref else "")]
            for lab in labels:
                rr = [r for r in un if r["server"] == lab and setting_key(r) == k]
                ld = load(rr[-1]) if rr else {}
                c = pair(ld.get("rtt_p50_us"), ld.get("rtt_p99_us")) if ld else "—"
                if ld and not clean(rr[-1]):
                    st = {kk: v for kk, v in (ld.get("by_status") or {}).items() if v and kk != "ok"}
                    c += f" (lost {ld.get('lost')}{', ' + str(st) if st else ''})"
                cells.append(c)
            pv = PAPER_TABLE_V.get(k)
            for p in papers:
                cells.append(pair(*pv[PAPER_SERVERS.index(p)]) if pv else "—")
            body.append(cells)
        print("## Table V analog: unloaded RTT (closed loop 1), µs, client-measured\n")
        print(table(head, body) + "\n")

    # ---- Table VI -------------------------------------------------------------------------
    def ref_unloaded(lab):
        rr = [r for r in rows if r["server"] == lab and r["phase"] == "unloaded" and setting_key(r) == ref]
        rr += [r for r in rows if r["server"] == lab and r["phase"] == "closed" and r.get("outstanding") == 1]
        rr = [r for r in rr if load(r)]
        return rr[0] if rr else None

    body = []
    for lab in labels:
        r = ref_unloaded(lab)
        if not r:
            continue
        ld = load(r)
        body.append([lab, pair(ld.get("queue_p50_us"), ld.get("queue_p99_us")),
                     pair(ld.get("solve_p50_us"), ld.get("solve_p99_us")),
                     pair(ld.get("transmit_p50_us"), ld.get("transmit_p99_us")),
                     pair(ld.get("residual_p50_us"), ld.get("residual_p99_us")),
                     pair(ld.get("rtt_p50_us"), ld.get("rtt_p99_us"))])
    if body:
        if ref == REF:
            for p, v in PAPER_TABLE_VI.items():
                body.append([f"paper: {p}"] + [pair(*x) for x in v])
        print(f"## Table VI analog: residence split of the reference request ({setting_name(ref)}), "
              "closed loop 1, µs p50 / p99\n")
        print("queue, solve, transmit: the server's stamps (t_queue, t_solve, t_tx in RESULT); "
              "rest = RTT − (queue + solve + transmit): network, host stack and the client.  "
              "Paper's third column is \"server I/O\" (baselines: recv()..sendto() minus the solve).\n")
        print(table(["server", "queue", "solve", "transmit", "rest (network/host)", "RTT"], body) + "\n")

    # ---- Table IX -------------------------------------------------------------------------
    body = []
    for lab in labels:
        p = paper_of(lab)
        for r in [r for r in rows if r["server"] == lab and r["phase"] == "closed"]:
            ld, w = load(r), r.get("outstanding")
            pv = PAPER_TABLE_IX.get(p, {}).get(w) if p else None
            body.append([lab, w, f(ld.get("achieved_rate", 0) / 1e3 if ld else None, 2),
                         pair(ld.get("residence_p50_us"), ld.get("residence_p99_us")),
                         f"{pair(ld.get('rtt_p50_us'), ld.get('rtt_p99_us'))} / {f(ld.get('rtt_p999_us'))}",
                         ld.get("lost", "—"), f(r.get("server_cpu_cores"), 2),
                         f"{p}: {f(pv[0])} kreq/s, {pair(pv[3], pv[4])}" if pv else "—"])
    if body:
        print(f"## Table IX analog: closed loop, {setting_name(ref)}\n")
        print(table(["server", "outstanding", "kreq/s", "residence p50 / p99 µs", "RTT p50 / p99 / p99.9 µs",
                     "lost", "server cores busy", "paper (kreq/s, RTT p50 / p99)"], body) + "\n")

    # ---- Table X --------------------------------------------------------------------------
    body = []
    for lab in labels:
        p = paper_of(lab)
        for r in [r for r in rows if r["server"] == lab and r["phase"] == "open"]:
            ld, o = load(r), r.get("offered_rate") or 0
            pv = PAPER_TABLE_X.get(p, {}).get(round(o / 1e3)) if p and o % 1000 == 0 else None
            body.append([lab, f(o / 1e3, 2), f(ld.get("emitted_rate", 0) / 1e3 if ld else None, 2),
                         f(ld.get("achieved_rate", 0) / 1e3 if ld else None, 2), f(lost_pct(ld) if ld else None, 2),
                         overloaded(ld) if ld else "—",
                         pair(ld.get("residence_p50_us"), ld.get("residence_p99_us")),
                         f"{pair(ld.get('rtt_p50_us'), ld.get('rtt_p99_us'))} / {f(ld.get('rtt_p999_us'))}",
                         f(r.get("server_cpu_cores"), 2),
                         f"{p}: {f(pv[0])} kreq/s, lost {f(pv[1])}%, {pair(pv[4], pv[5])}" if pv else "—"])
    if body:
        print(f"## Table X analog: open loop, Poisson arrivals, {setting_name(ref)}\n")
        print("Emitted: the client's own send rate (its send timestamps); achieved: OK replies per second; "
              "lost: unanswered after the drain.\n")
        print(table(["server", "offered kreq/s", "emitted", "achieved", "lost %", "overloaded",
                     "residence p50 / p99 µs", "RTT p50 / p99 / p99.9 µs", "server cores busy",
                     "paper (achieved, lost, RTT p50 / p99)"], body) + "\n")

    # ---- the client's ceiling ---------------------------------------------------------------
    ce = [r for r in rows if r["phase"] == "ceiling" and load(r)]
    if ce:
        body = []
        for r in ce:
            ld = load(r)
            body.append([f(r["offered_rate"] / 1e3, 1), f(ld.get("emitted_rate", 0) / 1e3, 1),
                         f(ld.get("achieved_rate", 0) / 1e3, 1), f(lost_pct(ld), 2), overloaded(ld),
                         pair(ld.get("rtt_p50_us"), ld.get("rtt_p99_us")), f(r.get("client_cpu_cores"), 2),
                         f(r.get("server_cpu_cores"), 2)])
        em = max(load(r).get("emitted_rate", 0) for r in ce)
        ok = [r for r in ce if clean(r) and load(r).get("emitted_rate", 0) >= 0.95 * r["offered_rate"]
              and load(r).get("achieved_rate", 0) >= 0.95 * r["offered_rate"]]
        sus = max((r["offered_rate"] for r in ok), default=None)
        print("## The client's own ceiling\n")
        print("Measured against `dsb serve --dispatch cpu` with a request that costs the server almost nothing "
              "(sk n=32, B=1, K=1, no field), open loop at rising rates; the server shares the machine, so "
              "this is a lower bound on the client alone.  Client cores busy: the client process's CPU time "
              "over its whole run (setup and checks included).\n")
        print(table(["offered kreq/s", "emitted", "achieved", "lost %", "overloaded", "RTT p50 / p99 µs",
                     "client cores busy", "server cores busy"], body) + "\n")
        print(f"**Client ceiling: {f(em / 1e3)} kreq/s emitted at most; highest rate sustained in full "
              f"(emitted and achieved ≥ 95% of offered, nothing lost): "
              f"{f(sus / 1e3) + ' kreq/s' if sus else 'none of the rates'}.**  Paper: {PAPER_CLIENT_CEILING}.\n")
    allo = [r for r in rows if r["phase"] in ("open", "ceiling") and load(r)]
    if allo:
        top = max(allo, key=lambda r: load(r).get("emitted_rate", 0))
        print(f"Highest emitted rate in any open-loop run: {f(load(top).get('emitted_rate', 0) / 1e3)} kreq/s "
              f"({top['server']}, {f(top['offered_rate'] / 1e3)} kreq/s offered).\n")

    # ---- per server: cores busy, p99 ratio ------------------------------------------------------
    body = []
    for lab in labels:
        if not any(r["server"] == lab and load(r) for r in rows):
            continue
        r1 = ref_unloaded(lab)
        closed = [r for r in rows if r["server"] == lab and r["phase"] == "closed" and load(r)]
        opn = [r for r in rows if r["server"] == lab and r["phase"] == "open" and load(r)]
        cl1 = [r for r in closed if r.get("outstanding") == 1]
        base = cl1[0] if cl1 else r1
        p99_0 = load(base).get("rtt_p99_us") if base else None
        wmax = max(closed, key=lambda r: r["outstanding"]) if closed else None
        good = [r for r in opn if clean(r)]
        hi = max(good, key=lambda r: load(r).get("achieved_rate", 0)) if good else None
        p99_hi = load(hi).get("rtt_p99_us") if hi else None
        ratio = p99_hi / p99_0 if p99_hi and p99_0 else None
        un_cores = [r.get("server_cpu_cores") for r in rows if r["server"] == lab and r["phase"] == "unloaded"
                    and r.get("server_cpu_cores") is not None]
        p = paper_of(lab)
        pr = None
        if p in PAPER_TABLE_X and p in PAPER_TABLE_IX:
            pc = [o for o, v in PAPER_TABLE_X[p].items() if v[1] == 0.0]
            if pc:
                pr = PAPER_TABLE_X[p][max(pc)][5] / PAPER_TABLE_IX[p][1][4]
                pr = f"{p}: {f(pr, 2)} ({PAPER_TABLE_X[p][max(pc)][5]} at {max(pc)} kreq/s vs {PAPER_TABLE_IX[p][1][4]})"
        body.append([lab, f(sum(un_cores) / len(un_cores), 2) if un_cores else "—",
                     f"{f(wmax.get('server_cpu_cores'), 2)} (W={wmax['outstanding']})" if wmax else "—",
                     f"{f(hi.get('server_cpu_cores'), 2)} ({f(hi['offered_rate'] / 1e3)} kreq/s)" if hi else "—",
                     f(p99_0), f"{f(p99_hi)} ({f(load(hi).get('achieved_rate', 0) / 1e3)} kreq/s)" if hi else "—",
                     f(ratio, 2), pr or "—"])
    if body:
        print("## Per server: CPU cores busy and p99 at the highest load over unloaded p99\n")
        print("Cores busy: the server process's CPU time (utime + stime of all its threads, /proc/PID/stat) "
              "over the wall time of each client run.  Highest load: the open-loop point with the highest "
              "achieved rate at which nothing was lost or refused; unloaded: closed loop 1 at the reference.  "
              "Goal for gpu: ratio ≤ 1.3 (paper: GPUNetIO 217.9 at 800 kreq/s vs 168.2).\n")
        print(table(["server", "cores busy, unloaded grid (mean)", "cores busy, closed max W",
                     "cores busy, highest clean load", "p99 unloaded µs", "p99 highest clean load µs",
                     "ratio", "paper ratio"], body) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
