"""Running one sweep point atomically, and collecting every point into results.csv.

A point runs `fabricsim run BASE --set ... --out DIR/points/NAME.tmp-HOST-PID`; the finished
directory (CLI outputs, run.log, point.json with status and error) is then renamed to
DIR/points/NAME, so a point directory exists only once the point is done.
"""

import csv
import io
import json
import os
import shutil
import socket
import subprocess
import time

METRICS = [
    ("flows_completed", ("flows_completed",)),
    ("flows_total", ("flows_total",)),
    ("slowdown_p50", ("slowdown", "p50")),
    ("slowdown_p95", ("slowdown", "p95")),
    ("slowdown_p99", ("slowdown", "p99")),
    ("drops_total", ("drops", "total")),
    ("pfc_pause_frames", ("pfc", "pause_frames_sent")),
    ("queue_max_bytes", ("queue", "max_bytes")),
    ("queue_p95_bytes", ("queue", "p95_bytes")),
    ("queue_p99_bytes", ("queue", "p99_bytes")),
    ("ecn_marked", ("nic", "ecn_marked")),
    ("simulated_ns", ("sim", "simulated_ns")),
]
# From timing.json: how the run went, not what it found.
TIMING = [("events", ("events",)), ("wall_s", ("wall_s",))]
METRIC_NAMES = [m for m, _ in METRICS] + [m for m, _ in TIMING]


def point_dir(out, point):
    return os.path.join(out, "points", point["name"])


def read_point(out, point):
    """point.json of a finished point, or None when the point has not finished."""
    try:
        with open(os.path.join(point_dir(out, point), "point.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def is_done(out, point):
    meta = read_point(out, point)
    return meta is not None and meta.get("status") == "ok"


def command(plan, point, out_dir):
    return [plan["fabricsim"], "run", plan["base"], "--no-progress", "--out", out_dir] + [
        a for s in point["sets"] for a in ("--set", s)]


def _error_line(log, rc):
    """The CLI's own message (its error line, else its last 'fabricsim:' line), else the exit status."""
    lines = [l.strip() for l in log.splitlines() if l.strip()]
    named = [l for l in lines if l.startswith("fabricsim: error: ")]
    if named:
        return named[-1][len("fabricsim: error: "):]
    if rc < 0:
        return "killed by signal %d" % -rc
    named = [l for l in lines if l.startswith("fabricsim: ")]
    if named:
        return "exit code %d: %s" % (rc, named[-1][len("fabricsim: "):])
    return "exit code %d%s" % (rc, (": " + lines[-1]) if lines else "")


def run_point(plan, point, out, timeout=None):
    """Runs one point unless it is already done; returns its point.json dict (with "skipped")."""
    meta = read_point(out, point)
    if meta is not None and meta.get("status") == "ok":
        return dict(meta, skipped=True)
    final = point_dir(out, point)
    tmp = "%s.tmp-%s-%d" % (final, socket.gethostname(), os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    cmd = command(plan, point, tmp)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        rc, log = proc.returncode, proc.stdout.decode(errors="replace")
        error = "" if rc == 0 else _error_line(log, rc)
    except subprocess.TimeoutExpired as e:
        rc, log = None, (e.stdout or b"").decode(errors="replace")
        error = "timed out after %g s" % timeout
        # The killed CLI could not remove its staging directory.
        for name in os.listdir(tmp):
            if name.startswith(".partial-"):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
    except OSError as e:
        rc, log, error = None, "", "cannot run %s: %s" % (cmd[0], e.strerror)
    wall = time.time() - t0
    if rc == 0 and not os.path.exists(os.path.join(tmp, "summary.json")):
        error = "no summary.json written"
    status = "ok" if not error else "failed"
    meta = {
        "name": point["name"],
        "params": point["params"],
        "seed": point["seed"],
        "status": status,
        "error": error,
        "returncode": rc,
        "wall_s": round(wall, 3),
        "host": socket.gethostname(),
        "command": cmd[:5] + ["<point dir>"] + cmd[6:],
    }
    with open(os.path.join(tmp, "run.log"), "w") as f:
        f.write(log)
    with open(os.path.join(tmp, "point.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    _publish(tmp, final)
    return dict(meta, skipped=False)


def _publish(tmp, final):
    """Renames the finished temporary directory into place, replacing a failed earlier try."""
    old = None
    if os.path.exists(final):
        old = "%s.old-%d" % (tmp, os.getpid())
        os.rename(final, old)
    try:
        os.rename(tmp, final)
    except OSError:
        # Another runner published the same point meanwhile: keep theirs.
        shutil.rmtree(tmp, ignore_errors=True)
    if old:
        shutil.rmtree(old, ignore_errors=True)


def clean_stale(out):
    """Removes temporary directories this host left behind in a killed run."""
    points = os.path.join(out, "points")
    if not os.path.isdir(points):
        return
    marker = ".tmp-%s-" % socket.gethostname()
    for name in os.listdir(points):
        if marker in name:
            pid = name.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(os.path.join(points, name), ignore_errors=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dig(doc, path):
    for k in path:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def point_row(plan, point, out):
    """One results.csv row (dict) for a point: parameters, seed, status, error, metrics."""
    from .grid import display

    row = {k: display(v) for k, v in point["params"].items()}
    row["seed"] = point["seed"] if point["seed"] is not None else plan["base_seed"]
    meta = read_point(out, point)
    if meta is None:
        row.update(status="missing", error="not run yet")
    else:
        row.update(status=meta["status"], error=meta["error"])
        d = point_dir(out, point)
        summary = _load_json(os.path.join(d, "summary.json"))
        timing = _load_json(os.path.join(d, "timing.json"))
        for name, path in METRICS:
            v = _dig(summary, path)
            row[name] = "" if v is None else v
        for name, path in TIMING:
            v = _dig(timing, path)
            row[name] = "" if v is None else (round(v, 6) if isinstance(v, float) else v)
    row["point"] = point["name"]
    return row


def _load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def collect(plan, out):
    """Writes DIR/results.csv atomically; returns the rows."""
    keys = plan["keys"]
    columns = keys + ["seed", "status", "error"] + METRIC_NAMES + ["point"]
    rows = [point_row(plan, p, out) for p in plan["points"]]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, restval="", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    path = os.path.join(out, "results.csv")
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w", newline="") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)
    return rows
