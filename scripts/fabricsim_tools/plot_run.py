"""PNG plots of one fabricsim run folder: what a person looks at first.

Inference runs (requests.csv, steps.csv): latency.png, the TTFT and TPOT distributions (CDF over
the finished requests); steps.png, each step's time split into compute, exposed communication per
kind, sync wait and idle, over the run. Fabric runs (fct.csv): fct-slowdown.png, FCT slowdown
against flow size with the median per size decade; with `monitor` on, queue.png (the deepest
queue per sample) and link-util.png (mean and busiest link utilisation per sample). A
`fabricsim calibrate` folder (points.csv): busbw.png beside its busbw.svg, measured and predicted
bus bandwidth against size, a panel per collective and rank count.
"""
import argparse
import csv
import math
import os
import sys


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _floats(rows, key):
    return [float(r[key]) for r in rows if r.get(key, "") != ""]


def _cdf(ax, values, label):
    values = sorted(values)
    n = len(values)
    if n:
        ax.step(values, [(i + 1) / n for i in range(n)], where="post", label=label)


def _plt():
    import matplotlib
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    return plt


def plot_inference(run, out):
    plt = _plt()
    written = []
    reqs = _rows(os.path.join(run, "requests.csv"))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in ((axes[0], "ttft_ms", "TTFT"), (axes[1], "tpot_ms", "TPOT")):
        _cdf(ax, _floats(reqs, key), title)
        ax.set_xlabel(title + " (ms)")
        ax.set_ylabel("share of finished requests")
        ax.set_title("%s, %d requests" % (title, len(_floats(reqs, key))))
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    written.append(_save(fig, plt, out, "latency.png"))

    steps = _rows(os.path.join(run, "steps.csv"))
    if steps:
        parts = ["compute_ms"] + [k for k in steps[0] if k.startswith("comm_")] + ["sync_ms", "idle_ms"]
        fig, ax = plt.subplots(figsize=(10, 4))
        starts = _floats(steps, "start_ms")
        widths = [float(s["end_ms"]) - float(s["start_ms"]) for s in steps]
        bottom = [0.0] * len(steps)
        for part in parts:
            heights = [float(s[part]) for s in steps]
            ax.bar(starts, heights, width=widths, bottom=bottom, align="edge",
                   label=part[:-3].replace("comm_", "exposed "))
            bottom = [b + h for b, h in zip(bottom, heights)]
        ax.set_xlabel("step start (ms)")
        ax.set_ylabel("step time per rank (ms)")
        ax.set_title("%d steps: where the time went" % len(steps))
        ax.legend(fontsize="small")
        fig.tight_layout()
        written.append(_save(fig, plt, out, "steps.png"))
    return written


def plot_fabric(run, out):
    plt = _plt()
    written = []
    flows = [r for r in _rows(os.path.join(run, "fct.csv")) if r.get("slowdown", "") != ""]
    fig, ax = plt.subplots(figsize=(8, 4))
    sizes = [float(r["size_bytes"]) for r in flows]
    slow = [float(r["slowdown"]) for r in flows]
    ax.scatter(sizes, slow, s=6, alpha=0.4, label="flows")
    decades = {}
    for s, d in zip(sizes, slow):
        decades.setdefault(int(math.floor(math.log10(max(s, 1)))), []).append(d)
    xs = sorted(decades)
    ax.plot([10 ** (x + 0.5) for x in xs],
            [sorted(decades[x])[(len(decades[x]) - 1) // 2] for x in xs], "k-o", label="median per decade")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (bytes)")
    ax.set_ylabel("FCT slowdown")
    ax.set_title("%d flows" % len(flows))
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    written.append(_save(fig, plt, out, "fct-slowdown.png"))

    queue = os.path.join(run, "queue.csv")
    if os.path.exists(queue):
        deepest = {}
        for r in _rows(queue):
            t = float(r["time_ns"]) / 1e3
            deepest[t] = max(deepest.get(t, 0.0), float(r["bytes"]))
        fig, ax = plt.subplots(figsize=(8, 4))
        ts = sorted(deepest)
        ax.plot(ts, [deepest[t] for t in ts])
        ax.set_xlabel("time (us)")
        ax.set_ylabel("deepest queue (bytes)")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        written.append(_save(fig, plt, out, "queue.png"))
    util = os.path.join(run, "link_util.csv")
    if os.path.exists(util):
        by_t = {}
        for r in _rows(util):
            by_t.setdefault(float(r["time_ns"]) / 1e3, []).append(float(r["utilisation"]))
        ts = sorted(by_t)
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.plot(ts, [sum(by_t[t]) / len(by_t[t]) for t in ts], label="mean of busy links")
        ax.plot(ts, [max(by_t[t]) for t in ts], label="busiest link")
        ax.set_xlabel("time (us)")
        ax.set_ylabel("utilisation")
        ax.legend()
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        written.append(_save(fig, plt, out, "link-util.png"))
    return written


def plot_calibrate(run, out):
    plt = _plt()
    panels = {}
    for r in _rows(os.path.join(run, "points.csv")):
        key = (r["collective"], int(r["ranks"]))
        panels.setdefault(key, []).append((float(r["bytes"]), float(r["measured_busbw_gbps"]),
                                           float(r["predicted_busbw_gbps"])))
    keys = sorted(panels)
    cols = min(3, max(1, len(keys)))
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, key in zip([a for row in axes for a in row], keys):
        pts = sorted(panels[key])
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, label="measured")
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "r-", label="predicted")
        ax.set_xscale("log")
        ax.set_title("%s, %d ranks" % key)
        ax.set_xlabel("bytes")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    for ax in [a for row in axes for a in row][len(keys):]:
        ax.axis("off")
    fig.tight_layout()
    return [_save(fig, plt, out, "busbw.png")]


def _save(fig, plt, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plot-run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a fabricsim run folder (run --out DIR)")
    ap.add_argument("--out", help="folder for the PNGs (default: the run folder)")
    a = ap.parse_args(argv)
    out = a.out or a.run
    try:
        if os.path.exists(os.path.join(a.run, "requests.csv")):
            kind = plot_inference
        elif os.path.exists(os.path.join(a.run, "points.csv")):
            kind = plot_calibrate
        elif os.path.exists(os.path.join(a.run, "fct.csv")):
            kind = plot_fabric
        else:
            print("plot-run: error: %s: expected a run folder with requests.csv (inference), "
                  "fct.csv (fabric) or points.csv (calibrate), found none" % a.run, file=sys.stderr)
            return 2
        try:
            _plt()
        except ImportError:
            print("plot-run: error: needs matplotlib (Debian: apt-get install python3-matplotlib)",
                  file=sys.stderr)
            return 2
        os.makedirs(out, exist_ok=True)
        for path in kind(a.run, out):
            print(path)
    except (KeyError, ValueError) as e:
        print("plot-run: error: %s: a table without the expected column or number (%s)" % (a.run, e),
              file=sys.stderr)
        return 2
    return 0
