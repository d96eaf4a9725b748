"""scripts/ns3-run: resolves a program name, builds only that target and runs it with the
arguments given; unknown names exit 2. Runs against the test's own build tree (BUILD_DIR),
where the programs are already built, so it never starts a second build tree."""

import os
import re
import subprocess
import tempfile
import unittest

from script_test_util import SCRIPTS

RUNNER = os.path.join(SCRIPTS, "ns3-run")


def ns3_run(*args, cwd=None):
    return subprocess.run([RUNNER] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, cwd=cwd, env=dict(os.environ, JOBS="1"))


class Ns3RunTest(unittest.TestCase):
    def setUp(self):
        build = os.environ.get("BUILD_DIR")
        if not build or not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
            self.skipTest("set BUILD_DIR to a configured build tree (ctest does)")
        if not os.path.isfile(os.path.join(build, "bin", "incast-walkthrough")):
            self.skipTest("incast-walkthrough not built in %s" % build)

    def test_unknown_program_exits_2_and_lists_programs(self):
        for name in ("no-such-program", "scratch/no-such-program.cc", "../etc"):
            r = ns3_run(name, "--x=1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("unknown program", r.stderr)
            self.assertIn("incast-walkthrough", r.stderr)  # the list of what exists
            self.assertEqual(r.stdout, "")

    def test_runs_scratch_program_with_its_arguments(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = ns3_run("scratch/incast-walkthrough.cc", "--senders=2", "--flowKb=50",
                        "--out=q.csv", cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("2 x 50 KB -> host 2", r.stdout)
            self.assertEqual(r.stdout.count("\nflow "), 2, r.stdout)
            # Relative program paths resolve from the caller's directory.
            with open(os.path.join(tmp, "q.csv")) as f:
                rows = f.read().splitlines()
            self.assertEqual(rows[0], "time_us,bytes")
            self.assertGreater(len(rows), 50)
            self.assertGreater(max(int(r.split(",")[1]) for r in rows[1:]), 0)

    def test_ns3_attribute_arguments_reach_the_program(self):
        # Two DCQCN senders into one port: CNPs cut flow 0 below 70 Gb/s unless MinRate forbids it.
        def lowest_rate(*extra):
            r = ns3_run("scratch/incast-walkthrough", "--senders=2", "--flowKb=500",
                        "--out=" + os.devnull, *extra)
            self.assertEqual(r.returncode, 0, r.stderr)
            m = re.search(r"lowest rate of flow 0 ([0-9.]+) Gb/s", r.stdout)
            self.assertIsNotNone(m, r.stdout)
            return float(m.group(1))

        self.assertLess(lowest_rate(), 70)
        self.assertEqual(lowest_rate("--ns3::Dcqcn::MinRate=70Gbps"), 70)

    def test_program_exit_code_is_returned(self):
        r = ns3_run("incast-walkthrough", "--senders=0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--senders", r.stderr)
        r = ns3_run("incast-walkthrough", "--cc=no-such-cc")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no-such-cc", r.stderr)


if __name__ == "__main__":
    unittest.main()
