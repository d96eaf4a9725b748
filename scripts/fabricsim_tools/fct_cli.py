"""Command line of scripts/fct-slowdown."""

import argparse
import os
import sys

from . import fct
from .stats import InputProblem, parse_bytes

DESCRIPTION = """\
FCT slowdown (fct / ideal) median, p95 and p99 per flow-size bin, runs side by side.

RUN is a fabricsim output directory (its fct.csv; labelled by the congestion control in its
summary.json), an fct.csv or HPCC fct.txt file, a sweep directory (every completed point), or
LABEL=PATH to name it yourself. Percentiles are nearest-rank; a flow is in bin (lo, hi] by its
size in bytes."""

EPILOG = """\
examples:
  scripts/fct-slowdown out/dcqcn out/hpcc --plot slowdown.png
  scripts/fct-slowdown DCQCN=a/fct.csv HPCC=b/fct.csv --bins 10K,100K,1M,10M --format markdown
  scripts/fct-slowdown sweep-out --bins quantile:20 --csv bins.csv"""


def parse_bins(spec, runs):
    if spec.startswith("quantile:"):
        text = spec.split(":", 1)[1]
        if not text.isdigit() or int(text) < 1:
            raise InputProblem("<command line>", "--bins", "quantile:N with N >= 1", '"%s"' % spec)
        sizes = [f.size for r in runs for f in r.flows]
        return fct.quantile_edges(sizes, int(text))
    edges = [parse_bytes(t, field="--bins") for t in spec.split(",") if t.strip()]
    if not edges or any(b <= a for a, b in zip(edges, edges[1:])):
        raise InputProblem("<command line>", "--bins", "increasing byte edges like 10K,100K,1M", '"%s"' % spec)
    return edges


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fct-slowdown", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN")
    ap.add_argument("--bins", default="quantile:10",
                    help="quantile:N (N bins of equal flow count over all runs, default 10) or upper edges in bytes, e.g. 10K,100K,1M")
    ap.add_argument("--exclude-incast", action="store_true",
                    help="leave out flows that share destination, start time and size with another flow (incast events)")
    ap.add_argument("--format", choices=("text", "markdown", "csv"), default="text", help="table on stdout")
    ap.add_argument("--csv", metavar="FILE", help="also write label,bin_lo_bytes,bin_hi_bytes,flows,p50,p95,p99")
    ap.add_argument("--plot", metavar="FILE.png", help="median / p95 / p99 panels, one line per run (matplotlib)")
    ap.add_argument("--title", help="plot title")
    args = ap.parse_args(argv)
    try:
        runs = fct.load_runs(args.runs)
        if args.exclude_incast:
            for r in runs:
                r.flows = fct.without_incast(r.flows)
        empty = [r.label for r in runs if not r.flows]
        if empty:
            raise InputProblem(runs[[r.label for r in runs].index(empty[0])].path, "", "at least one completed flow", "none")
        edges = parse_bins(args.bins, runs)
    except InputProblem as e:
        print("fct-slowdown: error: %s" % e, file=sys.stderr)
        return 2
    table = fct.bin_stats(runs, edges)
    sys.stdout.write(fct.format_table(runs, table, args.format))
    if args.csv:
        _write_atomic(args.csv, fct.format_table(runs, table, "csv"))
    if args.plot:
        try:
            fct.plot(runs, table, args.plot, args.title)
        except ImportError:
            print("fct-slowdown: error: --plot needs matplotlib (Debian: apt-get install python3-matplotlib, "
                  "then run with /usr/bin/python3)", file=sys.stderr)
            return 1
    return 0


def _write_atomic(path, text):
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
