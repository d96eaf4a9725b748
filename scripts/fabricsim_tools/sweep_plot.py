"""--plot: each metric against the swept parameters (matplotlib).

The first swept key is the x axis (numeric when every value is a number, else categories in
grid order); each combination of the other keys is one line; seeds are averaged, with min-max
bars when there are several.
"""

import os


def _number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def series(rows, keys, metric):
    """{line label: [(x, mean, lo, hi)]} over the ok rows, in grid order."""
    xkey = keys[0] if keys else "seed"
    others = keys[1:] if keys else []
    groups = {}
    for r in rows:
        if r["status"] != "ok" or _number(r.get(metric)) is None:
            continue
        label = ", ".join("%s=%s" % (k.split(".")[-1], r[k]) for k in others) or metric
        groups.setdefault(label, {}).setdefault(str(r[xkey]), []).append(_number(r[metric]))
    out = {}
    for label, by_x in groups.items():
        out[label] = [(x, sum(v) / len(v), min(v), max(v)) for x, v in by_x.items()]
    return xkey, out


def plot_metrics(rows, keys, metrics, out_dir):
    """Writes DIR/plot-<metric>.png per metric; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for metric in metrics:
        xkey, lines = series(rows, keys, metric)
        xs_all = []
        for pts in lines.values():
            for x, _, _, _ in pts:
                if x not in xs_all:
                    xs_all.append(x)
        numeric = all(_number(x) is not None for x in xs_all)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, pts in lines.items():
            xs = [_number(x) if numeric else xs_all.index(x) for x, _, _, _ in pts]
            ys = [m for _, m, _, _ in pts]
            err = [[m - lo for _, m, lo, _ in pts], [hi - m for _, m, _, hi in pts]]
            if any(e > 0 for side in err for e in side):
                ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=label)
            else:
                ax.plot(xs, ys, marker="o", label=label)
        if not numeric:
            ax.set_xticks(range(len(xs_all)))
            ax.set_xticklabels(xs_all, rotation=30, ha="right")
        ax.set_xlabel(xkey)
        ax.set_ylabel(metric)
        ax.grid(True, alpha=0.3)
        if len(lines) > 1:
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, "plot-%s.png" % metric)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
