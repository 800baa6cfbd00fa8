#!/usr/bin/env python3
"""Plots of `dsb stream --json` runs: plot_stream.py OUT.png RUN.json [RUN.json ...]
   left:  best 2E of each pass (the signs after p updates), with the Mattis ground state -n(n-1)
   right: payload rate of each pass in Gb/s (pass 0 includes start-up), with the paper's 307 Gb/s"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from jsonio import load_json


def main():
    if len(sys.argv) < 3:
        print("usage: plot_stream.py OUT.png RUN.json [RUN.json ...]", file=sys.stderr)
        return 2
    fig, (ax_e, ax_r) = plt.subplots(1, 2, figsize=(11, 4))
    for path in sys.argv[2:]:
        d = load_json(path)
        label = f'{d["instance"]} n={d["n"]} B={d["replicas"]} {d["backend"]}/{d["source"]}'
        recs = d["records"]
        passes = [r["pass"] for r in recs]
        e = [r["best_energy2"] for r in recs]
        ground = d.get("ground_energy2")
        if ground:  # relative to the ground state, so instances of any n share the axis
            ax_e.plot(passes, [x / ground for x in e], "o-", label=label)
        else:
            ax_e.plot(passes, [x / (d["n"] * (d["n"] - 1)) for x in e], "s--", label=label + " (2E/n(n-1))")
        ax_r.plot(passes, [r["payload_gbps"] for r in recs], "o-", label=label)
    ax_e.set_xlabel("pass (signs after p updates)")
    ax_e.set_ylabel("best 2E / ground 2E (Mattis), or 2E / n(n-1)")
    ax_e.legend(fontsize=7)
    ax_r.axhline(307, color="k", ls=":", label="paper: 307 Gb/s (400 GbE, RTX PRO 6000)")
    ax_r.set_xlabel("pass")
    ax_r.set_ylabel("payload Gb/s (padding included)")
    ax_r.set_yscale("log")
    ax_r.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
