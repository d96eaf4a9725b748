#!/usr/bin/env python3
"""Holds fabricsim's sources to a size: no source file over 700 lines, no function over 150.

The CLI (scratch/fabricsim/) keeps argument parsing, printing and exit codes: its files hold at
most 350 lines, and sizes.json may not list one (what it does beyond that belongs in a library).

Sources are the C++ files (.h, .hpp, .cc, .cpp) outside tests/, build trees and generated
folders. A function is a body whose braces stand alone in column 0 (the code's style, ns-3's:
return type, then name, then "{" on a line of its own); its size is the lines between them.
Namespaces ("namespace x" then "{") and type definitions (closed by "};") are not functions.

sizes.json lists what is allowed over the limits today, each with why and the issue that
removes it, and the size it had when listed: an entry may shrink, never grow past that size,
and an entry under the limit (or for a file or function that is gone) is an error, so the list
only shrinks.

  check-size.py [--root DIR] [--sizes FILE]    check DIR (default: the repo holding this script)
  check-size.py --list                          print every file and function over the limits
Exit 0 when clean, 1 on a breach (each printed with file, size and limit), 2 on bad data.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "sizes.json")
FILE_LIMIT = 700
FUNCTION_LIMIT = 150
CLI_DIR = "scratch/fabricsim/"
CLI_FILE_LIMIT = 350
SOURCE_EXTENSIONS = (".h", ".hpp", ".cc", ".cpp")
SKIP_DIRS = {".git", "tests", "out", "__pycache__", "node_modules", "generated"}
NAME = re.compile(r"([~A-Za-z_][A-Za-z0-9_:~<>]*(?:operator\s*\S+?)?)\s*\(")


def sources(root):
    """Repo-relative paths of the checked sources, sorted."""
    out = []
    for d, dirs, files in os.walk(root):
        # Build trees (anything CMake configured) are generated.
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                         and not os.path.exists(os.path.join(d, x, "CMakeCache.txt")))
        for f in sorted(files):
            if f.endswith(SOURCE_EXTENSIONS):
                out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
    return sorted(out)


def function_name(lines, brace):
    """The name of the function whose body opens at line index `brace`, or None."""
    for i in range(brace - 1, max(-1, brace - 40), -1):
        line = lines[i]
        if not line.strip():
            return None
        if line[0] in " \t":
            continue  # a wrapped parameter list or an initializer
        if line.startswith(("namespace", "extern", "#")):
            return None
        m = NAME.search(line)
        if m:
            return m.group(1)
        return None
    return None


def functions(text):
    """(name, first line, body lines) of every function of a source."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        close = i + 1
        while close < len(lines) and not lines[close].startswith("}"):
            close += 1
        name = function_name(lines, i)
        if close < len(lines) and lines[close].rstrip() == "}" and name:
            out.append((name, i + 1, close - i - 1))
            i = close + 1
        else:
            i += 1  # a namespace or a type: its members are searched in turn
    return out


def measure(root):
    """{path: lines} and {"path::name": lines} of everything over the limits."""
    files, funcs = {}, {}
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        files[rel] = n
        for name, _, size in functions(text):
            key = rel + "::" + name
            funcs[key] = max(funcs.get(key, 0), size)
    return files, funcs


def file_limit(path):
    return CLI_FILE_LIMIT if path.startswith(CLI_DIR) else FILE_LIMIT


def load(path):
    with open(path) as f:
        data = json.load(f)
    for kind in ("files", "functions"):
        for key, e in data.get(kind, {}).items():
            if not isinstance(e.get("lines"), int) or not e.get("why") or not e.get("issue"):
                raise ValueError(f"{kind} entry {key}: needs 'lines' (its size when listed), "
                                 "'why' and 'issue' (the one that removes it)")
            if kind == "files" and key.startswith(CLI_DIR):
                raise ValueError(f"files entry {key}: the CLI's files are held to "
                                 f"{CLI_FILE_LIMIT} lines with no exceptions")
    return data


def check(root, data):
    files, funcs = measure(root)
    errors = []
    for kind, sizes in (("files", files), ("functions", funcs)):
        allowed = data.get(kind, {})
        what = "file" if kind == "files" else "function"

        def limit_of(key):
            return file_limit(key) if kind == "files" else FUNCTION_LIMIT

        for key, n in sorted(sizes.items()):
            limit = limit_of(key)
            if n <= limit:
                continue
            e = allowed.get(key)
            if e is None:
                errors.append(f"{key}: {what} of {n} lines, over the limit of {limit} (split it; "
                              "tests/style/sizes.json lists only what was over it before)")
            elif n > e["lines"]:
                errors.append(f"{key}: {what} grew to {n} lines, past the {e['lines']} it had when "
                              f"listed in sizes.json (over the limit of {limit}: it may only "
                              "shrink)")
        for key, e in sorted(allowed.items()):
            n = sizes.get(key)
            limit = limit_of(key)
            if n is None:
                errors.append(f"{key}: listed in sizes.json, but no such {what} is left: remove "
                              "the entry")
            elif n <= limit:
                errors.append(f"{key}: {what} of {n} lines, within the limit of {limit}: remove "
                              "its entry from sizes.json")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--sizes", default=DATA)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        files, funcs = measure(args.root)
        for key, n in sorted(files.items()):
            if n > file_limit(key):
                print(f"file {key} {n}")
        for key, n in sorted(funcs.items()):
            if n > FUNCTION_LIMIT:
                print(f"function {key} {n}")
        return 0
    try:
        data = load(args.sizes)
    except (OSError, ValueError) as e:
        print(f"check-size: {args.sizes}: {e}", file=sys.stderr)
        return 2
    errors = check(args.root, data)
    for e in errors:
        print(e)
    if not errors:
        print("source sizes: every file within %d lines (the CLI's within %d) and every function "
              "within %d, but the %d listed in sizes.json" % (FILE_LIMIT, CLI_FILE_LIMIT,
                                                               FUNCTION_LIMIT,
                                           len(data.get("files", {}))
                                           + len(data.get("functions", {}))))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
