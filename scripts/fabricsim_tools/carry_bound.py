"""How far hardware facts alone carry measured collective timings from one system to another.

A closed-form companion to `fabricsim calibrate --params`: it fits, on measured tables only (no
simulation), the model

    t = L * (clock_fit / clock) + beta * link_bytes / link_rate + gamma * (S / n) / hbm_rate

(launch in SM cycles, ring or in-switch bytes over the scenario's NVLink rate, the out-of-place
own-share copy of all-gather and reduce-scatter over the HBM rate) by least squares on the
relative error, and applies it unchanged to other systems whose facts come from their scenarios.
Fitting each (collective, GPU count) cell of every table on its own then shows which side does
not carry: the intercept (in cycles) or the bandwidth coefficient.
"""

import argparse
import csv
import json
import math
import os
import sys

from . import bounded
from .stats import InputProblem, parse_bytes

OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
DTYPE_BYTES = {"half": 2, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "float": 4, "float32": 4}
_RATE_UNITS = {"bps": 1 / 8, "Bps": 1}
_PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_rate(text, file, field):
    """'370.8GBps' -> 3.708e11 bytes/s; '100Gbps' -> 1.25e10."""
    t = str(text).strip()
    for unit, scale in _RATE_UNITS.items():
        if t.endswith(unit):
            num, prefix = t[:-len(unit)], ""
            if num and num[-1] in _PREFIX:
                num, prefix = num[:-1], num[-1]
            try:
                value = float(num) * _PREFIX[prefix] * scale
            except ValueError:
                break
            if value > 0 and math.isfinite(value):
                return value
    raise InputProblem(file, field, 'a positive rate like "370.8GBps" or "400Gbps"', '"%s"' % text)


class System:
    """The facts of a scenario the model needs."""

    def __init__(self, path):
        doc = bounded.load_json(path, "scenario JSON file")
        def section(parent, key, name):
            value = parent.get(key, {})
            if not isinstance(value, dict):
                raise InputProblem(path, name, "an object", type(value).__name__)
            return value

        if not isinstance(doc, dict):
            raise InputProblem(path, "", "a scenario object", type(doc).__name__)
        attrs = section(doc, "attributes", "attributes")
        link = section(section(doc, "topology", "topology"), "host_link", "topology.host_link")
        self.path = path
        self.link = parse_rate(link.get("rate"), path, "topology.host_link.rate")
        key = "ns3::CollectiveExecutor::MemoryBandwidth"
        self.hbm = parse_rate(attrs.get(key), path, "attributes." + key)
        key = "ns3::NcclTuner::GpuClock"
        try:
            self.clock = float(attrs.get(key))
        except (TypeError, ValueError):
            self.clock = -1
        if not self.clock > 0:
            raise InputProblem(path, "attributes." + key, "the SM clock in MHz (> 0)", repr(attrs.get(key)))
        self.in_switch = str(attrs.get("ns3::NcclTuner::InNetworkReduction", "false")).lower() == "true"
        key = "ns3::NcclTuner::NvlsBandwidthScale"
        try:
            self.nvls_scale = float(attrs.get(key, 0.85))
        except (TypeError, ValueError):
            self.nvls_scale = -1
        if not 0 < self.nvls_scale <= 1:
            raise InputProblem(path, "attributes." + key, "a fraction in (0, 1]", repr(attrs.get(key)))


class Point:
    def __init__(self, op, ranks, size, us):
        self.op, self.ranks, self.bytes, self.us = op, ranks, size, us


