"""FCT slowdown per flow-size bin (median, p95, p99), the presentation of the HPCC paper.

Inputs are fabricsim `fct.csv` files (header flow_id,src,dst,sport,dport,size_bytes,start_ns,
fct_ns,ideal_fct_ns,slowdown) or the HPCC simulator's `fct.txt` (space separated: sip dip sport
dport size start_ns fct_ns ideal_fct_ns). Slowdown is recomputed as fct_ns / ideal_fct_ns from
the integer columns (the CSV's slowdown column is rounded to 6 digits).
"""

import csv
import json
import os

from . import bounded
from .stats import InputProblem, format_bytes, percentile

QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


class Flow:
    """What the analysis needs of one completed flow."""

    __slots__ = ("size", "slowdown", "dst", "start_ns")

    def __init__(self, size, slowdown, dst, start_ns):
        self.size, self.slowdown, self.dst, self.start_ns = size, slowdown, dst, start_ns


class Run:
    """One set of flows: a label (e.g. the CC algorithm) and Flow records."""

    def __init__(self, label, path, flows):
        self.label = label
        self.path = path
        self.flows = flows


def _int_field(value, path, line, field):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InputProblem(path, "line %d: %s" % (line, field), "an integer", repr(value))


def read_fct(path):
    """[Flow] from a fabricsim fct.csv or an HPCC fct.txt."""
    text = bounded.read_text(path, "FCT file", bounded.DATA_MAX_BYTES)
    lines = text.splitlines()
    flows = []
    if lines and "size_bytes" in lines[0]:
        reader = csv.DictReader(lines)
        need = ("dst", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns")
        missing = [c for c in need if c not in reader.fieldnames]
        if missing:
            raise InputProblem(path, "header", "columns " + ", ".join(need), ", ".join(reader.fieldnames))
        for n, row in enumerate(reader, start=2):
            size = _int_field(row["size_bytes"], path, n, "size_bytes")
            fct = _int_field(row["fct_ns"], path, n, "fct_ns")
            ideal = _int_field(row["ideal_fct_ns"], path, n, "ideal_fct_ns")
            flows.append(_flow(size, fct, ideal, row.get("dst"), row.get("start_ns"), path, n))
        return flows
    for n, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 8:
            raise InputProblem(path, "line %d" % n,
                               "a fabricsim fct.csv header or 'sip dip sport dport size start_ns fct_ns ideal_fct_ns'",
                               repr(line))
        size = _int_field(parts[4], path, n, "size")
        fct = _int_field(parts[6], path, n, "fct_ns")
        ideal = _int_field(parts[7], path, n, "ideal_fct_ns")
        flows.append(_flow(size, fct, ideal, parts[1], parts[5], path, n))
    return flows


def _flow(size, fct, ideal, dst, start, path, line):
    if ideal <= 0:
        raise InputProblem(path, "line %d: ideal_fct_ns" % line, "a positive time", str(ideal))
    if size <= 0:
        raise InputProblem(path, "line %d: size_bytes" % line, "a positive size", str(size))
    if fct < 0:
        raise InputProblem(path, "line %d: fct_ns" % line, "a non-negative time", str(fct))
    return Flow(size, fct / ideal, dst, start)


def without_incast(flows):
    """Drops incast flows: those sharing destination, start time and size with another flow
    (an incast event starts all its senders at once; Poisson arrivals practically never tie)."""
    count = {}
    for f in flows:
        key = (f.dst, f.start_ns, f.size)
        count[key] = count.get(key, 0) + 1
    return [f for f in flows if count[(f.dst, f.start_ns, f.size)] == 1]


def _summary_label(run_dir):
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            s = json.load(f)
        return s.get("transport", {}).get("cc")
    except (OSError, ValueError):
        return None


def load_runs(specs):
    """Runs from arguments `PATH` or `LABEL=PATH`; PATH is a run directory, an FCT file, or a
    sweep directory (every completed point, labelled by its point name)."""
    runs = []
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or os.path.exists(spec):
            label, path = None, spec
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "sweep.json")):
            runs.extend(_sweep_runs(path))
            continue
        fct = os.path.join(path, "fct.csv") if os.path.isdir(path) else path
        if label is None and os.path.isdir(path):
            label = _summary_label(path)
        if label is None:
            label = os.path.basename(os.path.normpath(path))
        runs.append(Run(label, fct, read_fct(fct)))
    # Same label twice (the same CC on two scenarios): tell them apart by their paths.
    seen = {}
    for r in runs:
        seen.setdefault(r.label, []).append(r)
    for label, group in seen.items():
        if len(group) > 1:
            for r in group:
                r.label = "%s (%s)" % (label, os.path.basename(os.path.dirname(os.path.abspath(r.path))))
    return runs


