#!/usr/bin/env python3
"""Plots of `dak bench gemm` JSON: plot_dak.py JSON OUTDIR
   OUTDIR/dak-gemm-sweep.png  EB vs offload ratio per shape and N, with the bound and baselines
   OUTDIR/dak-gemm-extra.png  congestion sweep, read amplification, wave alignment
   OUTDIR/dak-gemm-floor.png  (fixed section) the streaming floor and a GEMM's costs added to it, against the
                              split under PDL and cuBLAS, us a launch in a graph of 8, per shape and N
plot_dak.py --width OUTDIR [LABEL=]JSON...   (fixed-section runs, e.g. one per list of 16 widths)
   OUTDIR/dak-gemm-width.png  the GEMM as planned under PDL and cuBLAS as graphs of 8 against the batch width N, per
                              shape, as % of the bound (A's bytes / B_g); LABEL= groups files into series (e.g.
                              default=... split=... for runs with --whole 2 and --whole 0)"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from jsonio import load_json


FLOOR_BARS = [("stream_floor_pdl_us", "floor, PDL", "tab:green"), ("stream_floor_pdl_plan_ctas_us", "+ plan's CTAs", "tab:olive"),
              ("stream_floor_pdl_b_copy_us", "+ B after the wait", "tab:cyan"),
              ("stream_floor_pdl_prologue_us", "+ 1.6 us prologue", "tab:orange"),
              ("stream_floor_pdl_tail_us", "+ 1.4 us tail", "tab:brown"), ("stream_floor_pdl_all_us", "all four", "tab:red"),
              ("split_pdl_us", "split, PDL", "tab:blue"), ("cublas_us", "cuBLAS", "tab:gray")]


def plot_floor(d, out):
    """The fixed section's graph rows: one group of bars per shape and N, the bound as a line over each group."""
    groups = []
    for k, v in d.items():
        if not k.startswith("fixed_") or not isinstance(v, list):
            continue
        M, K = (int(x) for x in k[6:].split("x"))
        for r in v:
            if r.get("mode") == "graph" and r.get("stream_floor_pdl_us") is not None:
                groups.append((f"{k[6:]}\nN={r['N']}", 2.0 * M * K / (d["probes"]["B_g_GBs"] * 1e3), r))
    if not groups:
        return
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(groups)), 4))
    w = 0.8 / len(FLOOR_BARS)
    for b, (key, lab, col) in enumerate(FLOOR_BARS):
        xs = [g + (b - len(FLOOR_BARS) / 2 + 0.5) * w for g in range(len(groups))]
        ys = [float("nan") if r.get(key) is None else r[key] for _, _, r in groups]
        ax.bar(xs, [y / bound for y, (_, bound, _) in zip(ys, groups)], w, color=col, label=lab)
    ax.axhline(1.0, color="k", ls="--", lw=1, label="the bound (A / B_g)")
    ax.axhline(1 / 0.95, color="k", ls=":", lw=1, label="95 % of the bound")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=7)
    top = max(r.get(key) / bound for _, bound, r in groups for key, _, _ in FLOOR_BARS if r.get(key) is not None)
    ax.set_ylim(0.8, 1.05 * top)
    ax.set_ylabel("time a launch / the bound's time")
    ax.set_title("r = 0, graphs of 8: the streaming floor and a GEMM's costs on it")
    ax.legend(fontsize=6, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(f"{out}/dak-gemm-floor.png", dpi=90)
    print("wrote", f"{out}/dak-gemm-floor.png")


WIDTH_STYLES = [("o-", "tab:blue"), ("^-", "tab:red"), ("d-", "tab:green"), ("v-", "tab:purple")]


def plot_width(args, out):
    """Every fixed-section graph row of the files: the GEMM under PDL (the plan the run took) and cuBLAS, % of the
    bound, against N.  An argument LABEL=PATH puts that file's rows in a series of that label (several files may
    share one: a run a list of 16 widths); a plain PATH goes to "as planned, PDL graph".  cuBLAS from every file; the
    grp-pdl column (A in the GEMM's row groups), where a file has it, as "A in row groups" (or "LABEL: A in row
    groups")."""
    shapes = {}  # shape -> label -> [(N, % of bound)]; label None: cuBLAS
    labels = []
    for arg in args:
        label, path = arg.split("=", 1) if "=" in arg else ("as planned, PDL graph", arg)
        if label not in labels:
            labels.append(label)
        d = load_json(path)
        for k, v in d.items():
            if not k.startswith("fixed_") or not isinstance(v, list):
                continue
            M, K = (int(x) for x in k[6:].split("x"))
            bound = 2.0 * M * K / (d["probes"]["B_g_GBs"] * 1e3)  # us
            series = shapes.setdefault(k[6:], {})
            for r in v:
                if r.get("mode") == "graph" and r.get("split_pdl_us"):
                    series.setdefault(label, []).append((r["N"], 100 * bound / r["split_pdl_us"]))
                    if r.get("cublas_us"):
                        series.setdefault(None, []).append((r["N"], 100 * bound / r["cublas_us"]))
                if r.get("mode") == "graph" and r.get("group_pdl_us"):  # the grp-pdl column: A in row groups
                    gl = "A in row groups" if "=" not in arg else label + ": A in row groups"
                    if gl not in labels:
                        labels.append(gl)
                    series.setdefault(gl, []).append((r["N"], 100 * bound / r["group_pdl_us"]))
    if not shapes:
        print("no fixed-section graph rows in", args, file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(shapes), figsize=(6 * len(shapes), 3.6), squeeze=False)
    for ax, (shape, series) in zip(axes[0], sorted(shapes.items())):
        for i, label in enumerate(labels):
            rows = sorted(series.get(label, []))
            if not rows:
                continue
            st, col = WIDTH_STYLES[i % len(WIDTH_STYLES)]
            ax.plot([r[0] for r in rows], [r[1] for r in rows], st, ms=3, color=col, label=label)
        by_n = {}
        for n, pct in series.get(None, []):  # cuBLAS: the mean over the files that ran this N
            by_n.setdefault(n, []).append(pct)
        ns = sorted(by_n)
        ax.plot(ns, [sum(by_n[n]) / len(by_n[n]) for n in ns], "s:", ms=3, color="tab:gray", label="cuBLAS graph")
        ax.axhline(95, color="k", ls=":", lw=1, label="95 % of the bound")
        ax.set_title(f"{shape}, r = 0", fontsize=9)
        ax.set_xlabel("batch width N")
        ax.set_ylabel("% of the bound (A / B_g)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/dak-gemm-width.png", dpi=90)
    print("wrote", f"{out}/dak-gemm-width.png")
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--width":
        return plot_width(sys.argv[3:], sys.argv[2])
    if len(sys.argv) != 3:
        print("usage: plot_dak.py JSON OUTDIR | plot_dak.py --width OUTDIR [LABEL=]JSON...", file=sys.stderr)
        return 2
    d = load_json(sys.argv[1])
    out = sys.argv[2]
    sweeps = [(k, v) for k, v in d.items() if k.startswith("sweep_") and v]
    series = [("bound_GBs", "bound", "--", "k"), ("split_GBs", "split (DAK)", "o-", "tab:blue"),
              ("split_seq_GBs", "split, sequence of 8 (PDL)", "o--", "tab:pink"),
              ("split_seq_graph_GBs", "split, sequence as a CUDA graph", "*-", "tab:purple"),
              ("split_tiled_GBs", "split, tiled host rows", "P-", "tab:olive"),
              ("split_mc_GBs", "split, tiled + multicast", "s-", "tab:orange"),
              ("split_2d_GBs", "split, 2-D TMA", "d:", "tab:cyan"),
              ("cublas0_GBs", "cuBLAS all-HBM", ":", "tab:gray"),
              ("prefetch_GBs", "prefetch", "x-", "tab:green"), ("overlap_GBs", "prefetch overlap", "+-", "tab:red"),
              ("overlap_graph_GBs", "prefetch overlap as a graph", "+--", "tab:red"),
              ("naive_GBs", "naive zero-copy", "v-", "tab:purple"), ("uvm_GBs", "unified memory", "^-", "tab:brown")]
    if sweeps:
        ns = sorted({r["N"] for _, v in sweeps for r in v})
        fig, axes = plt.subplots(len(sweeps), len(ns), figsize=(4 * len(ns), 3.2 * len(sweeps)), squeeze=False)
        for i, (k, v) in enumerate(sweeps):
            for j, n in enumerate(ns):
                ax = axes[i][j]
                rows = sorted([r for r in v if r["N"] == n], key=lambda r: r["ratio"])
                x = [100 * r["ratio"] for r in rows]
                for key, lab, st, col in series:
                    y = [r.get(key) for r in rows]
                    if any(v is not None for v in y):
                        ax.plot(x, [float("nan") if v is None else v for v in y], st, color=col, label=lab, ms=3)
                ax.set_xscale("symlog", linthresh=1)
                ax.set_yscale("log")
                ax.set_title(f"{k[6:]} N={n}", fontsize=9)
                ax.set_xlabel("offload ratio %")
                ax.set_ylabel("EB GB/s")
                ax.grid(True, alpha=0.3)
        handles = {}
        for row in axes:
            for ax in row:
                for h, lab in zip(*ax.get_legend_handles_labels()):
                    handles.setdefault(lab, h)
        fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=len(handles), fontsize=8)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        fig.savefig(f"{out}/dak-gemm-sweep.png", dpi=90)
        print("wrote", f"{out}/dak-gemm-sweep.png")

    plot_floor(d, out)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    cg = d.get("congestion") or []
    if cg:
        ax = axes[0]
        for wnd in sorted({r["window"] for r in cg if r["host_sms"] > 0}):
            rows = sorted([r for r in cg if r["window"] == wnd and r["host_sms"] > 0], key=lambda r: r["host_sms"])
            ax.plot([r["host_sms"] for r in rows], [r["hbm_GBs"] for r in rows], "o-", label=f"HBM SMs, W={wnd}")
        base = [r["hbm_GBs"] for r in cg if r["host_sms"] == 0]
        if base:
            ax.axhline(base[0], color="k", ls="--", label="HBM SMs alone")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("SMs reading host memory")
        ax.set_ylabel("HBM-reading SMs' bandwidth GB/s")
        ax.set_title("congestion (Fig. 7)")
        ax.legend(fontsize=6)
        ax.grid(True, alpha=0.3)
    amp = d.get("amplification") or []
    if amp:
        ax = axes[1]
        for path, cl in sorted({(r.get("path", "tiled"), r["cluster"]) for r in amp}):
            rows = sorted([r for r in amp if r.get("path", "tiled") == path and r["cluster"] == cl],
                          key=lambda r: r["N"])
            ax.plot([r["N"] for r in rows], [r["amplification"] for r in rows], "o-", label=f"{path}, cluster {cl}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("N")
        ax.set_ylabel("host bytes / host bytes of A")
        ax.set_title("read amplification (Table 1)")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    waves = [(k, v) for k, v in d.items() if k.startswith("wave_") and v]
    if waves:
        ax = axes[2]
        labels, gains = [], []
        for k, v in waves:
            for r in v:
                if r.get("aligned_GBs") and r.get("unaligned_GBs"):
                    labels.append(f"{k[5:]}\nN{r['N']} r{100 * r['ratio']:.0f}%")
                    gains.append(r["aligned_GBs"] / r["unaligned_GBs"])
        ax.bar(range(len(gains)), gains)
        ax.set_xticks(range(len(gains)))
        ax.set_xticklabels(labels, fontsize=5, rotation=90)
        ax.axhline(1.0, color="k", lw=0.5)
        ax.set_ylabel("aligned / unaligned EB")
        ax.set_title("wave alignment")
    fig.tight_layout()
    fig.savefig(f"{out}/dak-gemm-extra.png", dpi=90)
    print("wrote", f"{out}/dak-gemm-extra.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
