#!/usr/bin/env bash
# Regenerates docs/perf/planner.md from the recorded H200 profile
# (docs/perf/h200-profile.json): runs the `dak plan` commands quoted in it and
# the planner optimality test, and fills their output into the page.
# usage: scripts/planner_docs.sh [BUILD_DIR]   (default build-planner)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-planner}
D=$B/tools/dak/dak
T=$B/tests/dak/test_planner_opt
P="--profile docs/perf/h200-profile.json"
O=configs/opt-30b/config.json
L=configs/llama-2-7b/config.json
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
$D plan --config $O --batch 8 --prompt 32 --gpu-mem 40GB $P --sweep 10 > $W/A
$D plan --config $O --batch 512 --prompt 32 --ratio 0.02 $P --sweep 10 --sweep-max 0.1 > $W/B
$D plan --config $O --batch 512 --prompt 32 --ratio 0.02 $P --sweep 10 | sed -n '/^ratio/,$p' >> $W/B
$D plan --config $L --batch 512 --prompt 32 --ratio 0.03 $P --sweep 10 --sweep-max 0.1 > $W/C
$D plan --config $L --batch 512 --prompt 32 --ratio 0.03 $P --sweep 10 | sed -n '/^ratio/,$p' >> $W/C
for r in 0.01 0.03 0.1 0.5; do
  echo "== Llama-2-7B batch 512, --ratio $r"
  $D plan --config $L --batch 512 --prompt 32 --ratio $r $P | sed -n '/^plan /,/^greedy speedup/p'
done >> $W/C
$T | tail -3 > $W/T
cat > $W/tmpl <<'PLANNER_TMPL_END'
# dak offload planner: H200 profile and recorded plans

Seed 003, Sec. 4.2.1-4.2.2, Appendix A, Sec. 6.1-6.2 (Fig. 10, Fig. 11). Issue 8.
Code: `include/dak/planner.h` (the model and the argument), `src/dak/planner/`,
`tools/dak/cmd_plan.c`, `tools/dak/cmd_profile.c`, `configs/*/config.json`.

**What is measured and what is predicted.** The profile below is measured on the H200.
Every `dak plan` figure (time per token, EB, greedy vs uniform) is a *prediction of the
operation model* `T_i = max(T_comp, x C/B_h, (1-x) C/B_g)` from that profile; it is not an
end-to-end measurement (the inference engine does not exist yet). The paper's Fig. 11
figures are measurements on GH200.

## 1. Machine profile (`docs/perf/h200-profile.json`)

- Date: 2026-11-30 05:49 UTC. Machine: NVIDIA H200 (132 SMs, 143771 MiB, SM clock max
  1980 MHz), PCIe Gen5 x16 host link, 16-core Xeon VM.
- Command (one device call, 17 s wall, 44 s held): `bash scripts/planner_gpu.sh`, which runs
  `cmake --build ... --target dak` then `dak profile --out $OUT/h200-profile.json --reps 7`
  (medians of 7; 1 GiB pinned buffer, 4 GiB HBM buffer; 11 shapes x 12 token counts).

| path | H200 (measured) | SPEC.md probe | paper: GH200 | paper: RTX PRO 6000 |
| --- | --- | --- | --- | --- |
| host pinned -> kernel, zero-copy 16-B loads (**B_h**) | **51.29 GB/s** (best at 16 blocks) | 51.1 | NVLink-C2C "900 GB/s" (both directions; ~450 one way) | PCIe Gen5, 64 GB/s one way |
| cudaMemcpy H2D / D2H, pinned | 55.41 / 55.30 GB/s | 54.2 / 53.9 | - | - |
| HBM -> kernel, 16-B loads (**B_g**) | **4456.8 GB/s** (1056 blocks) | 4470 | HBM3 4.0 TB/s | GDDR7 1.8 TB/s |
| bf16 GEMM (cuBLAS), best of the table | 815.3 TFLOP/s | ~790 | - | - |
| memory-bound turning point x* = B_h/(B_h+B_g) | **0.0114** | | 450/4450 = 0.10 (Fig. 1 peaks at x = 0.1) | 64/1864 = 0.034 |

bf16 GEMM rates per shape, TFLOP/s, "HBM / used" (HBM: the plain `cublasGemmEx`, weights
[m x k] streamed from HBM; used: max of that and the same FLOPs with a 16 MiB weight slice
kept in L2 and broadcast over a strided batch). The 4096 x 4096 matrix (32 MiB) fits in the
60 MB L2, so its "HBM" column is really L2.

@@GEMM@@

