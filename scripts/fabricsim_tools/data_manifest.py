"""MANIFEST.sha256 of a data/ source folder: every file under it but the manifest itself and the
subfolders that are sources of their own (they hold their own MANIFEST.sha256), sorted by path
in the C locale, in `sha256sum` format."""

import argparse
import hashlib
import os

NAME = "MANIFEST.sha256"


def listed_files(folder):
    """Paths relative to \\p folder that its manifest covers."""
    out = []
    for root, dirs, files in os.walk(folder):
        if root != folder and NAME in files:
            dirs[:] = []
            continue
        for fn in files:
            rel = os.path.relpath(os.path.join(root, fn), folder)
            if rel != NAME:
                out.append(rel)
    return sorted(out, key=lambda p: p.encode())


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def manifest_text(folder):
    return "".join(f"{digest(os.path.join(folder, p))}  {p}\n" for p in listed_files(folder))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write (or with --check, compare) the MANIFEST.sha256 of data/ source folders."
    )
    parser.add_argument("folders", nargs="+", help="source folders under data/")
    parser.add_argument("--check", action="store_true", help="exit 1 if a manifest differs")
    args = parser.parse_args(argv)
    bad = 0
    for folder in args.folders:
        text = manifest_text(folder)
        path = os.path.join(folder, NAME)
        if args.check:
            with open(path) as f:
                if f.read() != text:
                    print(f"data-manifest: {path} does not match its folder")
                    bad += 1
        else:
            with open(path, "w") as f:
                f.write(text)
    return 1 if bad else 0
