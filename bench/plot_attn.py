#!/usr/bin/env python3
"""Plots of `dak bench attn --json` runs: plot_attn.py OUT_PREFIX RUN.json [RUN.json ...]
   OUT_PREFIX-ratio.png: effective bandwidth (KV bytes / time) against the offload ratio, one panel per
                         (batch, len): the split kernel, the bound C / max(rC/B_h, (1-r)C/B_g), prefetch
   OUT_PREFIX-congestion.png: the congestion sweep (host CTAs x window), when a run has one"""
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from jsonio import load_json


def main():
    if len(sys.argv) < 3:
        print("usage: plot_attn.py OUT_PREFIX RUN.json [RUN.json ...]", file=sys.stderr)
        return 2
    prefix = sys.argv[1]
    points, cong = [], []
    for path in sys.argv[2:]:
        d = load_json(path)
        model = f'{d.get("model", "?")} {d.get("heads", "?")}/{d.get("kv_heads", "?")} heads'
        for p in d.get("points", []):
            points.append((model, p))
        cong += d.get("congestion", []) or []
    if points:
        panels = defaultdict(list)
        for model, p in points:
            panels[(model, p["batch"], p["len"])].append(p)
        keys = sorted(panels)
        cols = min(3, len(keys))
        rows = (len(keys) + cols - 1) // cols
        fig, axs = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
        for ax, key in zip(axs.flat, keys):
            ps = sorted(panels[key], key=lambda p: p["ratio"])
            r = [100 * p["ratio"] for p in ps]
            ax.plot(r, [p["bound_gbs"] for p in ps], "k:", label="bound")
            ax.plot(r, [p["split_eb_gbs"] for p in ps], "o-", label="split attention")
            ax.plot(r, [p["prefetch_eb_gbs"] for p in ps], "x--", label="prefetch, then all-HBM")
            ax.set_xscale("symlog", linthresh=1)
            ax.set_yscale("log")
            ax.set_title(f"{key[0]}, batch {key[1]}, len {key[2]}", fontsize=8)
            ax.set_xlabel("offload ratio r (%)")
            ax.set_ylabel("GB/s of KV")
            ax.legend(fontsize=6)
        for ax in list(axs.flat)[len(keys):]:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(prefix + "-ratio.png", dpi=110)
    if cong:
        ctas = sorted({c["host_ctas"] for c in cong})
        wins = sorted({c["window"] for c in cong})
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for w in wins:
            cs = sorted((c for c in cong if c["window"] == w), key=lambda c: c["host_ctas"])
            ax.plot([c["host_ctas"] for c in cs], [c["split_eb_gbs"] for c in cs], "o-", label=f"window {w}")
        c0 = cong[0]
        ax.set_title(f'congestion: batch {c0["batch"]}, len {c0["len"]}, {c0["batch_host"]} entries in host memory',
                     fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ctas)
        ax.set_xticklabels([str(c) for c in ctas])
        ax.set_xlabel("SMs reading host memory")
        ax.set_ylabel("GB/s of KV")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(prefix + "-congestion.png", dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
