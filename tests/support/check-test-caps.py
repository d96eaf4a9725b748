#!/usr/bin/env python3
"""Every ctest is capped: it has a TIMEOUT, and it either runs a test binary that caps itself
(linked with tests/support/test-guard) or starts its program under prlimit --as=...

Usage: check-test-caps.py BUILD_DIR   (exit 1 naming each test that is not capped)
"""
import json
import os
import subprocess
import sys

# Test binaries whose main applies CapTestResources (tests/support): gtest suites.
SELF_CAPPED_SUFFIX = "-tests"


def problems(build_dir):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    found = []
    tests = json.loads(out).get("tests", [])
    if not tests:
        return ["no tests found in " + build_dir]
    for t in tests:
        name = t["name"]
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        timeout = props.get("TIMEOUT")
        if not timeout or float(timeout) <= 0:
            found.append(f"{name}: no TIMEOUT")
        cmd = t.get("command", [])
        exe = os.path.basename(cmd[0]) if cmd else ""
        capped = exe == "prlimit" and any(a.startswith("--as=") for a in cmd[1:3])
        if not capped and not exe.endswith(SELF_CAPPED_SUFFIX):
            found.append(f"{name}: starts {exe or 'nothing'} without prlimit --as=")
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(sys.argv[1])
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
