"""Command line of scripts/sweep."""

import argparse
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from . import bounded, grid, sweep_cluster, sweep_run
from .stats import InputProblem

DESCRIPTION = """\
Runs a fabricsim scenario over a grid of overrides (and seeds), in parallel, resumable.

INPUT is a scenario (then give --grid) or a sweep file (scenarios/sweeps/*.json: base, grid,
seeds, set, metrics). Each point runs `fabricsim run BASE --set key=value ... --out
DIR/points/NAME` (written atomically: the directory appears when the point is done); points
already done are skipped; a failed point is recorded with its error and retried on the next
run. DIR/results.csv gets one row per point: the swept keys, seed, status, error and the
summary metrics."""

EPILOG = """\
examples:
  scripts/sweep scenarios/fabric-incast.json --grid transport.cc=dcqcn,hpcc --grid traffic.poisson.load=0.3,0.5 --seeds 3 -j 2 --out sweep1
  scripts/sweep scenarios/sweeps/ecn-cc-incast.json -j 2 --out sweep2 --plot
  scripts/sweep scenarios/sweeps/ecn-cc-incast.json --out /shared/sweep2 --slurm     # then DIR/submit-slurm.sh
  scripts/sweep --out sweep2 --collect --plot --metric queue_p99_bytes"""


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_fabricsim(explicit):
    path = explicit or os.environ.get("FABRICSIM") or os.path.join(repo_root(), "build", "bin", "fabricsim")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise InputProblem("<command line>", "--fabricsim",
                           "an executable fabricsim binary (--fabricsim PATH, $FABRICSIM or build/bin/fabricsim)",
                           '"%s"' % path)
    return os.path.abspath(path)


def _is_sweep_file(path):
    doc = bounded.load_json(path, "scenario or sweep file")
    return isinstance(doc, dict) and "base" in doc


def build_plan(args):
    if not args.input:
        raise InputProblem("<command line>", "INPUT", "a scenario or sweep file", "nothing")
    spec = {"base": args.input, "axes": [], "seeds": None, "sets": {}, "metrics": []}
    if _is_sweep_file(args.input):
        spec = grid.read_sweep_file(args.input)
    for g in args.grid:
        keys, values = grid.parse_grid_arg(g)
        spec["axes"] = [a for a in spec["axes"] if a[0] != keys] + [(keys, values)]
    if args.seeds is not None:
        spec["seeds"] = grid.parse_seeds(args.seeds)
    for s in args.set:
        key, sep, text = s.partition("=")
        if not sep or not key:
            raise InputProblem("<command line>", "--set", "key.path=value", '"%s"' % s)
        spec["sets"][key] = grid.parse_value(text)
    base = os.path.abspath(spec["base"])
    base_bytes = bounded.read_bytes(base, "scenario file")
    try:
        base_doc = bounded.parse_json(base_bytes.decode("utf-8"), base)
    except UnicodeDecodeError as e:
        raise InputProblem(base, "", "UTF-8 text", "a byte that is not (%s)" % e.reason)
    base_seed = spec["sets"].get("seed", base_doc.get("seed", 1) if isinstance(base_doc, dict) else 1)
    points = grid.expand(base, base_bytes, spec["axes"], spec["seeds"], spec["sets"])
    return {
        "version": 1,
        "base": base,
        "fabricsim": find_fabricsim(args.fabricsim),
        "keys": [k for keys, _ in spec["axes"] for k in keys],
        "base_seed": base_seed,
        "timeout_s": args.timeout,
        "metrics": spec["metrics"],
        "points": points,
    }


def save_plan(out, plan):
    os.makedirs(os.path.join(out, "points"), exist_ok=True)
    path = os.path.join(out, "sweep.json")
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(plan, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def load_plan(out):
    path = os.path.join(out, "sweep.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputProblem(path, "", "a sweep directory (run scripts/sweep INPUT --out DIR first)", e.strerror)
    except ValueError as e:
        raise InputProblem(path, "", "valid JSON", str(e))


def run_local(plan, out, jobs):
    sweep_run.clean_stale(out)
    pending = [p for p in plan["points"] if not sweep_run.is_done(out, p)]
    total = len(plan["points"])
    print("sweep: %d points, %d already done, %d to run with -j %d" % (total, total - len(pending), len(pending), jobs),
          file=sys.stderr)
    lock = threading.Lock()
    finished = [0]

    def one(point):
        meta = sweep_run.run_point(plan, point, out, plan.get("timeout_s"))
        with lock:
            finished[0] += 1
            what = "ok" if meta["status"] == "ok" else "FAILED: " + meta["error"]
            print("[%d/%d] %s  %s (%.1f s)" % (finished[0], len(pending), point["name"], what, meta["wall_s"]),
                  file=sys.stderr)
        return meta

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, pending))