def read_table(path):
    """The corpus CSV layout: op_name, nccl_dtype, num_gpus, message_size (elements), latency (ms)."""
    points = []
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise InputProblem(path, "", "a readable measurement CSV", str(e))
    for line, r in enumerate(rows, start=2):
        where = "%s:%d" % (path, line)
        for field in ("op_name", "nccl_dtype", "num_gpus", "message_size", "latency"):
            if r.get(field) in (None, ""):
                raise InputProblem(where, field, "a value", "nothing")
        if r["op_name"] not in OPS:
            raise InputProblem(where, "op_name", "one of " + ", ".join(OPS), '"%s"' % r["op_name"])
        if r["nccl_dtype"] not in DTYPE_BYTES:
            raise InputProblem(where, "nccl_dtype", "one of " + ", ".join(sorted(DTYPE_BYTES)),
                               '"%s"' % r["nccl_dtype"])
        try:
            ranks, elems, ms = int(r["num_gpus"]), int(r["message_size"]), float(r["latency"])
        except ValueError:
            raise InputProblem(where, "num_gpus/message_size/latency", "integers and a number",
                               "%s / %s / %s" % (r["num_gpus"], r["message_size"], r["latency"]))
        if ranks < 2 or elems <= 0 or not (ms > 0 and math.isfinite(ms)):
            raise InputProblem(where, "num_gpus/message_size/latency", ">= 2 GPUs, > 0 elements, > 0 ms",
                               "%d / %d / %s" % (ranks, elems, r["latency"]))
        points.append(Point(r["op_name"], ranks, elems * DTYPE_BYTES[r["nccl_dtype"]], ms * 1e3))
    if not points:
        raise InputProblem(path, "", "at least one measured point", "none")
    return points


def features(p, system, fit_clock):
    """(launch, wire, copy) in us per unit coefficient."""
    n, s = p.ranks, float(p.bytes)
    if p.op == "all_reduce":
        link_bytes = 2 * (n - 1) / n * s
        if system.in_switch:
            link_bytes = min(link_bytes, s * (1 + 1 / n) / system.nvls_scale)
    else:
        link_bytes = (n - 1) / n * s
    copy = s / n / system.hbm * 1e6 if p.op in ("all_gather", "reduce_scatter") else 0.0
    return [fit_clock / system.clock, link_bytes / system.link * 1e6, copy]


def solve(a, b):
    """Gaussian elimination with partial pivoting; None when singular."""
    k = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(k):
        piv = max(range(i, k), key=lambda r: abs(m[r][i]))
        if abs(m[piv][i]) < 1e-12 * max(1.0, max(abs(x) for x in m[piv][:k])):
            return None
        m[i], m[piv] = m[piv], m[i]
        for r in range(k):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][k] / m[i][i] for i in range(k)]


def fit(rows, cols):
    """Least squares on the relative error over feature columns `cols`; rows are (features, us)."""
    k = len(cols)
    ata = [[0.0] * k for _ in range(k)]
    atb = [0.0] * k
    for x, y in rows:
        w = [x[c] / y for c in cols]
        for i in range(k):
            atb[i] += w[i]
            for j in range(k):
                ata[i][j] += w[i] * w[j]
    return solve(ata, atb)


def mape(rows, cols, coef):
    return 100.0 * sum(abs(sum(x[c] * v for c, v in zip(cols, coef)) - y) / y for x, y in rows) / len(rows)


def analyse(fit_table, fit_system, carried, min_bytes, max_bytes, fit_label="fit"):
    """Fits on (table, System); carried is [(label, table, System)]. Returns a result dict."""
    fit_clock = fit_system.clock

    def rows(points, system):
        return [(features(p, system, fit_clock), p.us, p) for p in points if min_bytes <= p.bytes <= max_bytes]

    fit_rows = rows(fit_table, fit_system)
    if len(fit_rows) < 3:
        raise InputProblem("<command line>", "--min-bytes/--max-bytes", "at least 3 fitted points in range",
                           "%d" % len(fit_rows))
    all_cols = (0, 1, 2)
    coef = fit([(x, y) for x, y, _ in fit_rows], all_cols)
    if coef is None:
        raise InputProblem("<command line>", "--fit", "a table that identifies launch, wire and copy terms",
                           "a singular fit")
    out = {"coefficients": {"launch_us": coef[0], "wire": coef[1], "copy": coef[2]}, "systems": []}
    for label, table, system in [(fit_label, fit_table, fit_system)] + list(carried):
        r = rows(table, system)
        if not r:
            raise InputProblem(system.path, "", "measured points in the size range", "none")
        entry = {"label": label, "points": len(r), "mape": mape([(x, y) for x, y, _ in r], all_cols, coef),
                 "cells": {}}
        own = fit([(x, y) for x, y, _ in r], all_cols)
        entry["self_mape"] = mape([(x, y) for x, y, _ in r], all_cols, own) if own else None
        entry["self_coefficients"] = own
        for op in OPS:
            for n in sorted({p.ranks for _, _, p in r if p.op == op}):
                cell = [(x, y) for x, y, p in r if p.op == op and p.ranks == n]
                # Within a cell wire and copy are both proportional to S: one bandwidth column.
                merged = [([x[0], x[1] + x[2] * coef[2] / coef[1]], y) for x, y in cell]
                two = fit(merged, (0, 1)) if len(cell) >= 2 else None
                entry["cells"][(op, n)] = {"mape": mape(cell, all_cols, coef), "self": two}
        out["systems"].append(entry)
    return out


