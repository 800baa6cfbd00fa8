#!/usr/bin/env python3
"""Plots of `dak decode --json` runs: plot_decode.py OUT.png RUN.json [RUN.json ...]
   left:  TPOT against the offload ratio: direct access, the double-buffered prefetch, unified memory (each
          where the run has it), the planner's predicted step (what the bandwidth model says the placement costs)
   right: effective bandwidth (bytes read a step / TPOT) against the ratio"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from jsonio import load_json


def main():
    if len(sys.argv) < 3:
        print("usage: plot_decode.py OUT.png RUN.json [RUN.json ...]", file=sys.stderr)
        return 2
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4))
    for path in sys.argv[2:]:
        d = load_json(path)
        name = d.get("model", path).split("/")[-2] if "/" in d.get("model", "") else d.get("model", path)
        label = f'{name} ({d["layers"]} layers), batch {d["batch"]}'
        rows = sorted(d["rows"], key=lambda r: r["ratio"])
        r = [100 * x["ratio"] for x in rows]
        for mode, style in (("direct", "o-"), ("prefetch", "x--"), ("um", "s-.")):
            if not any(f"tpot_{mode}_s" in x for x in rows):
                continue
            ax_t.plot(r, [1e3 * x.get(f"tpot_{mode}_s", float("nan")) for x in rows], style, label=f"{label}: {mode}")
            ax_e.plot(r, [x.get(f"eb_{mode}_gbs", float("nan")) for x in rows], style, label=f"{label}: {mode}")
        ax_t.plot(r, [1e3 * x["predicted_step_s"] for x in rows], "k:", label=label + ": planner's prediction")
    ax_t.set_xlabel("offload ratio r (% of weight + KV bytes in host memory)")
    ax_t.set_ylabel("TPOT (ms)")
    ax_t.set_yscale("log")
    ax_t.legend(fontsize=6)
    ax_e.set_xlabel("offload ratio r (%)")
    ax_e.set_ylabel("EB = bytes read a step / TPOT (GB/s)")
    ax_e.set_yscale("log")
    ax_e.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
