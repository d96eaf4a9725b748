"""fabricsim-mpi against fabricsim: the same scenario on ns-3's distributed engine gives the same
outputs, byte for byte, with either kernel; what it cannot run yet exits 2 and writes nothing."""

import filecmp
import json
import os
import subprocess
import tempfile
import unittest

SOURCE = os.environ.get("FABRICSIM_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
FABRICSIM = os.environ["FABRICSIM"]
FABRICSIM_MPI = os.environ["FABRICSIM_MPI"]
MPIEXEC = os.environ.get("MPIEXEC") or "mpirun"
KERNELS = ["ns3::DistributedSimulatorImpl", "ns3::NullMessageSimulatorImpl"]
# A DCQCN + PFC leaf-spine incast with web-search load; a fat-tree permutation; a lossy fabric.
SCENARIOS = [os.path.join(SOURCE, "scenarios", "fabric-incast.json"),
             os.path.join(SOURCE, "tests", "mpi", "scenarios", "fat-tree-permutation.json"),
             os.path.join(SOURCE, "tests", "mpi", "scenarios", "lossy-incast.json")]
# Files that name the output folder or the wall clock: every other file must match.
RUN_SPECIFIC = {"provenance.json", "timing.json"}


def mpirun(ranks, *args):
    cmd = [MPIEXEC, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", str(ranks), FABRICSIM_MPI] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=240)


def engine(out):
    with open(os.path.join(out, "provenance.json")) as f:
        return json.load(f)["ns3_engine"]


class OneRankMatchesSequential(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="fabricsim-mpi-test-")
        self.addCleanup(self.tmp.cleanup)

    def assert_same_outputs(self, a, b):
        files = sorted(os.listdir(a))
        self.assertIn("summary.json", files)
        self.assertEqual(files, sorted(os.listdir(b)))
        for f in files:
            if f not in RUN_SPECIFIC:
                self.assertTrue(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False),
                                "%s differs between %s and %s" % (f, a, b))

    def test_every_scenario_both_kernels(self):
        for scenario in SCENARIOS:
            name = os.path.splitext(os.path.basename(scenario))[0]
            seq = os.path.join(self.tmp.name, name + "-seq")
            r = subprocess.run([FABRICSIM, "run", scenario, "--out", seq],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("fct.csv", os.listdir(seq))
            for kernel in KERNELS:
                with self.subTest(scenario=name, kernel=kernel):
                    out = os.path.join(self.tmp.name, name + "-" + kernel.split("::")[1])
                    r = mpirun(1, "run", scenario, "--out", out,
                               "--SimulatorImplementationType=" + kernel)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assert_same_outputs(seq, out)
                    # ... and it did run on the distributed engine.
                    self.assertEqual(engine(out)["simulator"], kernel)
            self.assertEqual(engine(seq)["simulator"], "ns3::DefaultSimulatorImpl")


class CutAcrossTwoRanks(unittest.TestCase):
    """A leaf-spine cut between two ranks (a leaf, its hosts and a spine on each; the two
    leaf-spine links across), DCQCN incast and all-to-all: every FCT and every device counter
    as with the whole fabric on one rank, frames crossing through MPI both ways."""

    def run_program(self, split, kernel):
        cmd = [MPIEXEC, "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd += ["-np", "2", os.environ["REMOTE_LINK_RUN"], "--split=%d" % split,
                "--kernel=" + kernel]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        crossed = sum(int(l.split()[5]) for l in lines if l.startswith("rank "))
        return sorted(l for l in lines if not l.startswith("rank ")), crossed

    def test_both_kernels(self):
        whole, crossed = self.run_program(0, KERNELS[0])
        self.assertEqual(crossed, 0)
        self.assertEqual(sum(1 for l in whole if l.startswith("flow ") and " done 1 " in l), 14)
        for kernel in KERNELS:
            with self.subTest(kernel=kernel):
                cut, crossed = self.run_program(1, kernel)
                self.assertGreater(crossed, 1000)
                self.assertEqual(cut, whole)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="fabricsim-mpi-test-")
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out")

    def check(self, r, field, found):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("fabricsim-mpi: error: <command line>: " + field, r.stderr)
        self.assertIn(found, r.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_unknown_kernel(self):
        self.check(mpirun(1, "run", SCENARIOS[1], "--out", self.out,
                          "--SimulatorImplementationType=ns3::DefaultSimulatorImpl"),
                   "--SimulatorImplementationType", 'found "ns3::DefaultSimulatorImpl"')

    def test_other_commands(self):
        self.check(mpirun(1, "validate", SCENARIOS[1]), "command", 'found "validate"')

    def test_two_ranks_until_partitioned_runs_exist(self):
        self.check(mpirun(2, "run", SCENARIOS[1], "--out", self.out), "mpirun -np", "found 2")

    def test_bad_scenario_exits_2_as_fabricsim_does(self):
        r = mpirun(1, "run", os.path.join(self.tmp.name, "missing.json"), "--out", self.out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("missing.json: expected a readable scenario file", r.stderr)
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
