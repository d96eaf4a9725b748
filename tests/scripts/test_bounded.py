"""The scripts read input files as the simulator does (scripts/fabricsim_tools/bounded.py):
regular files only, within a size bound, JSON without duplicate keys or runaway nesting; the
commands exit 2 naming the file on everything else."""

import os
import tempfile
import unittest

from script_test_util import call_main
from fabricsim_tools import bounded
from fabricsim_tools.stats import InputProblem


class BoundedReader(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name, content=None):
        p = os.path.join(self.dir, name)
        if content is not None:
            with open(p, "wb") as f:
                f.write(content)
        return p

    def problem(self, fn, *args):
        with self.assertRaises(InputProblem) as c:
            fn(*args)
        return c.exception

    def test_only_regular_files_are_read(self):
        self.assertEqual(bounded.read_bytes(self.path("a", b"x\0y"), "file"), b"x\0y")
        self.assertEqual(self.problem(bounded.read_bytes, "/dev/zero", "CDF").found,
                         "a character device, not a regular file")
        self.assertEqual(self.problem(bounded.read_bytes, self.dir, "CDF").found, "a directory")
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        self.assertEqual(self.problem(bounded.read_bytes, fifo, "trace").found,
                         "a FIFO (named pipe), not a regular file")
        missing = self.problem(bounded.read_bytes, self.path("none"), "sweep file")
        self.assertEqual(missing.expected, "a readable sweep file")

    def test_size_bound(self):
        p = self.path("big", b"x" * 1000)
        self.assertEqual(len(bounded.read_bytes(p, "file", 1000)), 1000)
        e = self.problem(bounded.read_bytes, p, "file", 999)
        self.assertEqual((e.expected, e.found), ("a file of at most 999 bytes", "1000 bytes"))

    def test_json_rules(self):
        self.assertEqual(bounded.parse_json('{"a": 1}', "f"), {"a": 1})
        self.assertIn("twice", self.problem(bounded.parse_json, '{"a": 1, "a": 2}', "f").found)
        self.assertEqual(self.problem(bounded.parse_json, "[" * 100000, "f").found, "deeper nesting")
        bad = self.path("latin1", b'{"name": "\xe9"}')
        self.assertEqual(self.problem(bounded.load_json, bad, "scenario").expected, "UTF-8 text")

    def test_commands_exit_two_on_what_is_not_their_input(self):
        for target in ("/dev/zero", self.dir, self.path("dup.json", b'{"base": "a", "base": "b"}')):
            r = call_main("fct_cli", target)
            self.assertEqual(r.returncode, 2, r.stderr)
            r = call_main("sweep_cli", target, "--out", self.path("out"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(target, r.stderr)
            self.assertFalse(os.path.exists(self.path("out")))


if __name__ == "__main__":
    unittest.main()