How the planner turns this into T_comp (`dak_profile_gemm_rate`): a table entry counts as a
compute figure only when its time is at least 1.5x the time to stream the weights at B_g;
otherwise (small n: cuBLAS waits for memory) the shape's best rate is used. That keeps T_comp
on the roofline: the H200 balance is 815/4.457 = 183 FLOP/byte and a decode GEMM has
AI = n FLOP/byte, so n <= 128 comes out memory-bound and n >= 256 compute-bound. Example,
OPT-30B q_proj (7168 x 7168) at n = 512: 2 x 7168^2 x 512 / 683.8 TFLOP/s = 76.9 us against
C/B_g = 102.76 MB / 4457 GB/s = 23.1 us, so x_b = T_comp B_h / C = 0.0384.

## 2. Footprint arithmetic vs the paper's tables (Fig. 10 OPT-30B, Fig. 14 OPT-6.7B)

KV cache = 2 x layers x B x (prompt + 32) x hidden x 2 bytes; checked to the byte in
`tests/dak/test_planner_model.c`.

| model | batch, prompt | KV ours | KV paper | weights ours | weights paper |
| --- | --- | --- | --- | --- | --- |
| OPT-30B | 8, 32 | 0.705 GB | 0.7 GB | 59.95 GB (29,974,540,288 params) | 55.6 GB |
| OPT-30B | 32, 1024 | 46.506 GB | 46.51 GB | | |
| OPT-30B | 128, 256 | 50.734 GB | 50.73 GB | | |
| OPT-30B | 128, 512 | 95.831 GB | 95.83 GB | | |
| OPT-30B | 128, 1024 | 186.026 GB | 186.03 GB | | |
| OPT-6.7B | 8, 32 / 256, 1024 / 512, 512 / 512, 1024 | 0.268 / 141.734 / 146.029 / 283.468 GB | 0.27 / 141.73 / 146.03 / 283.47 | 13.317 GB | 13.3 GB |
| Llama-2-7B | 512, 32 | 17.180 GB | - | 13.477 GB (6,738,415,616 params) | - |

