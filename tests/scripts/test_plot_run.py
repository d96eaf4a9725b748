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

# An nccl-tests all_gather log of 4 ranks (two sizes).
NCCL_LOG = """# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 1024(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid   1 on node device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   2 on node device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid   3 on node device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid   4 on node device  3 [0x4a] NVIDIA H100 80GB HBM3
#                                      out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024            64     float    none      -1    20.50    0.05    0.04      0    20.20    0.05    0.04      0
     1048576         65536     float    none      -1   130.25    8.05    6.04      0   130.00    8.07    6.05      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 3.04
"""


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

    def test_calibrate_folder_gets_a_png_beside_its_svg(self):
        out = os.path.join(self.dir, "cal")
        log = os.path.join(self.dir, "nccl.log")
        with open(log, "w") as f:
            f.write(NCCL_LOG)
        scenario = os.path.join(self.dir, "s.json")
        with open(scenario, "w") as f:
            json.dump({"topology": {"type": "single-switch", "hosts": 4,
                                    "host_link": {"rate": "100Gbps", "delay": "1us"}}}, f)
        self.run_cli("calibrate", log, "--scenario", scenario, "--out", out)
        self.assertTrue(os.path.exists(os.path.join(out, "busbw.svg")))
        self.assert_pngs(out, ["busbw.png"])


if __name__ == "__main__":
    unittest.main()
