"""fabricsim-mpi against fabricsim: the same scenario on ns-3's distributed engine, on one rank or
cut across several, gives the same outputs, byte for byte, with either kernel; what it cannot
run yet exits 2 and writes nothing."""

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
# What a run across ranks lacks yet (docs/performance.md), turned off in both runs compared.
ACROSS_RANKS = {
    "fabric-incast": ["--set", "pcap.hosts=[]"],
    "fat-tree-permutation": [],
    "lossy-incast": [],
    "ring-deadlock": [],
}
# A PFC deadlock on a 3-switch ring: the pause cycle spans the ranks that cut it.
RING = os.path.join(SOURCE, "tests", "mpi", "scenarios", "ring-deadlock.json")


def mpirun(ranks, *args):
    cmd = [MPIEXEC, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", str(ranks), FABRICSIM_MPI] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=240)


def load(path):
    with open(path) as f:
        return json.load(f)


def engine(out):
    return load(os.path.join(out, "provenance.json"))["ns3_engine"]


class SameOutputs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="fabricsim-mpi-test-")
        self.addCleanup(self.tmp.cleanup)

    def assert_same_outputs(self, a, b):
        files = sorted(os.listdir(a))
        self.assertIn("summary.json", files)
        self.assertIn("fct.csv", files)
        self.assertEqual(files, sorted(os.listdir(b)))
        for f in files:
            if f not in RUN_SPECIFIC:
                self.assertTrue(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False),
                                "%s differs between %s and %s" % (f, a, b))

    def sequential(self, scenario, *args):
        name = os.path.splitext(os.path.basename(scenario))[0]
        out = os.path.join(self.tmp.name, name + "-seq")
        r = subprocess.run([FABRICSIM, "run", scenario, "--out", out] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out


class OneRankMatchesSequential(SameOutputs):
    def test_every_scenario_both_kernels(self):
        for scenario in SCENARIOS:
            name = os.path.splitext(os.path.basename(scenario))[0]
            seq = self.sequential(scenario)
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


class CutAcrossRanks(SameOutputs):
    """`mpirun -np N fabricsim-mpi run`: the fabric cut into N parts, frames and end-of-run
    notices through MPI, every rank's share of the outputs gathered to rank 0."""

    def across(self, scenario, ranks, kernel, *args, code=0):
        name = os.path.splitext(os.path.basename(scenario))[0]
        out = os.path.join(self.tmp.name, "%s-np%d-%s" % (name, ranks, kernel.split("::")[1]))
        r = mpirun(ranks, "run", scenario, "--out", out, "--SimulatorImplementationType=" + kernel,
                   *(ACROSS_RANKS[name] + list(args)))
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertEqual(engine(out)["simulator"], kernel)
        return out

    def test_two_ranks_every_scenario_both_kernels(self):
        for scenario in SCENARIOS:
            name = os.path.splitext(os.path.basename(scenario))[0]
            seq = self.sequential(scenario, *ACROSS_RANKS[name])
            for kernel in KERNELS:
                with self.subTest(scenario=name, kernel=kernel):
                    self.assert_same_outputs(seq, self.across(scenario, 2, kernel))
        # The incast did pause (PFC frames crossed ranks), its five monitor series came from
        # both ranks, and the lossy fabric lost frames.
        incast_dir = os.path.join(self.tmp.name, "fabric-incast-seq")
        for series in ["queue.csv", "link_util.csv", "qp_rate.csv", "cnp.csv", "pause.csv"]:
            with open(os.path.join(incast_dir, series)) as f:
                self.assertGreater(len(f.readlines()), 100, series)
        incast = load(os.path.join(incast_dir, "summary.json"))
        self.assertGreater(incast["pfc"]["pause_frames_sent"], 100)
        lossy = load(os.path.join(self.tmp.name, "lossy-incast-seq", "summary.json"))
        self.assertGreater(lossy["drops"]["total"], 10)

    def test_the_pfc_watchdog_report_from_two_ranks(self):
        watchdog = ('switch.pfc_watchdog={"poll_interval_ns": 2000, "detection_ns": 10000, '
                    '"restoration_ns": 10000, "action": "report"}')
        seq = self.sequential(SCENARIOS[0], "--set", watchdog, *ACROSS_RANKS["fabric-incast"])
        self.assertGreater(load(os.path.join(seq, "summary.json"))["pfc_watchdog"]["triggers"], 0)
        self.assert_same_outputs(seq, self.across(SCENARIOS[0], 2, KERNELS[0], "--set", watchdog))

    def test_a_deadlock_whose_cycle_spans_the_ranks(self):
        seq = os.path.join(self.tmp.name, "ring-deadlock-seq")
        r = subprocess.run([FABRICSIM, "run", RING, "--out", seq], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 3, r.stderr)  # stopped by the deadlock detector
        deadlock = load(os.path.join(seq, "summary.json"))["deadlock"]
        self.assertEqual(deadlock["kind"], "cycle")
        self.assertEqual(len(deadlock["cycle"]), 3)
        for ranks in [2, 3]:
            for kernel in KERNELS:
                with self.subTest(ranks=ranks, kernel=kernel):
                    self.assert_same_outputs(seq, self.across(RING, ranks, kernel, code=3))

    def test_four_ranks_on_the_fat_tree(self):
        seq = self.sequential(SCENARIOS[1], *ACROSS_RANKS["fat-tree-permutation"])
        self.assert_same_outputs(seq, self.across(SCENARIOS[1], 4, KERNELS[0]))

    def test_a_partition_file_that_cuts_host_links(self):
        # Even hosts, leaf0 and spine0 on rank 0; odd hosts, leaf1 and spine1 on rank 1.
        part = {"host%d" % h: h % 2 for h in range(16)}
        part.update({"leaf0": 0, "spine0": 0, "leaf1": 1, "spine1": 1})
        path = os.path.join(self.tmp.name, "partition.json")
        with open(path, "w") as f:
            json.dump(part, f)
        seq = self.sequential(SCENARIOS[2])
        for kernel in KERNELS:
            with self.subTest(kernel=kernel):
                self.assert_same_outputs(seq, self.across(SCENARIOS[2], 2, kernel,
                                                          "--partition", path))


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="fabricsim-mpi-test-")
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out")

    def check(self, r, field, found, source="<command line>"):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("fabricsim-mpi: error: " + source + ": " + field, r.stderr.replace(
            "fabricsim: error: ", "fabricsim-mpi: error: "))
        self.assertIn(found, r.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_unknown_kernel(self):
        self.check(mpirun(1, "run", SCENARIOS[1], "--out", self.out,
                          "--SimulatorImplementationType=ns3::DefaultSimulatorImpl"),
                   "--SimulatorImplementationType", 'found "ns3::DefaultSimulatorImpl"')

    def test_other_commands(self):
        self.check(mpirun(1, "validate", SCENARIOS[1]), "command", 'found "validate"')

    def test_what_ranks_lack_yet(self):
        # Captures across ranks are still to come.
        self.check(mpirun(2, "run", SCENARIOS[0], "--out", self.out),
                   "field 'pcap'", "found captures", SCENARIOS[0])

    def test_a_partition_file_naming_a_rank_past_the_last(self):
        path = os.path.join(self.tmp.name, "partition.json")
        part = {"host%d" % h: 0 for h in range(16)}
        part.update({"leaf0": 0, "spine0": 0, "leaf1": 1, "spine1": 5})
        with open(path, "w") as f:
            json.dump(part, f)
        r = mpirun(2, "run", SCENARIOS[2], "--out", self.out, "--partition", path)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(path, r.stderr)
        self.assertIn("spine1", r.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_bad_scenario_exits_2_as_fabricsim_does(self):
        r = mpirun(1, "run", os.path.join(self.tmp.name, "missing.json"), "--out", self.out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("missing.json: expected a readable scenario file", r.stderr)
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