def format_report(result):
    c = result["coefficients"]
    lines = ["carry-bound: t = %.2f us x clock ratio + %.3f x link bytes / link rate + %.3f x own share / HBM rate"
             % (c["launch_us"], c["wire"], c["copy"])]
    if c["wire"] > 0 and c["copy"] > 0:
        lines.append("  (link efficiency %.3f, copy at %.3f of the HBM rate)" % (1 / c["wire"], 1 / c["copy"]))
    lines += ["", "%-34s %7s %9s %9s   %s" % ("system", "points", "MAPE %", "own fit %",
                                                  "own fit: launch us, wire, copy")]
    for s in result["systems"]:
        own = s["self_coefficients"]
        lines.append("%-34s %7d %9.2f %9s   %s" % (
            s["label"], s["points"], s["mape"], "%.2f" % s["self_mape"] if own else "-",
            "%.2f, %.3f, %.3f" % tuple(own) if own else "-"))
    fit_cells = result["systems"][0]["cells"]
    lines += ["", "per cell: carried MAPE %, and the cell fitted on its own: launch (us at the fit clock) and "
              "bandwidth coefficient, as ratios to the fitted system's cell"]
    for s in result["systems"][1:]:
        lines.append("  %s" % s["label"])
        for key, cell in s["cells"].items():
            ref = fit_cells.get(key, {}).get("self")
            mine = cell["self"]
            ratio = ("launch x %.2f  bandwidth x %.2f" % (mine[0] / ref[0], mine[1] / ref[1])
                     if ref and mine and ref[0] > 0 and ref[1] > 0 else "-")
            lines.append("    %-15s %d GPUs  %6.2f   %s" % (key[0], key[1], cell["mape"], ratio))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="carry-bound", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", required=True, metavar="TABLE.csv:SCENARIO.json",
                    help="the measured table to fit and the scenario of its system")
    ap.add_argument("--carry", action="append", default=[], metavar="TABLE.csv:SCENARIO.json",
                    help="a measured table to predict with the fitted coefficients (repeatable)")
    ap.add_argument("--min-bytes", default="1MiB", help="smallest message counted (default 1MiB)")
    ap.add_argument("--max-bytes", default="1024GiB", help="largest message counted (default 1024GiB)")
    args = ap.parse_args(argv)
    try:
        def pair(text):
            table, sep, scenario = text.rpartition(":")
            if not sep or not table or not scenario:
                raise InputProblem("<command line>", "--fit/--carry", "TABLE.csv:SCENARIO.json", '"%s"' % text)
            return read_table(table), System(scenario), table
        fit_table, fit_system, fit_path = pair(args.fit)
        carried = [(os.path.basename(path), t, s) for t, s, path in (pair(c) for c in args.carry)]
        lo = parse_bytes(args.min_bytes, field="--min-bytes")
        hi = parse_bytes(args.max_bytes, field="--max-bytes")
        result = analyse(fit_table, fit_system, carried, lo, hi, os.path.basename(fit_path) + " (fitted)")
    except InputProblem as e:
        print("carry-bound: error: %s" % e, file=sys.stderr)
        return 2
    sys.stdout.write(format_report(result))
    return 0
