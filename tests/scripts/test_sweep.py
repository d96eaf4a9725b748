"""scripts/sweep on a tiny scenario: parallel grid, resume, failed points, seeds, cluster scripts."""

import csv
import glob
import json
import os
import shutil
import subprocess
import tempfile

from script_test_util import (SCENARIOS, ScriptTestCase, fabricsim_or_skip, run_script, skip_without_matplotlib,
                              write_json)


def tiny_scenario(path, poisson=False):
    """Two 20 KB flows into host 3 of a 4-host switch (a run takes milliseconds)."""
    doc = {
        "name": "tiny sweep base",
        "seed": 1,
        "stop_ns": 5000000,
        "topology": {"type": "single-switch", "hosts": 4},
        "transport": {"cc": "dcqcn"},
        "traffic": {"flows": [{"src": 0, "dst": 3, "size_bytes": 20000, "start_ns": 0},
                              {"src": 1, "dst": 3, "size_bytes": 20000, "start_ns": 0}]},
        "monitor": {"interval_ns": 0},
    }
    if poisson:
        doc["traffic"] = {"poisson": {"cdf": os.path.join(SCENARIOS, "cdf", "fb-hadoop.cdf"), "load": 0.5,
                                      "duration_ns": 50000}}
    return write_json(path, doc)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_results(out):
    with open(os.path.join(out, "results.csv")) as f:
        return list(csv.DictReader(f))


def summary_mtimes(out):
    return {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(out, "points", "*", "summary.json"))}


