"""Cluster launchers: a Slurm job array, or a GNU parallel command over ssh.

Both run `scripts/sweep --out DIR --run-point I` for each pending point index I of DIR/sweep.json
(the same atomic, resumable point runner as a local sweep) and then `scripts/sweep --out DIR
--collect`. They need the repository, the fabricsim binary and DIR at the same paths on every
node (a shared file system).
"""

import os
import shlex
import stat
import sys


def compress_ranges(indexes):
    """[0, 1, 2, 5, 7, 8] -> '0-2,5,7-8' (Slurm --array syntax)."""
    parts = []
    start = prev = None
    for i in sorted(indexes):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            parts.append(_range(start, prev))
            start = prev = i
    if start is not None:
        parts.append(_range(start, prev))
    return ",".join(parts)


def _range(a, b):
    return str(a) if a == b else "%d-%d" % (a, b)


def _sweep_cmd(out, *args):
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sweep")
    return " ".join(shlex.quote(a) for a in [sys.executable, script, "--out", out] + list(args))


def _write_script(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def write_slurm(out, pending, jobs=None, timeout=None, extra=(), plot=False):
    """Writes DIR/sweep.slurm (array over the pending points), DIR/collect.slurm and
    DIR/submit-slurm.sh (submits both, the collector after the array); returns the last path."""
    out = os.path.abspath(out)
    logs = os.path.join(out, "slurm-logs")
    os.makedirs(logs, exist_ok=True)
    array = compress_ranges(pending) + ("%%%d" % jobs if jobs else "")
    lines = [
        "#!/bin/bash",
        "# fabricsim sweep: one array task per pending point of %s/sweep.json (%d points)." % (out, len(pending)),
        "#SBATCH --job-name=fabricsim-sweep",
        "#SBATCH --array=%s" % array,
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --output=%s/%%A_%%a.log" % logs,
    ]
    if timeout:
        # Slurm's limit (minutes) leaves 1-2 minutes beyond the point's own timeout for start-up.
        lines.append("#SBATCH --time=%d" % (int(timeout) // 60 + 2))
    lines += ["#SBATCH %s" % e for e in extra]
    lines += ["", "exec " + _sweep_cmd(out, "--run-point", "$SLURM_ARRAY_TASK_ID").replace(
        "'$SLURM_ARRAY_TASK_ID'", '"$SLURM_ARRAY_TASK_ID"'), ""]
    _write_script(os.path.join(out, "sweep.slurm"), "\n".join(lines))
    collect = ["#!/bin/bash", "# Collects every point of %s into results.csv." % out,
               "#SBATCH --job-name=fabricsim-sweep-collect", "#SBATCH --cpus-per-task=1",
               "#SBATCH --output=%s/collect-%%j.log" % logs]
    collect += ["#SBATCH %s" % e for e in extra]
    collect += ["", "exec " + _sweep_cmd(out, "--collect", *(["--plot"] if plot else [])), ""]
    _write_script(os.path.join(out, "collect.slurm"), "\n".join(collect))
    submit = [
        "#!/bin/bash",
        "# Submits the point array, then the collector once every array task has ended (ok or not).",
        "set -euo pipefail",
        'jid=$(sbatch --parsable %s)' % shlex.quote(os.path.join(out, "sweep.slurm")),
        'sbatch --dependency=afterany:"${jid%%;*}" %s' % shlex.quote(os.path.join(out, "collect.slurm")),
        "",
    ]
    path = os.path.join(out, "submit-slurm.sh")
    _write_script(path, "\n".join(submit))
    return path


def parallel_command(out, pending, hosts, jobs=None, plot=False):
    """The GNU parallel command line (one line, then the collector)."""
    out = os.path.abspath(out)
    login = ["--sshloginfile", hosts] if os.path.isfile(hosts) or hosts == ".." else ["--sshlogin", hosts]
    args = ["parallel"] + login + (["--jobs", str(jobs)] if jobs else []) + [
        "--joblog", os.path.join(out, "parallel.joblog"), "--line-buffer", "--tag"]
    run = _sweep_cmd(out, "--run-point") + " {}"
    cmd = " ".join(shlex.quote(a) for a in args) + " " + shlex.quote(run) + " ::: " + " ".join(
        str(i) for i in pending)
    return cmd + "; " + _sweep_cmd(out, "--collect", *(["--plot"] if plot else []))


def write_parallel(out, pending, hosts, jobs=None, plot=False):
    cmd = parallel_command(out, pending, hosts, jobs, plot)
    path = os.path.join(os.path.abspath(out), "parallel-ssh.sh")
    _write_script(path, "#!/bin/bash\n# Runs the pending sweep points over ssh with GNU parallel, then collects.\n"
                  + cmd + "\n")
    return path, cmd
