"""Fit the serving loop's engine overheads on measured vLLM runs (see --help).

Runs `fabricsim validate-serving` over a grid of `serving.execution.step_overhead` and
`sequence_overhead` values on the runs given (the fitting set: the Llama-3.1-8B run only, by the
rule of docs/validation.md) and scores each point by the root mean square of the signed
percentage errors of the target metrics (TPOT mean, throughput, TTFT median, E2E mean). Prints
every point and the best; the best becomes the parameters' defaults, by hand. The defaults
were fitted with compute priced as validate-serving prices it by default (for the RTX PRO 6000
runs, the calibration measured on that GPU); `--compute-calibration FILE|none` fits on another
calibration or on the plain roofline.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

TARGETS = ("TPOT Mean", "Throughput", "TTFT Median", "E2E Mean")


def grid(text, unit):
    """'0:5:0.5' -> [0, 0.5, ..., 5] (inclusive), as strings with the unit."""
    parts = [float(x) for x in text.split(":")]
    if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
        raise SystemExit(f"fit-serving-overheads: a grid is LO:HI:STEP, got {text!r}")
    lo, hi, step = parts
    n = int(math.floor((hi - lo) / step + 1e-9)) + 1
    return [f"{lo + i * step:g}{unit}" for i in range(n)]


def score(summary):
    """RMS of the target metrics' errors (%) over every run in a validate-serving summary."""
    errs = [run["metrics"][m]["error_pct"] for run in summary["runs"] for m in TARGETS]
    return math.sqrt(sum(e * e for e in errs) / len(errs)), errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="measured run directories (the fitting set)")
    ap.add_argument("--fabricsim", default="build/bin/fabricsim", help="the fabricsim binary")
    ap.add_argument("--step", default="0:5:0.25", help="step_overhead grid in ms, LO:HI:STEP")
    ap.add_argument("--sequence", default="0:40:5", help="sequence_overhead grid in us")
    ap.add_argument("--compute-calibration",
                    help="passed to validate-serving: a calibration file, or none for the plain "
                         "roofline (default: validate-serving's own, per GPU, which the defaults "
                         "were fitted on)")
    args = ap.parse_args(argv)
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        for so in grid(args.step, "ms"):
            for qo in grid(args.sequence, "us"):
                out = os.path.join(tmp, "out")
                cmd = [args.fabricsim, "validate-serving", *args.runs, "--out", out,
                       *(["--compute-calibration", args.compute_calibration]
                         if args.compute_calibration else []),
                       "--set", f"serving.execution.step_overhead={so}",
                       "--set", f"serving.execution.sequence_overhead={qo}"]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.stderr.write(r.stdout + r.stderr)
                    return r.returncode
                with open(os.path.join(out, "summary.json")) as f:
                    rms, errs = score(json.load(f))
                print(f"step_overhead {so:>7} sequence_overhead {qo:>6}  rms {rms:6.2f}%  "
                      + " ".join(f"{e:+6.1f}" for e in errs))
                if best is None or rms < best[0]:
                    best = (rms, so, qo)
    print(f"best: step_overhead {best[1]}, sequence_overhead {best[2]} (rms {best[0]:.2f}% over "
          f"{', '.join(TARGETS)})")
    return 0
