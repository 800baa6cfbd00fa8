#!/usr/bin/env bash
# CPU test of `dak bench gemm --plan-only`: the split kernel's plans printed and written as JSON without a GPU, and
# its flags' bad values refused. The expected plans follow from plan.c's rules, worked out by hand: 11008x4096 has
# 172 64-row tile rows, fewer than two a CTA on 132 SMs and no tile-aligned count (106..132 neither divides 172 nor is
# divided by it), so at N <= 32 it takes 128-row tiles (86 tile rows), as at N > 32; 7168^2 has 112, which 112 CTAs
# divide, so it keeps 64-row tiles on 112 CTAs up to N = 40 (the 40-row B box of N 33..40); at N = 64 every shape
# takes 128-row tiles, and 7168^2's 56 of them, two CTAs each, are all summed by reduce-scatter.  The kernel:
# k_split_n8 at N <= 8, the offsets consumers at N 9..32 (k_split_nn2 on 128-row tiles), k_split (wgmma) above.
# Those are the split's plans (--whole 0); with whole-K tiles auto (--whole 2, the default) 7168^2's 112 64-row tiles,
# 85 % of the SMs, go to k_whole at r = 0, and 11008x4096 (172 > 132) keeps the split.
# $1: the dak program.
set -u
DAK=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

"$DAK" bench gemm --plan-only --shapes 11008x4096,7168x7168 --n 8,17,40,64 --ratios 0 --whole 0 --json "$tmp/p.json" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q "nothing runs" "$tmp/out"; then ok; else bad "plan-only exit $rc: $(cat "$tmp/err")"; fi
if python3 - "$tmp/p.json" <<'PY'; then ok; else bad "plan JSON"; fi
import json, sys
d = json.load(open(sys.argv[1]))
plans = {(p["M"], p["K"], p["N"]): p for p in d["plans"]}
want = {  # (M, K, N): (bm, HBM tile rows, HBM CTAs or None)
    (11008, 4096, 8): (128, 86, None), (11008, 4096, 17): (128, 86, None), (11008, 4096, 40): (128, 86, None),
    (7168, 7168, 8): (64, 112, 112), (7168, 7168, 17): (64, 112, 112), (7168, 7168, 40): (64, 112, 112),
    (7168, 7168, 64): (128, 56, 112),
}
bad = []
for k, (bm, mt, ctas) in want.items():
    p = plans.get(k)
    if p is None or p["bm"] != bm or p["hbm"]["mtiles"] != mt or (ctas and p["hbm"]["ctas"] != ctas):
        bad.append((k, p and (p["bm"], p["hbm"]["mtiles"], p["hbm"]["ctas"])))
kernels = {(11008, 4096, 8): "k_split_n8", (11008, 4096, 17): "k_split_nn2", (11008, 4096, 40): "k_split",
           (7168, 7168, 17): "k_split_nn", (7168, 7168, 40): "k_split", (7168, 7168, 64): "k_split"}
for k, name in kernels.items():
    if plans.get(k, {}).get("kernel") != name:
        bad.append((k, "kernel", plans.get(k, {}).get("kernel"), name))
if plans.get((7168, 7168, 64), {}).get("hbm", {}).get("rs_tiles") != 56:
    bad.append("7168^2 N 64 rs_tiles")
if d.get("sms") != 132 or len(d["plans"]) != 8:
    bad.append(("sms / count", d.get("sms"), len(d["plans"])))
if bad:
    sys.exit(f"unexpected plans: {bad}")
PY

