"""scripts/setup with stand-ins for dpkg-query and cmake on PATH: 'setup run' builds the CLI
alone (the tests were half of a fresh build) before it runs it; 'setup' builds everything."""

import os
import shutil
import subprocess
import tempfile
import unittest

from script_test_util import SCRIPTS

# Every package reads as installed, so setup installs nothing.
FAKE_DPKG = "#!/bin/sh\nprintf 'install ok installed'\n"
# Records each call; a build drops a stand-in CLI that prints its arguments.
FAKE_CMAKE = """#!/bin/sh
echo "$*" >> "$CALLS"
if [ "$1" = "--build" ]; then
  mkdir -p "$2/bin"
  printf '#!/bin/sh\\necho "fabricsim $*"\\n' > "$2/bin/fabricsim"
  chmod +x "$2/bin/fabricsim"
fi
"""


class SetupTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        self.bin = os.path.join(self.root, "bin")
        os.makedirs(self.bin)
        for name, text in (("dpkg-query", FAKE_DPKG), ("cmake", FAKE_CMAKE)):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        self.calls = os.path.join(self.root, "calls")
        self.env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"],
                        CALLS=self.calls, BUILD_DIR=os.path.join(self.root, "build"), JOBS="2")

    def setup(self, *args):
        run = subprocess.run([os.path.join(SCRIPTS, "setup")] + list(args), env=self.env,
                             capture_output=True, text=True)
        with open(self.calls) as f:
            builds = [line.split() for line in f if line.startswith("--build")]
        return run, builds

    def test_run_builds_the_cli_alone_then_runs_it(self):
        run, builds = self.setup("run", "--no-progress")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(builds), 1, builds)
        self.assertEqual(builds[0][builds[0].index("--target") + 1:], ["fabricsim"])
        self.assertEqual(run.stdout.strip(), "fabricsim run --no-progress")

    def test_plain_setup_builds_every_target(self):
        run, builds = self.setup()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(builds), 1, builds)
        self.assertNotIn("--target", builds[0])


if __name__ == "__main__":
    unittest.main()