def report(plan, out, rows, args):
    failed = [r for r in rows if r["status"] == "failed"]
    missing = [r for r in rows if r["status"] == "missing"]
    ok = len(rows) - len(failed) - len(missing)
    print("sweep: %d ok, %d failed, %d not run -> %s" % (ok, len(failed), len(missing),
                                                          os.path.join(out, "results.csv")), file=sys.stderr)
    if args.plot:
        metrics = args.metric or plan.get("metrics") or ["slowdown_p99"]
        unknown = [m for m in metrics if m not in sweep_run.METRIC_NAMES]
        if unknown:
            raise InputProblem("<command line>", "--metric", "one of: " + ", ".join(sweep_run.METRIC_NAMES),
                               '"%s"' % unknown[0])
        from .sweep_plot import plot_metrics

        try:
            for p in plot_metrics(rows, plan["keys"], metrics, out):
                print("sweep: plot %s" % p, file=sys.stderr)
        except ImportError:
            print("sweep: error: --plot needs matplotlib (Debian: apt-get install python3-matplotlib, "
                  "then run with /usr/bin/python3)", file=sys.stderr)
            return 1
    return 1 if failed else 0


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="sweep", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", nargs="?", metavar="INPUT", help="base scenario or sweep file")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="swept key and values (JSON, else string; commas inside [] {} \"\" do not split); "
                         "K1+K2=[a1,b1],[a2,b2] sweeps keys together")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override for every point")
    ap.add_argument("--seeds", metavar="N|S1,S2,...", help="seeds 1..N, or this list (--set seed=S per point)")
    ap.add_argument("-j", "--jobs", type=int, default=None, help="points run at once here (default: CPU count)")
    ap.add_argument("--out", required=True, metavar="DIR", help="sweep directory")
    ap.add_argument("--fabricsim", metavar="PATH", help="the CLI (default: $FABRICSIM, else build/bin/fabricsim)")
    ap.add_argument("--timeout", type=float, metavar="S", help="fail a point that runs longer than S seconds")
    ap.add_argument("--plot", action="store_true", help="draw DIR/plot-<metric>.png against the swept keys")
    ap.add_argument("--metric", action="append", default=[], help="metric to plot (repeatable; default slowdown_p99)")
    ap.add_argument("--slurm", action="store_true", help="write a Slurm job array (DIR/sweep.slurm) instead of running")
    ap.add_argument("--slurm-opt", action="append", default=[], metavar="OPT",
                    help="extra #SBATCH option, e.g. --partition=long (repeatable)")
    ap.add_argument("--parallel-ssh", nargs="?", const="..", metavar="HOSTS",
                    help="write a GNU parallel command over ssh instead of running (HOSTS: a,b,c or an sshloginfile; "
                         "default ~/.parallel/sshloginfile)")
    ap.add_argument("--dry-run", action="store_true", help="list the points and exit")
    ap.add_argument("--collect", action="store_true", help="only collect DIR/results.csv (after a cluster run)")
    ap.add_argument("--run-point", type=int, metavar="I", help="run point I of DIR/sweep.json (cluster tasks)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    out = os.path.abspath(args.out)
    try:
        if args.collect or args.run_point is not None:
            plan = load_plan(out)
            if args.fabricsim:
                plan["fabricsim"] = find_fabricsim(args.fabricsim)
            if args.run_point is not None:
                if not 0 <= args.run_point < len(plan["points"]):
                    raise InputProblem("<command line>", "--run-point",
                                       "an index in [0, %d]" % (len(plan["points"]) - 1), str(args.run_point))
                meta = sweep_run.run_point(plan, plan["points"][args.run_point], out, plan.get("timeout_s"))
                print("%s: %s%s" % (meta["name"], "already done" if meta["skipped"] else meta["status"],
                                     (" (%s)" % meta["error"]) if meta["error"] else ""), file=sys.stderr)
                return 0 if meta["status"] == "ok" else 1
            return report(plan, out, sweep_run.collect(plan, out), args)
        plan = build_plan(args)
        if args.dry_run:
            for i, p in enumerate(plan["points"]):
                print("%d %s %s" % (i, p["name"], " ".join("--set " + s for s in p["sets"])))
            return 0
        save_plan(out, plan)
        if args.slurm or args.parallel_ssh:
            pending = [i for i, p in enumerate(plan["points"]) if not sweep_run.is_done(out, p)]
            if not pending:
                print("sweep: every point is done", file=sys.stderr)
                return report(plan, out, sweep_run.collect(plan, out), args)
            if args.slurm:
                path = sweep_cluster.write_slurm(out, pending, args.jobs, args.timeout, args.slurm_opt, args.plot)
                print("sweep: %d pending points; submit with %s" % (len(pending), path), file=sys.stderr)
            if args.parallel_ssh:
                path, cmd = sweep_cluster.write_parallel(out, pending, args.parallel_ssh, args.jobs, args.plot)
                print(cmd)
                print("sweep: %d pending points; command saved in %s" % (len(pending), path), file=sys.stderr)
            return 0
        run_local(plan, out, args.jobs or os.cpu_count() or 1)
        return report(plan, out, sweep_run.collect(plan, out), args)
    except InputProblem as e:
        print("sweep: error: %s" % e, file=sys.stderr)
        return 2