def _sweep_runs(sweep_dir):
    points = os.path.join(sweep_dir, "points")
    out = []
    for name in sorted(os.listdir(points)) if os.path.isdir(points) else []:
        fct = os.path.join(points, name, "fct.csv")
        if ".tmp-" not in name and os.path.exists(fct):
            out.append(Run(name.rsplit("-", 1)[0], fct, read_fct(fct)))
    if not out:
        raise InputProblem(sweep_dir, "", "a sweep directory with completed points", "none")
    return out


def quantile_edges(sizes, count):
    """Upper bin edges splitting the sizes into `count` groups of (about) equal flow count."""
    if not sizes:
        return []
    v = sorted(sizes)
    edges = []
    for i in range(1, count + 1):
        e = percentile(v, i / count)
        if not edges or e > edges[-1]:
            edges.append(e)
    return edges


def bin_label(lo, hi):
    if lo is None:
        return "<= %s" % format_bytes(hi)
    if hi is None:
        return "> %s" % format_bytes(lo)
    return "%s-%s" % (format_bytes(lo), format_bytes(hi))


def bins_from_edges(edges):
    """[(lo, hi)] with a flow in a bin when lo < size <= hi; None is unbounded."""
    bins = []
    lo = None
    for e in edges:
        bins.append((lo, e))
        lo = e
    bins.append((lo, None))
    return bins


def bin_stats(runs, edges):
    """{label: [(lo, hi, n, {p50, p95, p99})]}; the last bin holds sizes above the last edge and
    is left out when no run has a flow there."""
    bins = bins_from_edges(edges)
    table = {}
    for r in runs:
        rows = []
        for lo, hi in bins:
            sl = [f.slowdown for f in r.flows if (lo is None or f.size > lo) and (hi is None or f.size <= hi)]
            rows.append((lo, hi, len(sl), {k: percentile(sl, q) for k, q in QUANTILES}))
        table[r.label] = rows
    if all(rows[-1][2] == 0 for rows in table.values()):
        table = {k: rows[:-1] for k, rows in table.items()}
    return table


def overall_stats(run):
    sl = [f.slowdown for f in run.flows]
    return len(sl), {k: percentile(sl, q) for k, q in QUANTILES}


def _fmt(x):
    return "-" if x is None else "%.2f" % x


def format_table(runs, table, style="text"):
    """The side-by-side table: one row per size bin, n / p50 / p95 / p99 per run."""
    labels = [r.label for r in runs]
    header = ["flow size (bytes)"]
    for lab in labels:
        header += ["%s n" % lab, "%s p50" % lab, "%s p95" % lab, "%s p99" % lab]
    body = []
    nbins = len(next(iter(table.values()))) if table else 0
    for i in range(nbins):
        lo, hi = table[labels[0]][i][0], table[labels[0]][i][1]
        row = [bin_label(lo, hi)]
        for lab in labels:
            _, _, n, q = table[lab][i]
            row += [str(n), _fmt(q["p50"]), _fmt(q["p95"]), _fmt(q["p99"])]
        body.append(row)
    row = ["all"]
    for r in runs:
        n, q = overall_stats(r)
        row += [str(n), _fmt(q["p50"]), _fmt(q["p95"]), _fmt(q["p99"])]
    body.append(row)
    if style == "csv":
        return _csv_long(runs, table)
    if style == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(row[c])) for row in [header] + body) for c in range(len(header))]
    out = []
    for row in [header] + body:
        cells = [row[0].ljust(widths[0])] + [row[c].rjust(widths[c]) for c in range(1, len(row))]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def _csv_long(runs, table):
    lines = ["label,bin_lo_bytes,bin_hi_bytes,flows,p50,p95,p99"]
    for r in runs:
        for lo, hi, n, q in table[r.label]:
            cells = [r.label, "" if lo is None else str(lo), "" if hi is None else str(hi), str(n)]
            cells += ["" if q[k] is None else repr(q[k]) for k, _ in QUANTILES]
            lines.append(",".join(_csv_cell(c) for c in cells))
    return "\n".join(lines) + "\n"


def _csv_cell(c):
    return '"%s"' % c.replace('"', '""') if ("," in c or '"' in c) else c


def plot(runs, table, path, title=None):
    """Three panels (median, p95, p99 slowdown) against flow-size bin, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [r.label for r in runs]
    rows0 = table[labels[0]]
    ticks = [bin_label(lo, hi) for lo, hi, _, _ in rows0]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), sharex=True)
    for ax, (key, _) in zip(axes, QUANTILES):
        for lab in labels:
            xs = [i for i, row in enumerate(table[lab]) if row[3][key] is not None]
            ys = [table[lab][i][3][key] for i in xs]
            ax.plot(xs, ys, marker="o", label=lab)
        ax.set_yscale("log")
        ax.set_title({"p50": "median", "p95": "95th percentile", "p99": "99th percentile"}[key])
        ax.set_xticks(range(len(ticks)))
        ax.set_xticklabels(ticks, rotation=45, ha="right", fontsize=8)
        ax.set_xlabel("flow size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("FCT slowdown (fct / ideal)")
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
