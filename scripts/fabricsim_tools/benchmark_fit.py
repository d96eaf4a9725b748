"""Fit a served deployment's host costs on declared points of a benchmark sweep (see --help).

Runs `fabricsim validate-serving` on the result files measured at the declared concurrencies
(the fitting set, --fit conc=C[,C...]; a set at one C cannot tell a serial frontend cost from
a parallel one) with the frontend served by --frontend-servers
processes, and searches the four costs of serving.execution by coordinate descent on a
multiplicative step: request_overhead, prompt_token_overhead (the frontend's, per request
and per prompt token), prefill_overhead and prefill_token_overhead (the engine's, per step
with prompt work and per prompt token). The score is the mean squared log ratio
(simulated / measured) of the four headline metrics (output throughput, median TTFT, TPOT
and E2E) over the fitting set. Prints every evaluation, the best costs, and the
validate-serving command that replays the whole sweep with them (--fitted-on conc=C keeps
the fitting set out of the held-out medians).
"""

import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HEADLINE = ("output_throughput", "median_ttft_ms", "median_tpot_ms", "median_e2el_ms")
PARAMS = (("request_overhead", "ms", 1e3),
          ("prompt_token_overhead", "us", 1e6),
          ("prefill_overhead", "ms", 1e3),
          ("prefill_token_overhead", "us", 1e6))


def coordinate_search(loss, start, factor=1.6, min_factor=1.08, max_evals=60, log=print):
    """Minimises loss(params) over positive params: tries each one x factor and / factor in
    turn, keeps the first that lowers the loss, and takes the square root of the factor after a
    pass without a gain, down to min_factor. Returns (best params, best loss, evaluations)."""
    if any(p <= 0 for p in start):
        raise SystemExit("fit-benchmark-overheads: every starting cost must be above 0")
    best = list(start)
    best_loss = loss(best)
    evals = 1
    log(f"start {fmt(best)} loss {best_loss:.5f}")
    while factor > min_factor and evals < max_evals:
        gained = False
        for i in range(len(best)):
            for mult in (factor, 1 / factor):
                trial = list(best)
                trial[i] *= mult
                value = loss(trial)
                evals += 1
                log(f"  try {fmt(trial)} loss {value:.5f}")
                if value < best_loss:
                    best, best_loss, gained = trial, value, True
                    break
                if evals >= max_evals:
                    break
            if evals >= max_evals:
                break
        log(f"pass x{factor:.3f}: best {fmt(best)} loss {best_loss:.5f}")
        if not gained:
            factor = math.sqrt(factor)
    return best, best_loss, evals


def fmt(params):
    return " ".join(f"{name} {v * scale:.4g}{unit}" for (name, unit, scale), v in
                    zip(PARAMS, params))


def sets(params, servers):
    out = ["--set", f"serving.execution.frontend_servers={servers}"]
    for (name, unit, scale), v in zip(PARAMS, params):
        out += ["--set", f"serving.execution.{name}={v * scale:.6g}{unit}"]
    return out


def result_files(args):
    """Every result JSON named (files, or the *.json of folders), sorted."""
    files = []
    for a in args:
        if os.path.isdir(a):
            files += [os.path.join(a, f) for f in sorted(os.listdir(a)) if f.endswith(".json")]
        else:
            files.append(a)
    return files


def concurrency(path):
    with open(path) as f:
        c = json.load(f).get("max_concurrency")
    if not isinstance(c, int):
        raise SystemExit(f"fit-benchmark-overheads: {path}: field max_concurrency: expected an "
                         f"integer, found {c!r}")
    return c


def fit_concurrencies(text):
    """'conc=8,48' -> [8, 48] (sorted, unique)."""
    parts = text[5:].split(",") if text.startswith("conc=") else []
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"fit-benchmark-overheads: --fit: expected conc=C[,C...], found "
                         f"{text!r}")
    return sorted({int(p) for p in parts})


def longest_first(files):
    """The fitting set in the order its runs should start: one run per file, the most requests
    (10 x C measured and 2 x C warm-up, ISL breaking ties) first, so that a pool of --jobs
    processes ends close together instead of one process taking every large point."""
    def weight(path):
        m = re.search(r"isl(\d+)", os.path.basename(path))
        return (concurrency(path), int(m.group(1)) if m else 0)
    return sorted(files, key=weight, reverse=True)


def score(rows):
    """Mean squared log ratio of the headline metrics in comparison.csv rows."""
    pairs = [(float(r["simulated"]), float(r["measured"])) for r in rows
             if r["metric"] in HEADLINE]
    if not pairs or any(s <= 0 or m <= 0 for s, m in pairs):
        raise SystemExit("fit-benchmark-overheads: no positive headline figures to score")
    return sum(math.log(s / m) ** 2 for s, m in pairs) / len(pairs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="benchmark result files or folders")
    ap.add_argument("--model", required=True)
    ap.add_argument("--hardware", required=True)
    ap.add_argument("--fit", required=True,
                    help="conc=C[,C...]: the fitting set, the results measured at these C")
    ap.add_argument("--frontend-servers", type=int, default=1,
                    help="frontend processes (vLLM's --api-server-count, default 1)")
    ap.add_argument("--start", default="60,30,40,10",
                    help="starting costs: request ms, prompt-token us, prefill ms, "
                         "prefill-token us (each above 0)")
    ap.add_argument("--min-factor", type=float, default=1.08)
    ap.add_argument("--max-evals", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2, help="fabricsim processes at once")
    ap.add_argument("--fabricsim", default="build/bin/fabricsim")
    args = ap.parse_args(argv)
    cs = fit_concurrencies(args.fit)
    files = result_files(args.results)
    fit_files = [f for f in files if concurrency(f) in cs]
    for c in cs:
        if not any(concurrency(f) == c for f in files):
            raise SystemExit(f"fit-benchmark-overheads: --fit: no result measured at C = {c}")
    c = ",".join(str(x) for x in cs)
    start = [float(x) / scale for x, (_, _, scale) in zip(args.start.split(","), PARAMS)]
    if len(start) != len(PARAMS):
        raise SystemExit("fit-benchmark-overheads: --start takes four costs")
    jobs = max(1, min(args.jobs, len(fit_files)))
    order = longest_first(fit_files)

    with tempfile.TemporaryDirectory() as tmp:
        def run_point(k, params):
            out = os.path.join(tmp, f"out{k}")
            cmd = [args.fabricsim, "validate-serving", order[k], "--model", args.model,
                   "--hardware", args.hardware, "--out", out, *sets(params, args.frontend_servers)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stdout[-2000:] + r.stderr)
                raise SystemExit(r.returncode)
            with open(os.path.join(out, "comparison.csv"), newline="") as f:
                return list(csv.DictReader(f))

        def loss(params):
            with ThreadPoolExecutor(jobs) as ex:
                rows = [r for part in ex.map(lambda k: run_point(k, params), range(len(order)))
                        for r in part]
            return score(rows)

        best, best_loss, evals = coordinate_search(loss, start, min_factor=args.min_factor,
                                                   max_evals=args.max_evals)
    print(f"best ({evals} evaluations, {len(fit_files)} points at C = {c}): {fmt(best)} "
          f"(mean squared log error {best_loss:.5f}, rms {100 * math.sqrt(best_loss):.1f}%)")
    print("replay: fabricsim validate-serving " + " ".join(args.results)
          + f" --model {args.model} --hardware {args.hardware} --fitted-on conc={c} "
          + " ".join(sets(best, args.frontend_servers)))
    return 0