class Sweep(ScriptTestCase):
    def setUp(self):
        self.env = {"FABRICSIM": fabricsim_or_skip(self)}
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.base = tiny_scenario(os.path.join(self.dir, "base.json"))
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def sweep(self, *args):
        return run_script("sweep", *args, env=self.env)

    def test_grid_in_parallel_resumes_and_records_a_failed_point(self):
        grid = ["--grid", "transport.cc=none,dcqcn", "--grid", "traffic.flows.0.size_bytes=10000,40000"]
        self.assertRan(self.sweep(self.base, *grid, "-j", "2", "--out", self.out))
        rows = read_results(self.out)
        self.assertEqual(len(rows), 4)
        self.assertEqual([(r["transport.cc"], r["traffic.flows.0.size_bytes"]) for r in rows],
                         [("none", "10000"), ("none", "40000"), ("dcqcn", "10000"), ("dcqcn", "40000")])
        for r in rows:
            self.assertEqual((r["status"], r["error"], r["seed"]), ("ok", "", "1"))
            self.assertEqual((r["flows_completed"], r["flows_total"]), ("2", "2"))
            self.assertGreaterEqual(float(r["slowdown_p50"]), 1.0)
            self.assertGreater(float(r["wall_s"]), 0.0)
            self.assertGreater(int(r["events"]), 0)  # from timing.json, no longer the summary
        # The override reached the simulator: a 40 KB first flow takes longer to finish than 10 KB.
        self.assertGreater(int(rows[1]["simulated_ns"]), int(rows[0]["simulated_ns"]))
        for r in rows:
            with open(os.path.join(self.out, "points", r["point"], "summary.json")) as f:
                sizes = sorted(fl["size_bytes"] for fl in json.load(f)["flows"])
            self.assertEqual(sizes, sorted([int(r["traffic.flows.0.size_bytes"]), 20000]))
        before = summary_mtimes(self.out)
        self.assertEqual(len(before), 4)

        again = self.sweep(self.base, *grid, "-j", "2", "--out", self.out)
        self.assertRan(again)
        self.assertIn("4 already done, 0 to run", again.stderr)
        self.assertEqual(summary_mtimes(self.out), before)

        # A bad value fails its points only; the done points are reused, not re-run.
        bad = self.sweep(self.base, "--grid", "transport.cc=none,bogus,dcqcn", grid[2], grid[3], "-j", "2",
                         "--out", self.out)
        self.assertRan(bad, 1)
        self.assertIn("4 already done, 2 to run", bad.stderr)
        rows = read_results(self.out)
        self.assertEqual([r["status"] for r in rows], ["ok", "ok", "failed", "failed", "ok", "ok"])
        for r in rows[2:4]:
            self.assertEqual(r["transport.cc"], "bogus")
            self.assertIn("transport.cc", r["error"])
            self.assertIn('"bogus"', r["error"])
            self.assertEqual(r["flows_total"], "")
            self.assertFalse(os.path.exists(os.path.join(self.out, "points", r["point"], "summary.json")))
        self.assertEqual(summary_mtimes(self.out), before)
        # Failed points are retried on the next run, done ones are not.
        self.assertIn("4 already done, 2 to run", self.sweep(self.base, "--grid", "transport.cc=none,bogus,dcqcn",
                                                             grid[2], grid[3], "--out", self.out).stderr)
        self.assertEqual(glob.glob(os.path.join(self.out, "points", "*.tmp-*")), [])

    def test_a_point_past_its_timeout_fails_alone(self):
        # 2 GB takes 160 ms of simulated time (seconds of wall time); 10 KB takes microseconds.
        proc = self.sweep(self.base, "--grid", "traffic.flows.0.size_bytes=10000,2000000000", "--set",
                          "stop_ns=1000000000", "--timeout", "0.5", "-j", "2", "--out", self.out)
        self.assertRan(proc, 1)
        rows = read_results(self.out)
        self.assertEqual([(r["status"], r["error"]) for r in rows],
                         [("ok", ""), ("failed", "timed out after 0.5 s")])
        self.assertEqual(glob.glob(os.path.join(self.out, "points", "*.tmp-*")), [])
        meta = read_json(os.path.join(self.out, "points", rows[1]["point"], "point.json"))
        self.assertEqual((meta["status"], meta["returncode"]), ("failed", None))
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "points", rows[1]["point"]))),
                         ["point.json", "run.log"])

    def test_seeds_reach_the_scenario(self):
        base = tiny_scenario(os.path.join(self.dir, "poisson.json"), poisson=True)
        self.assertRan(self.sweep(base, "--seeds", "2", "-j", "2", "--out", self.out))
        rows = read_results(self.out)
        self.assertEqual([r["seed"] for r in rows], ["1", "2"])
        flows = []
        for r in rows:
            with open(os.path.join(self.out, "points", r["point"], "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(str(s["seed"]), r["seed"])
            flows.append([(f["src"], f["dst"], f["size_bytes"], f["start_ns"]) for f in s["flows"]])
        self.assertNotEqual(flows[0], flows[1])

    def test_slurm_array_covers_the_pending_points(self):
        grid = ["--grid", "transport.cc=none,dcqcn,dcqcn-paper", "--grid", "traffic.flows.1.start_ns=0,1000",
                "--seeds", "2"]
        proc = self.sweep(self.base, *grid, "--out", self.out, "--slurm", "--slurm-opt=--partition=sim")
        self.assertRan(proc)
        with open(os.path.join(self.out, "sweep.slurm")) as f:
            script = f.read()
        self.assertIn("#SBATCH --array=0-11\n", script)
        self.assertIn("#SBATCH --partition=sim\n", script)
        self.assertIn('--run-point "$SLURM_ARRAY_TASK_ID"', script)
        self.assertEqual(os.listdir(os.path.join(self.out, "points")), [])
        for name in ("sweep.slurm", "collect.slurm", "submit-slurm.sh"):
            path = os.path.join(self.out, name)
            self.assertTrue(os.access(path, os.X_OK), name)
            self.assertEqual(subprocess.run(["bash", "-n", path]).returncode, 0, name)
        with open(os.path.join(self.out, "submit-slurm.sh")) as f:
            self.assertIn("--dependency=afterany:", f.read())

        # What an array task runs; afterwards the array holds only what is left.
        self.assertRan(self.sweep("--out", self.out, "--run-point", "0"))
        self.assertRan(self.sweep(self.base, *grid, "--out", self.out, "--slurm", "-j", "3"))
        with open(os.path.join(self.out, "sweep.slurm")) as f:
            self.assertIn("#SBATCH --array=1-11%3\n", f.read())
        rows = read_results_after_collect(self)
        self.assertEqual([r["status"] for r in rows], ["ok"] + ["missing"] * 11)

    def test_parallel_ssh_command_runs_the_same_points(self):
        proc = self.sweep(self.base, "--grid", "transport.cc=none,dcqcn", "--out", self.out, "--parallel-ssh", ":",
                          "-j", "2")
        self.assertRan(proc)
        cmd = proc.stdout.strip()
        self.assertTrue(cmd.startswith("parallel --sshlogin : --jobs 2 "), cmd)
        self.assertIn("--run-point {}' ::: 0 1;", cmd)
        self.assertTrue(cmd.endswith("--collect"), cmd)
        if shutil.which("parallel") is None:
            self.skipTest("GNU parallel not installed: command checked, not run")
        subprocess.run(["bash", os.path.join(self.out, "parallel-ssh.sh")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=dict(os.environ, **self.env))
        self.assertEqual([r["status"] for r in read_results(self.out)], ["ok", "ok"])

    def test_sweep_file_with_keys_swept_together(self):
        spec = write_json(os.path.join(self.dir, "s.json"), {
            "base": "base.json",
            "grid": {"switch.ecn.kmin_bytes+switch.ecn.kmax_bytes": [[5000, 200000], [100000, 400000]]},
            "set": {"transport.cc": "dcqcn-paper"},
        })
        dry = self.sweep(spec, "--out", self.out, "--dry-run")
        self.assertRan(dry)
        lines = dry.stdout.splitlines()
        self.assertEqual(len(lines), 2)
        self.assertIn('--set transport.cc="dcqcn-paper" --set switch.ecn.kmin_bytes=5000 '
                      "--set switch.ecn.kmax_bytes=200000", lines[0])
        self.assertRan(self.sweep(spec, "--out", self.out, "-j", "2"))
        rows = read_results(self.out)
        self.assertEqual([(r["switch.ecn.kmin_bytes"], r["switch.ecn.kmax_bytes"], r["status"]) for r in rows],
                         [("5000", "200000", "ok"), ("100000", "400000", "ok")])

    def test_bad_arguments_exit_2(self):
        for args, what in ((["--grid", "transport.cc"], "--grid"),
                           (["--grid", "a..b=1"], "dotted key"),
                           (["--grid", "k1+k2=1,2"], "2 values per point"),
                           (["--seeds", "0"], "--seeds")):
            proc = self.sweep(self.base, *args, "--out", self.out)
            self.assertRan(proc, 2)
            self.assertIn(what, proc.stderr)
        proc = self.sweep(os.path.join(self.dir, "missing.json"), "--out", self.out)
        self.assertRan(proc, 2)
        self.assertIn("missing.json", proc.stderr)
        proc = run_script("sweep", self.base, "--out", self.out, "--fabricsim", os.path.join(self.dir, "nope"))
        self.assertRan(proc, 2)
        self.assertIn("--fabricsim", proc.stderr)
        self.assertRan(self.sweep("--out", os.path.join(self.dir, "empty"), "--collect"), 2)

    def test_plot_draws_each_metric(self):
        skip_without_matplotlib(self)
        self.assertRan(self.sweep(self.base, "--grid", "traffic.flows.0.size_bytes=10000,20000,40000",
                                  "--grid", "transport.cc=none,dcqcn", "-j", "2", "--out", self.out, "--plot",
                                  "--metric", "slowdown_p99", "--metric", "simulated_ns"))
        for m in ("slowdown_p99", "simulated_ns"):
            with open(os.path.join(self.out, "plot-%s.png" % m), "rb") as f:
                self.assertEqual(f.read(4), b"\x89PNG")
        proc = self.sweep("--out", self.out, "--collect", "--plot", "--metric", "nonsense")
        self.assertRan(proc, 2)
        self.assertIn("slowdown_p99", proc.stderr)


def read_results_after_collect(test):
    test.assertRan(test.sweep("--out", test.out, "--collect"))
    return read_results(test.out)


class ExampleSweeps(ScriptTestCase):
    def test_every_value_of_the_example_sweeps_is_accepted(self):
        env = {"FABRICSIM": fabricsim_or_skip(self)}
        files = sorted(glob.glob(os.path.join(SCENARIOS, "sweeps", "*.json")))
        sweeps = [f for f in files if "base" in read_json(f)]
        self.assertGreaterEqual(len(sweeps), 2)
        with tempfile.TemporaryDirectory() as tmp:
            for spec in sweeps:
                axes = read_json(spec)["grid"]
                self.assertGreaterEqual(len(axes), 2, spec)
                for key, values in axes.items():
                    # Every value of this axis with the other axes at their first value: the
                    # run stops at 1 ns with 20 us of arrivals, so the CLI checks each override
                    # and builds the fabric and traffic, nothing more.
                    pin = ["--grid=%s=%s" % (k, json.dumps(v[0])) for k, v in axes.items() if k != key]
                    out = os.path.join(tmp, "%s-%s" % (os.path.basename(spec), key))
                    proc = run_script("sweep", spec, *pin, "--seeds", "1", "--set", "stop_ns=1",
                                      "--set", "traffic.poisson.duration_ns=20000", "-j", "2", "--out", out, env=env)
                    self.assertRan(proc)
                    rows = read_results(out)
                    self.assertEqual(len(rows), len(values), (spec, key))
                    self.assertEqual({r["status"] for r in rows}, {"ok"}, (spec, key))