The KV rows match all nine printed values. OPT-30B weights: fp16 parameters are 59.95 GB
(55.83 GiB); the paper prints 55.6 GB, so its ratios differ from ours below.
Global ratio with `--gpu-mem 96GB` (GH200's HBM size), `dak plan ... --gpu-mem 96GB`:

| batch, prompt | host bytes needed (ours) | ratio of footprint (ours) | paper's ratio |
| --- | --- | --- | --- |
| 8, 32 | 0 (greedy still offloads 0.18 GB to gain bandwidth, phase 1) | 0% | 0% |
| 32, 1024 | 10.467 GB | 9.83% | 6% |
| 128, 256 | 14.731 GB | 13.30% | 10% |
| 128, 512 | 59.828 GB | 38.39% | 37% |
| 128, 1024 | 150.023 GB | 60.98% | 60% |

With the paper's 55.6 GB of weights and 96 GB the ratios come out 6.0 / 9.7 / 36.6 / 60.3%,
matching its column: the difference is only the weight total.

## 3. Recorded plans (H200 profile)

Commands (build dir `build-planner`, `P="--profile docs/perf/h200-profile.json"`):

```
dak plan --config configs/opt-30b/config.json --batch 8   --prompt 32 --gpu-mem 40GB $P --sweep 10
dak plan --config configs/opt-30b/config.json --batch 512 --prompt 32 --ratio 0.02 $P --sweep 10 --sweep-max 0.1
dak plan --config configs/opt-30b/config.json --batch 512 --prompt 32 --ratio 0.02 $P --sweep 10
dak plan --config configs/llama-2-7b/config.json --batch 512 --prompt 32 --ratio 0.03 $P --sweep 10 --sweep-max 0.1
dak plan --config configs/llama-2-7b/config.json --batch 512 --prompt 32 --ratio R $P   (R = 0.01 0.03 0.1 0.5)
```

### OPT-30B, batch 8, length 64, `--gpu-mem 40GB`

```
@@A@@
```

Batch 8 is memory-bound everywhere (AI = 8 << 183), so every operation has the same turning
point x* = 0.0114 and past it the same cost per byte (1/B_h): greedy and uniform coincide
(Theorem 3) except below 1.1%, and both fall to B_h = 51 GB/s at full offload. The table
rounds to whole 128-row tiles per layer, spread over the 48 layers ("19|20x5": 19 tiles in
each layer, 20 in five of them).

### OPT-30B, batch 512, length 64

```
@@B@@
```

### Llama-2-7B, batch 512, length 64

```
@@C@@
```

## 4. Against the paper (Fig. 11, GH200, batch 512)

The paper measures greedy 1.5x over uniform below 60% offload, converging above. The model
here, on the H200 profile, predicts a greedy advantage of at most **1.14x (OPT-30B, at 2%)**
and **1.38x (Llama-2-7B, at 3-4%)**; OPT-30B is within 1.6% of uniform from 4% on, Llama-2-7B
falls to 1.085x at 10% and 1.009x at 50%. Why the window is so much narrower here, from first
principles:

- Region 1 ends at x* = B_h/(B_h+B_g): 51.3/(51.3+4457) = 1.1% on the H200 over PCIe, vs
  450/(450+4000) = 10% on GH200 over NVLink-C2C (900 GB/s both ways, 4.0 TB/s HBM3).
- Region 2 ends at each compute-bound GEMM's threshold x_b = T_comp B_h / C. For a decode GEMM
  T_comp/C = n / rate, so x_b = n B_h / rate = 512 x 51.3e9 / 684e12 = 3.8% on the H200; with
  GH200's ~9x larger B_h (and an H100-class ~660 TFLOP/s) the same GEMM has x_b ~ 35%. Greedy
  wins only while the budget fits in sum_i C_i x_i* (Theorem 2); above it every operation is
  host-bound and any split is optimal (Theorem 3), so the curves meet.
- Llama-2-7B gains more than OPT-30B because its KV cache (memory-bound attention) is a larger
  share of the bytes (17.2 of 30.7 GB vs 45.1 of 105 GB) and the uniform plan pushes all of it
  past x*. Its untied token embedding is read only B/vocab of its rows per step, so the greedy
  moves all 262 MB of it to the host for almost nothing; that alone is the 4.6 ms
  (0.9 x 262 MB / 51.3 GB/s) that keeps Llama's greedy ahead at 10%.
- On the paper's PCIe machine (RTX PRO 6000: 64 GB/s one way, GDDR7 1.8 TB/s) x* = 3.4% and
  x_b = n B_h / rate is roughly 5-10% at n = 512, so its window sits between ours and GH200's.

## 5. Exactness of the greedy (tests)

`tests/dak/test_planner_opt.c` (CPU, 0.1 s): 3000 random equal-unit sets and 8000 random
mixed-unit sets (2-4 operations, memory/mixed/compute-bound, 1-2 instances, partial last
tiles, read fractions 1 or 1/4), exhaustive search over every whole-unit placement (no even-spread
assumption):

```
@@T@@
```

Greedy equals the optimum whenever the optimum needs no unit that costs time (phases 1-2:
proven, 100% of cases) or the units have equal size (100%). When costly units are needed and
units differ in size, covering the budget with whole units is a knapsack. The plain
cheapest-per-byte greedy was exact in 87% of those cases and once 3.5x off (a single huge unit
that was cheapest per byte but overshot); charging a unit only for the bytes still missing, the
best "greedy prefix + one operation" ending and a local drop/trade pass bring it to the figures
above (worst case 6.8% in toy sets where one unit is a third of the plan). The test asserts
exactness in the first two families and a gap of at most one unit's host time otherwise, and
that the uniform plan is never better than the greedy in any case. Partial last tiles are
generated only for operations without repeats: the even spread of a unit count over the layers
is the best split only when an operation's units are equal, which holds for every repeated
matrix of the three models (hidden and ffn sizes are multiples of 128). On the real models one
unit is at most a 128 x 28672 x 2 = 7.3 MB tile or one batch entry's KV (1.8-30 MB), 0.04-0.6 ms
at B_h, against plans of 13-3000 ms.
PLANNER_TMPL_END
python3 - "$W" > docs/perf/planner.md <<'EOF'
import json, sys
w = sys.argv[1]
p = json.load(open('docs/perf/h200-profile.json'))
ns = [8, 32, 128, 256, 512, 1024, 16384]
rows = ['| m x k | ' + ' | '.join(f'n={n}' for n in ns) + ' |', '| --- |' + ' --- |' * len(ns)]
shapes = []
for g in p['gemm']:
    if (g['m'], g['k']) not in shapes:
        shapes.append((g['m'], g['k']))
for s in shapes:
    cells = []
    for n in ns:
        g = [x for x in p['gemm'] if (x['m'], x['k']) == s and x['n'] == n][0]
        cells.append(f"{g['tflops_hbm']:.0f} / {g['tflops']:.0f}")
    rows.append(f'| {s[0]} x {s[1]} | ' + ' | '.join(cells) + ' |')
t = open(w + '/tmpl').read()
t = t.replace('@@GEMM@@', '\n'.join(rows))
for tag in 'ABCT':
    t = t.replace('@@' + tag + '@@', open(w + '/' + tag).read().rstrip('\n'))
sys.stdout.write(t)
EOF
echo "wrote docs/perf/planner.md"
