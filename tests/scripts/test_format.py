"""scripts/format --check in a scratch git repository: a formatted tree passes, a file that
clang-format would change fails the check by name, and scripts/format fixes it."""

import os
import shutil
import subprocess
import tempfile
import unittest

from script_test_util import SCRIPTS, SOURCE_DIR

UNFORMATTED = "int  f(int a){return a+1;}\n"


class FormatCheckTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("clang-format") is None:
            self.skipTest("clang-format not installed (scripts/setup installs it)")
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        os.makedirs(os.path.join(self.root, "scripts"))
        shutil.copy(os.path.join(SCRIPTS, "format"), os.path.join(self.root, "scripts"))
        shutil.copy(os.path.join(SOURCE_DIR, ".clang-format"), self.root)
        with open(os.path.join(self.root, "bad.cc"), "w") as f:
            f.write(UNFORMATTED)
        subprocess.run(["git", "init", "-q"], cwd=self.root, check=True)
        subprocess.run(["git", "add", "."], cwd=self.root, check=True)

    def format(self, *args):
        return subprocess.run([os.path.join(self.root, "scripts", "format")] + list(args),
                              capture_output=True, text=True)

    def test_check_names_the_unformatted_file_then_format_fixes_it(self):
        run = self.format("--check")
        self.assertEqual(run.returncode, 1)
        self.assertIn("format: bad.cc is not formatted", run.stderr)
        with open(os.path.join(self.root, "bad.cc")) as f:
            self.assertEqual(f.read(), UNFORMATTED, "--check must not change files")
        self.assertEqual(self.format().returncode, 0)
        with open(os.path.join(self.root, "bad.cc")) as f:
            self.assertEqual(f.read(), "int\nf(int a)\n{\n    return a + 1;\n}\n")
        run = self.format("--check")
        self.assertEqual((run.returncode, run.stdout), (0, "format: 1 files formatted\n"))


if __name__ == "__main__":
    unittest.main()
