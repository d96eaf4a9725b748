"""data/: every source folder's MANIFEST.sha256 lists exactly the files under it (none missing,
none unlisted; a subfolder with a manifest of its own is another source) with their SHA-256, and
each folder says where its data came from and under what licence."""

import hashlib
import json
import os
import re
import sys
import unittest

from script_test_util import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
from fabricsim_tools import data_manifest  # noqa: E402

DATA = os.path.join(SOURCE_DIR, "data")


def manifests():
    for root, _, files in os.walk(DATA):
        if "MANIFEST.sha256" in files:
            yield root


class DataManifestTest(unittest.TestCase):
    def test_every_source_has_a_manifest_readme_and_licence(self):
        folders = list(manifests())
        self.assertGreaterEqual(len(folders), 5)
        for folder in folders:
            with open(os.path.join(folder, "README.md")) as f:
                readme = f.read()
            for word in ("Upstream", "Licence", "How made"):
                self.assertIn(word, readme, folder)
            licences = [f for f in os.listdir(folder) if f.startswith("LICENSE")]
            self.assertEqual(len(licences), 1, folder + ": one LICENSE file")

    def test_every_file_belongs_to_a_source(self):
        for root, dirs, files in os.walk(DATA):
            if "MANIFEST.sha256" in files:
                dirs[:] = []
            elif root != DATA:
                self.assertEqual(files, [], root + " holds files no manifest lists")

    def test_the_writer_agrees(self):
        for folder in manifests():
            with open(os.path.join(folder, "MANIFEST.sha256")) as f:
                self.assertEqual(f.read(), data_manifest.manifest_text(folder), folder)

    def test_manifests_match_their_folders(self):
        for folder in manifests():
            listed = {}
            with open(os.path.join(folder, "MANIFEST.sha256")) as f:
                for line in f:
                    digest, name = line.rstrip("\n").split("  ", 1)
                    listed[name] = digest
            present = set()
            for root, dirs, files in os.walk(folder):
                if root != folder and "MANIFEST.sha256" in files:
                    dirs[:] = []
                    continue
                for fn in files:
                    rel = os.path.relpath(os.path.join(root, fn), folder)
                    if rel != "MANIFEST.sha256":
                        present.add(rel)
            self.assertEqual(sorted(present - set(listed)), [], folder + ": files not in the manifest")
            self.assertEqual(sorted(set(listed) - present), [], folder + ": listed files missing")
            for name, digest in listed.items():
                with open(os.path.join(folder, name), "rb") as f:
                    self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, name)


class InferenceXResultsTest(unittest.TestCase):
    """The closed-loop sweeps say what their README says: 10 x C prompts of ISL tokens in and 128
    out at concurrency C (from the file name), every one completed, throughputs over the duration
    in tokens/s, latencies in seconds."""

    def test_each_run_is_its_benchmark(self):
        folder = os.path.join(DATA, "serving", "inferencex-minimax-m2.5", "results")
        names = sorted(os.listdir(folder))
        self.assertEqual(len(names), 30)
        for name in names:
            m = re.fullmatch(r"minimax_m25_vllm_tep8_isl(\d+)_osl128_conc(\d+)\.json", name)
            self.assertIsNotNone(m, name)
            isl, conc = int(m.group(1)), int(m.group(2))
            with open(os.path.join(folder, name)) as f:
                r = json.load(f)
            self.assertEqual(r["max_concurrency"], conc, name)
            self.assertEqual(r["num_prompts"], 10 * conc, name)
            self.assertEqual(r["completed"], r["num_prompts"], name)
            self.assertEqual(r["total_input_tokens"], isl * r["completed"], name)
            self.assertEqual(r["total_output_tokens"], 128 * r["completed"], name)
            self.assertAlmostEqual(r["output_throughput"] * r["duration"], r["total_output_tokens"],
                                   delta=1e-6 * r["total_output_tokens"], msg=name)
            # Seconds: a TPOT of tens of milliseconds, a TTFT below the run's duration.
            self.assertLess(r["median_tpot"], 0.2, name)
            self.assertLess(r["p99_ttft"], r["duration"], name)


if __name__ == "__main__":
    unittest.main()
