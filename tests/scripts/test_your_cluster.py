"""docs/your-cluster.md runs as written: every ```sh block, in order, in a fresh folder that
holds the clone's data/, collectives/ and scripts/ (as its root would); then the results table
the page ends with is held to the runs' summary.json, and the values the page carries by hand
from the collective fit to that fit's overlay."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from script_test_util import SOURCE_DIR, fabricsim_or_skip, skip_without_matplotlib

DOC = os.path.join(SOURCE_DIR, "docs", "your-cluster.md")


def doc_text():
    with open(DOC) as f:
        return f.read()


def sh_blocks(text):
    return re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)


def results_table(text):
    """(folder, TTFT mean, TPOT mean, throughput) of each row of 'What the runs give'."""
    section = text.split("## What the runs give", 1)[1]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\|[^|]*\| `([^`]+)` \| ([0-9.]+) \| ([0-9.]+) \| ([0-9]+) \|$", line)
        if m:
            rows.append((m.group(1), float(m.group(2)), float(m.group(3)), int(m.group(4))))
    return rows


class YourClusterWalkthroughTest(unittest.TestCase):
    def test_page_has_its_commands_and_table(self):
        text = doc_text()
        self.assertGreaterEqual(len(sh_blocks(text)), 7)
        self.assertEqual(len(results_table(text)), 6)

    def test_walkthrough_runs_as_written(self):
        fabricsim = fabricsim_or_skip(self)
        skip_without_matplotlib(self)
        text = doc_text()
        work = tempfile.mkdtemp(prefix="your-cluster-")
        try:
            for d in ("data", "collectives", "scripts"):
                os.symlink(os.path.join(SOURCE_DIR, d), os.path.join(work, d))
            os.makedirs(os.path.join(work, "build", "bin"))
            os.symlink(fabricsim, os.path.join(work, "build", "bin", "fabricsim"))
            script = "set -euo pipefail\n" + "\n".join(sh_blocks(text))
            proc = subprocess.run(["bash", "-c", script], cwd=work, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=600)
            self.assertEqual(proc.returncode, 0, proc.stdout[-4000:])

            out = os.path.join(work, "my-cluster")
            for row in results_table(text):
                folder, ttft, tpot, tput = row
                with open(os.path.join(out, folder, "summary.json")) as f:
                    s = json.load(f)
                self.assertTrue(s["complete"], folder)
                self.assertEqual(s["requests"]["completed"], s["requests"]["count"], folder)
                got = (round(s["ttft_ms"]["mean"], 2), round(s["tpot_ms"]["mean"], 2),
                       round(s["throughput_tokens_per_s"]))
                self.assertEqual(got, (ttft, tpot, tput), folder + ": the page's row is stale")

            # What the page carries by hand is what the fit wrote for the system it ran on.
            with open(os.path.join(out, "nccl", "overlay.json")) as f:
                sets = json.load(f)["set"]
            rate = re.search(r"--set topology\.scale_up\.rate=(\S+)", text).group(1)
            launch = re.search(r"--ns3::CollectiveExecutor::LaunchLatency=(\S+)", text).group(1)
            self.assertIn("topology.host_link.rate=" + rate, sets)
            self.assertIn("attributes.ns3::CollectiveExecutor::LaunchLatency=" + launch, sets)
            for png in ("latency.png", "steps.png"):
                self.assertGreater(os.path.getsize(os.path.join(out, "run", png)), 0)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
