"""scripts/plot-run on real run folders: an inference run (latency.png, steps.png) and a fabric
run with monitoring (fct-slowdown.png, queue.png, link-util.png); each PNG opens (its signature,
an IHDR of a non-empty image). A folder that is no run exits 2."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

from script_test_util import SCENARIOS, SCRIPTS, fabricsim_or_skip

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


class PlotRunTest(unittest.TestCase):
    def setUp(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed (scripts/setup installs python3-matplotlib)")
        self.fabricsim = fabricsim_or_skip(self)
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def run_cli(self, *args):
        proc = subprocess.run([self.fabricsim] + list(args), capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def plot(self, run):
        return subprocess.run([os.path.join(SCRIPTS, "plot-run"), run], capture_output=True, text=True)

    def assert_pngs(self, run, names):
        proc = self.plot(run)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in names:
            path = os.path.join(run, name)
            self.assertIn(path, proc.stdout.split())
            size = png_size(path)
            self.assertIsNotNone(size, name + " is not a PNG")
            self.assertGreater(size[0] * size[1], 0, name)

    def test_inference_run(self):
        out = os.path.join(self.dir, "inf")
        self.run_cli("run", os.path.join(SCENARIOS, "default.json"), "--set", "serving.requests.count=4",
                     "--backend", "analytical", "--out", out)
        self.assert_pngs(out, ["latency.png", "steps.png"])

    def test_fabric_run_with_monitoring(self):
        out = os.path.join(self.dir, "fab")
        self.run_cli("run", os.path.join(SCENARIOS, "fabric-incast.json"), "--set", "stop_ns=300000",
                     "--set", "monitor.interval_ns=20000", "--out", out)
        self.assert_pngs(out, ["fct-slowdown.png", "queue.png", "link-util.png"])

    def test_a_folder_that_is_no_run_exits_two(self):
        proc = self.plot(self.dir)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("expected a run folder with requests.csv", proc.stderr)


if __name__ == "__main__":
    unittest.main()
