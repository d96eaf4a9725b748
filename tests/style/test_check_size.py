"""check-size.py against scratch trees: a tree within the limits passes; a file or function
over them fails unless listed; a listed one may shrink but not grow; an entry no longer needed
fails; namespaces and types are not functions; tests and build trees are not checked; the CLI's
files are held to 350 lines with no allow-list."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check-size.py")


def function(name, body_lines, signature="void"):
    body = "".join("    x += %d;\n" % i for i in range(body_lines))
    return "%s\n%s(int x)\n{\n%s}\n\n" % (signature, name, body)


def source(*funcs):
    return ("#include <x>\n\nnamespace fabricsim\n{\n\nstruct Plain\n{\n    int a;\n};\n\n"
            + "".join(funcs) + "} // namespace fabricsim\n")


class CheckSize(unittest.TestCase):
    def run_checker(self, files, sizes):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            data = os.path.join(root, "sizes.json")
            with open(data, "w") as f:
                json.dump(sizes, f)
            p = subprocess.run([sys.executable, CHECKER, "--root", root, "--sizes", data],
                               capture_output=True, text=True)
            return p.returncode, p.stdout + p.stderr

    def test_within_the_limits_passes(self):
        code, out = self.run_checker({"common/a.cc": source(function("A", 150))}, {})
        self.assertEqual(code, 0, out)

    def test_a_long_function_fails_naming_it(self):
        code, out = self.run_checker({"common/a.cc": source(function("Ns::Long", 151))}, {})
        self.assertEqual(code, 1)
        self.assertIn("common/a.cc::Ns::Long: function of 151 lines, over the limit of 150", out)

    def test_a_long_file_fails_and_tests_and_builds_are_not_checked(self):
        big = "// x\n" * 701
        code, out = self.run_checker(
            {"common/big.h": big, "tests/t/big-test.cc": big, "build/gen/big.cc": big,
             "common/ok.h": "// x\n" * 700}, {})
        self.assertEqual(code, 1)
        self.assertIn("common/big.h: file of 701 lines, over the limit of 700", out)
        self.assertNotIn("big-test.cc", out)
        self.assertNotIn("build/", out)
        self.assertNotIn("ok.h", out)

    def test_a_listed_one_may_shrink_but_not_grow(self):
        listed = {"functions": {"common/a.cc::Long": {"lines": 170, "why": "w", "issue": 50}}}
        code, out = self.run_checker({"common/a.cc": source(function("Long", 160))}, listed)
        self.assertEqual(code, 0, out)
        code, out = self.run_checker({"common/a.cc": source(function("Long", 171))}, listed)
        self.assertEqual(code, 1)
        self.assertIn("grew to 171 lines, past the 170", out)

    def test_an_entry_no_longer_needed_fails(self):
        listed = {"files": {"common/a.cc": {"lines": 900, "why": "w", "issue": 50}},
                  "functions": {"common/gone.cc::F": {"lines": 200, "why": "w", "issue": 50}}}
        code, out = self.run_checker({"common/a.cc": source(function("F", 10))}, listed)
        self.assertEqual(code, 1)
        self.assertIn("common/a.cc: file of", out)
        self.assertIn("within the limit of 700: remove its entry", out)
        self.assertIn("common/gone.cc::F: listed in sizes.json, but no such function is left",
                      out)

    def test_an_entry_without_its_reason_is_bad_data(self):
        code, out = self.run_checker(
            {"common/a.cc": "\n"}, {"files": {"common/a.cc": {"lines": 900, "why": "w"}}})
        self.assertEqual(code, 2)
        self.assertIn("needs 'lines'", out)

    def test_namespaces_types_and_long_signatures(self):
        # A class body of 200 lines is not a function; a function whose parameters take many
        # lines is still found by its name.
        klass = "class Big\n{\n" + "    int a;\n" * 200 + "};\n\n"
        params = ",\n".join("    int p%d" % i for i in range(20))
        wide = "int\nWide(\n%s)\n{\n%s}\n" % (params, "    x();\n" * 151)
        code, out = self.run_checker({"common/a.h": "namespace n\n{\n" + klass + wide + "}\n"},
                                     {})
        self.assertEqual(code, 1)
        self.assertIn("common/a.h::Wide: function of 151 lines", out)
        self.assertNotIn("Big", out)


if __name__ == "__main__":
    unittest.main()

    def test_the_cli_is_held_to_350_lines_without_exceptions(self):
        code, out = self.run_checker(
            {"scratch/fabricsim/ok.cc": "// x\n" * 350, "scratch/fabricsim/big.cc": "// x\n" * 351,
             "scratch/program.cc": "// x\n" * 600}, {})
        self.assertEqual(code, 1)
        self.assertIn("scratch/fabricsim/big.cc: file of 351 lines, over the limit of 350", out)
        self.assertNotIn("ok.cc", out)
        self.assertNotIn("program.cc", out)
        listed = {"files": {"scratch/fabricsim/big.cc": {"lines": 351, "why": "w", "issue": 1}}}
        code, out = self.run_checker({"scratch/fabricsim/big.cc": "// x\n" * 351}, listed)
        self.assertEqual(code, 2)
        self.assertIn("held to 350 lines with no exceptions", out)
