"""Paths and helpers shared by the scripts/ test suites."""

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import types
import unittest

SOURCE_DIR = os.environ.get("FABRICSIM_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = os.path.join(SOURCE_DIR, "scripts")
SCENARIOS = os.path.join(SOURCE_DIR, "scenarios")
DATA = os.path.join(SOURCE_DIR, "data")  # the measured data that ships (data/README.md)
sys.path.insert(0, SCRIPTS)


def fabricsim_or_skip(test):
    """The fabricsim binary (ctest passes $FABRICSIM); skips the test when it is not built."""
    path = os.environ.get("FABRICSIM") or os.path.join(SOURCE_DIR, "build", "bin", "fabricsim")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        test.skipTest("fabricsim not built (%s); build the fabricsim target first" % path)
    return path


def run_script(name, *args, env=None):
    """Runs scripts/<name> with this interpreter; returns the CompletedProcess (text)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name)] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)


def call_main(module, *args):
    """Runs fabricsim_tools.<module>.main(args) in this process (no interpreter start-up); returns
    an object with returncode, stdout and stderr like run_script's."""
    out, err = io.StringIO(), io.StringIO()
    main = importlib.import_module("fabricsim_tools." + module).main
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:
            rc = e.code
    return types.SimpleNamespace(returncode=rc, stdout=out.getvalue(), stderr=err.getvalue())


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return path


def has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def skip_without_matplotlib(test):
    if not has_matplotlib():
        test.skipTest("matplotlib not importable by %s (Debian: python3-matplotlib)" % sys.executable)


class ScriptTestCase(unittest.TestCase):
    def assertRan(self, proc, rc=0):
        self.assertEqual(proc.returncode, rc, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
