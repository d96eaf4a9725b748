"""Sweep plans: the grid of scenario overrides, its points and their stable names.

A plan is a base scenario plus, per point, the `--set key.path=value` overrides that the
fabricsim CLI applies. A point's name (its result directory) comes from its parameters and a
hash of the base file's bytes and every override, so the same point always lands in the same
directory (resumable) and an edited base never reuses stale results.
"""

import hashlib
import itertools
import json
import os
import re

from . import bounded
from .stats import InputProblem

CLI = "<command line>"


def parse_value(text):
    """A value as the CLI reads it: JSON, else a bare string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def split_top_level(text):
    """Splits on commas outside brackets, braces and quotes: '[1,2],[3,4]' -> ['[1,2]', '[3,4]']."""
    parts, depth, quote, cur = [], 0, False, []
    escaped = False
    for ch in text:
        if quote:
            cur.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def check_key(key, where, field):
    if not key or any(not part for part in key.split(".")) or "=" in key:
        raise InputProblem(where, field, "a dotted key path like switch.ecn.kmin_bytes", '"%s"' % key)
    if key == "seed":
        raise InputProblem(where, field, "a scenario key other than seed (use --seeds)", '"seed"')


def parse_grid_arg(arg):
    """'key.path=v1,v2' or 'k1+k2=[a1,b1],[a2,b2]' -> (keys, [values]) where each value is a
    tuple with one entry per key."""
    key, sep, text = arg.partition("=")
    if not sep:
        raise InputProblem(CLI, "--grid", "key.path=v1,v2,...", '"%s"' % arg)
    return make_axis(key.split("+"), [parse_value(t.strip()) for t in split_top_level(text)], CLI, "--grid " + key)


def make_axis(keys, values, where, field):
    for k in keys:
        check_key(k, where, field)
    if not values or any(v == "" for v in values):
        raise InputProblem(where, field, "a non-empty list of values", json.dumps(values))
    tuples = []
    for v in values:
        if len(keys) == 1:
            tuples.append((v,))
        elif isinstance(v, list) and len(v) == len(keys):
            tuples.append(tuple(v))
        else:
            raise InputProblem(where, field, "a list of %d values per point (one per key)" % len(keys), json.dumps(v))
    return (tuple(keys), tuples)


def parse_seeds(text, where=CLI, field="--seeds"):
    """'4' -> [1, 2, 3, 4]; '3,7' -> [3, 7]; a JSON number or list from a sweep file likewise."""
    if isinstance(text, int) and not isinstance(text, bool):
        items, count = None, text
    elif isinstance(text, list):
        items, count = text, None
    else:
        parts = [p.strip() for p in str(text).split(",")]
        if len(parts) == 1:
            items, count = None, _int(parts[0], where, field)
        else:
            items, count = [_int(p, where, field) for p in parts], None
    if items is None:
        if count < 1:
            raise InputProblem(where, field, "a seed count >= 1 or a list of seeds", str(count))
        return list(range(1, count + 1))
    if not items or any(not isinstance(s, int) or isinstance(s, bool) or s < 1 for s in items):
        raise InputProblem(where, field, "seeds that are integers >= 1", json.dumps(items))
    return items


def _int(text, where, field):
    try:
        return int(text)
    except ValueError:
        raise InputProblem(where, field, "an integer", '"%s"' % text)


def read_sweep_file(path):
    """A sweep file: {"base": scenario path (relative to the file), "grid": {key: [values]},
    "seeds": N or [..], "set": {key: value}, "metrics": [names]}."""
    doc = bounded.load_json(path, "sweep file")
    if not isinstance(doc, dict):
        raise InputProblem(path, "", "a JSON object", type(doc).__name__)
    allowed = {"description", "base", "grid", "seeds", "set", "metrics"}
    for k in doc:
        if k not in allowed:
            raise InputProblem(path, k, "a known key (one of: %s)" % ", ".join(sorted(allowed)), '"%s"' % k)
    if not isinstance(doc.get("base"), str):
        raise InputProblem(path, "base", "a scenario path", json.dumps(doc.get("base")))
    grid = doc.get("grid", {})
    if not isinstance(grid, dict):
        raise InputProblem(path, "grid", 'an object {"key.path": [values]}', json.dumps(grid))
    axes = []
    for key, values in grid.items():
        if not isinstance(values, list):
            raise InputProblem(path, "grid." + key, "a list of values", json.dumps(values))
        axes.append(make_axis(key.split("+"), values, path, "grid." + key))
    sets = doc.get("set", {})
    if not isinstance(sets, dict):
        raise InputProblem(path, "set", 'an object {"key.path": value}', json.dumps(sets))
    metrics = doc.get("metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise InputProblem(path, "metrics", "a list of metric names", json.dumps(metrics))
    base = os.path.join(os.path.dirname(os.path.abspath(path)), doc["base"])
    seeds = parse_seeds(doc["seeds"], path, "seeds") if "seeds" in doc else None
    return {"base": base, "axes": axes, "seeds": seeds, "sets": sets, "metrics": metrics}


def encode(value):
    """The --set text for a value (compact JSON, which the CLI parses back to the same value)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def display(value):
    """How a value reads in results.csv and point names: strings bare, the rest as JSON."""
    return value if isinstance(value, str) else encode(value)


def _slug(text):
    return re.sub(r"[^A-Za-z0-9._=,+-]", "_", text)


def expand(base, base_bytes, axes, seeds, fixed):
    """Points of the cartesian product of the axes (then seeds), in grid order.

    Each point: {"name", "params": {key: value}, "seed": int or None, "sets": ["k=v", ...]}.
    """
    base_hash = hashlib.sha1(base_bytes).hexdigest()
    fixed_sets = ["%s=%s" % (k, encode(v)) for k, v in fixed.items()]
    swept = [k for keys, _ in axes for k in keys]
    for k in swept:
        if k in fixed:
            raise InputProblem(CLI, "--set " + k, "a key that is not also swept", '"%s"' % k)
    if len(set(swept)) != len(swept):
        raise InputProblem(CLI, "--grid", "each key swept once", ", ".join(swept))
    points = []
    for combo in itertools.product(*[values for _, values in axes]):
        params = {}
        for (keys, _), values in zip(axes, combo):
            params.update(zip(keys, values))
        for seed in seeds if seeds else [None]:
            sets = fixed_sets + ["%s=%s" % (k, encode(v)) for k, v in params.items()]
            if seed is not None:
                sets.append("seed=%d" % seed)
            ident = hashlib.sha1(json.dumps([base_hash, sets]).encode()).hexdigest()[:10]
            label = ",".join("%s=%s" % (k.split(".")[-1], display(v)) for k, v in params.items())
            if seed is not None:
                label += ("," if label else "") + "seed=%d" % seed
            name = "%s-%s" % (_slug(label)[:100] or "base", ident)
            points.append({"name": name, "params": params, "seed": seed, "sets": sets})
    return points