expect() { # expect STATUS PATTERN -- args...
    local want=$1 pat=$2; shift 3
    "$DAK" bench gemm "$@" --json "$tmp/x.json" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ $got -eq "$want" ] && grep -q -- "$pat" "$tmp/out" "$tmp/err"; then ok; else
        bad "dak bench gemm $* -> $got (want $want), pattern '$pat': $(cat "$tmp/err")"; fi
}
expect 2 "--sms: expected" -- --plan-only --sms 0
expect 2 "--smem: expected" -- --plan-only --smem 0
expect 2 "--pdl: expected" -- --plan-only --pdl 2
expect 2 "--bn24: expected an integer in \[0, 1\], got '2'" -- --plan-only --bn24 2
expect 2 "--bnw: expected an integer in \[0, 1\], got '2'" -- --plan-only --bnw 2
expect 2 "--whole: expected an integer in \[0, 2\], got '3'" -- --plan-only --whole 3
expect 2 "--whole-cl: expected 0 (auto), 1, 2 or 4" -- --plan-only --whole 1 --whole-cl 3
expect 2 "--whole-stages: expected an integer in \[0, 24\], got '25'" -- --plan-only --whole-stages 25
expect 2 "--whole-window: expected an integer in \[0, 24\], got '30'" -- --plan-only --whole-window 30
expect 2 "--whole-swap: expected an integer in \[0, 3\], got '4'" -- --plan-only --whole-swap 4
# --whole-swap: auto (the default) takes k_whole_sw where a CTA's share passes 128 rows (22016 rows on 132 SMs: 168),
# 1 never, 2 also where it does not (4096^2: 32 rows)
expect 0 "k_whole_sw" -- --plan-only --shapes 22016x4096 --n 8 --ratios 0
expect 0 "k_split_n8" -- --plan-only --shapes 22016x4096 --n 8 --ratios 0 --whole-swap 1
expect 0 "k_whole_sw" -- --plan-only --shapes 4096x4096 --n 8 --ratios 0 --whole 1 --whole-swap 2
# 3: over the 64-row tiles as 0 (k_whole_sw where a CTA's share passes 128 rows, the split on 4096x11008); the row
# groups it asks for elsewhere are the caller's (the fixed section's grp-pdl column, the engine's deployments)
expect 0 "k_whole_sw" -- --plan-only --shapes 22016x4096 --n 8 --ratios 0 --whole-swap 3
expect 0 "k_split" -- --plan-only --shapes 4096x11008 --n 32 --ratios 0 --whole-swap 3
expect 1 "whole-K stages do not fit" -- --plan-only --shapes 7168x7168 --n 64 --ratios 0 --whole-stages 24
# --whole 2 (auto, the default): k_whole on 7168^2 at r = 0, the split on 11008x4096 and with host rows; 0 the split
expect 0 "k_whole" -- --plan-only --shapes 7168x7168 --n 8 --ratios 0 --whole 2
expect 0 "k_whole" -- --plan-only --shapes 7168x7168 --n 8 --ratios 0
expect 0 "k_split_nn2" -- --plan-only --shapes 11008x4096 --n 24 --ratios 0
expect 0 "k_split_n8" -- --plan-only --shapes 7168x7168 --n 8 --ratios 2
expect 0 "k_split_n8" -- --plan-only --shapes 7168x7168 --n 8 --ratios 0 --whole 0
# --whole 1: k_whole where it applies (7168^2 N 64: 112 whole-K tiles), the split where not (host rows)
expect 0 "k_whole" -- --plan-only --shapes 7168x7168 --n 64 --ratios 0 --whole 1
expect 0 "k_split" -- --plan-only --shapes 7168x7168 --n 64 --ratios 5 --whole 1
expect 1 "whole_cluster 4 does not divide the 86" -- --plan-only --shapes 11008x4096 --n 32 --ratios 0 --whole 1 --whole-cl 4
expect 1 "shared memory" -- --plan-only --shapes 7168x7168 --n 8 --ratios 0 --smem 16KiB
expect 0 "PDL launches" -- --plan-only --shapes 7168x7168 --n 8 --ratios 0 --pdl 1
expect 2 "--pdl-pre: expected 'none' or an integer in \[0, 24\]" -- --plan-only --pdl-pre nothing
# --pdl-pre none: nothing before the wait, not even the stash N = 1 on the split's 64-row tiles takes otherwise
expect 0 "PDL launches" -- --plan-only --shapes 7168x7168 --n 1 --ratios 0 --pdl 1 --pdl-pre none --whole 0
if python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['plans'][0]; sys.exit(p['hbm_pre'] != 0 or p['hbm_stash'] != 0)" \
    "$tmp/x.json"; then ok; else bad "--pdl-pre none: the plan copies before the wait"; fi
expect 0 "PDL launches" -- --plan-only --shapes 7168x7168 --n 1 --ratios 0 --pdl 1 --whole 0
if python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['plans'][0]; sys.exit(p['hbm_stash'] != 2)" \
    "$tmp/x.json"; then ok; else bad "--pdl-pre auto: the stash of 2 expected"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
