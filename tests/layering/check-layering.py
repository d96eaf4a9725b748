#!/usr/bin/env python3
"""Holds fabricsim's layers to the edges in layers.json.

Two kinds of edge are read from the tree: every #include of a C++ file (resolved to the repo
file it names, or to ns-3 for an "ns3/..." header that none of our modules publishes), and every
target_link_libraries / fabricsim_module LIBS / target_include_directories in the CMake files.
An edge from one layer to another that the data does not allow is a breach, unless the
exceptions list names it; an exception that no edge uses any longer is an error too, so the list
only shrinks.

  check-layering.py [--root DIR]       check DIR (default: the repo holding this script)
  check-layering.py --markdown         print the layer table that docs/architecture.md holds
Exit 0 when clean, 1 on a breach (each printed with file, line and rule), 2 on bad data.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "layers.json")
NS3 = "ns-3"
SOURCE_EXTENSIONS = (".h", ".hpp", ".cc", ".cpp")
SKIP_DIRS = {".git", "out", "__pycache__", "node_modules"}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
CMAKE_COMMAND = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^()]*)\)", re.S)
TABLE_BEGIN = "<!-- layer table: tests/layering/check-layering.py --markdown -->"
TABLE_END = "<!-- end of layer table -->"


class Layers:
    def __init__(self, data):
        self.layers = data["layers"]
        self.may_use = {l["name"]: set(l["may_use"]) for l in self.layers}
        self.prefixes = sorted(
            ((p.rstrip("/"), l["name"]) for l in self.layers for p in l["paths"]),
            key=lambda item: -len(item[0]),
        )
        known = set(self.may_use) | {NS3}
        for layer in self.layers:
            unknown = set(layer["may_use"]) - known
            if unknown:
                raise ValueError(f"layer {layer['name']}: may_use names unknown {sorted(unknown)}")
        for e in data.get("exceptions", []):
            if e.get("to") not in known or not isinstance(e.get("from"), list) or not e.get("why"):
                raise ValueError(f"exception {e}: needs 'from' (a list of paths), 'to' (a layer) "
                                 "and 'why'")
        # One entry per path, so that each path's exception must stay in use on its own.
        self.exceptions = data.get("exceptions", [])
        self.unused = {(f.rstrip("/"), e["to"]) for e in self.exceptions for f in e["from"]}
        self.excepted = set(self.unused)

    def of(self, rel):
        """The layer of a repo-relative path, or None outside every layer."""
        for prefix, name in self.prefixes:
            if rel == prefix or rel.startswith(prefix + "/"):
                return name
        return None

    def allowed(self, source_rel, source_layer, target_layer):
        if target_layer is None or target_layer == source_layer:
            return True
        if target_layer in self.may_use[source_layer]:
            return True
        for f, to in self.excepted:
            if to == target_layer and (source_rel == f or source_rel.startswith(f + "/")):
                self.unused.discard((f, to))
                return True
        return False


def walk(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")
        )
        for name in sorted(filenames):
            yield os.path.relpath(os.path.join(dirpath, name), root)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


class Checker:
    def __init__(self, root, layers):
        self.root = root
        self.layers = layers
        self.files = [f for f in walk(root) if layers.of(f) is not None]
        self.sources = [f for f in self.files if f.endswith(SOURCE_EXTENSIONS)]
        # Headers our ns-3 modules publish as "ns3/<name>" (cmake/FabricsimModule.cmake); an
        # "ns3/" header that is none of ours is the system ns-3's.
        self.module_headers = {}
        for f in self.sources:
            if f.endswith(".h"):
                self.module_headers.setdefault(os.path.basename(f), f)
        self.breaches = []

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def edge(self, rel, line, what, target_layer, layer=None):
        layer = layer or self.layers.of(rel)
        if not self.layers.allowed(rel, layer, target_layer):
            self.breaches.append(
                f"{rel}:{line}: {what}: layer {layer} may not use {target_layer}")

    def resolve_include(self, rel, name):
        """The layer an include names: ns-3, one of ours, or None (outside library)."""
        if name.startswith("ns3/"):
            ours = self.module_headers.get(name[4:])
            return (self.layers.of(ours), ours) if ours else (NS3, None)
        here = os.path.normpath(os.path.join(os.path.dirname(rel), name))
        if here in self.source_set:
            return self.layers.of(here), here
        matches = [f for f in self.sources if f == name or f.endswith("/" + name)]
        found = {self.layers.of(f) for f in matches}
        if len(found) > 1:
            raise LookupError(f"{rel}: include \"{name}\" matches files of several layers: "
                              f"{', '.join(sorted(matches))}; give headers unique names")
        return (found.pop(), matches[0]) if found else (None, None)

    def check_includes(self):
        self.source_set = set(self.sources)
        for rel in self.sources:
            text = self.read(rel)
            for m in INCLUDE.finditer(text):
                layer, path = self.resolve_include(rel, m.group(2))
                close = ">" if m.group(1) == "<" else '"'
                what = f"includes {m.group(1)}{m.group(2)}{close}" + (f" ({path})" if path else "")
                self.edge(rel, line_of(text, m.start()), what, layer)

    def check_cmake(self):
        lists = [f for f in self.files if os.path.basename(f) == "CMakeLists.txt"]
        parsed = []
        targets = {}  # target name -> layer
        for rel in lists:
            text = re.sub(r"#[^\n]*", "", self.read(rel))
            folder = os.path.dirname(rel)
            for m in CMAKE_COMMAND.finditer(text):
                command, args = m.group(1), m.group(2).split()
                parsed.append((rel, folder, line_of(text, m.start()), command, args))
                if command in ("add_library", "add_executable") and args and "$" not in args[0]:
                    srcs = [a for a in args[1:] if a.endswith(SOURCE_EXTENSIONS)]
                    where = os.path.normpath(os.path.join(folder, srcs[0])) if srcs else folder
                    targets[args[0]] = self.layers.of(where)
                elif command == "fabricsim_module" and args:
                    targets["fabricsim-" + args[0]] = self.layers.of(folder)

        def lib_layer(lib):
            if lib.startswith(("fabricsim_ns3_", "ns3::")):
                return NS3
            return targets.get(lib)

        def expand(path, folder):
            path = path.replace("${CMAKE_SOURCE_DIR}", ".").replace("${PROJECT_SOURCE_DIR}", ".")
            path = path.replace("${CMAKE_CURRENT_SOURCE_DIR}", folder or ".")
            return None if "$" in path else os.path.normpath(path)

        for rel, folder, line, command, args in parsed:
            if not args:
                continue
            # A target defined elsewhere in the folder keeps the layer of its sources; one named
            # by a variable (a foreach over examples) is the folder's own.
            layer = None if "$" in args[0] else targets.get(args[0])
            if command == "target_link_libraries":
                for lib in args[1:]:
                    self.edge(rel, line, f"{args[0]} links {lib}", lib_layer(lib), layer)
            elif command == "fabricsim_module" and "LIBS" in args:
                for lib in args[args.index("LIBS") + 1:]:
                    if lib.isupper():
                        break
                    self.edge(rel, line, f"fabricsim-{args[0]} links {lib}", lib_layer(lib))
            elif command in ("target_include_directories", "include_directories"):
                for d in args[1 if command.startswith("target") else 0:]:
                    path = expand(d, folder)
                    if path and not path.startswith(".."):
                        self.edge(rel, line, f"{args[0]} includes folder {d}",
                                  self.layers.of(path), layer)

    def run(self):
        self.check_includes()
        self.check_cmake()
        for f, to in sorted(self.layers.unused):
            self.breaches.append(f"layers.json: exception {f} -> {to} is no longer needed; "
                                 "remove it")
        return self.breaches


def markdown(layers):
    rows = ["| layer | paths | may use |", "|---|---|---|"]
    for l in layers.layers:
        paths = ", ".join(f"`{p}`" for p in l["paths"])
        rows.append(f"| {l['name']} | {paths} | {', '.join(l['may_use']) or 'nothing of ours'} |")
    if layers.exceptions:
        rows += ["", "Exceptions, each to be removed by the restructuring it names:", "",
                 "| from | may also use | why |", "|---|---|---|"]
        rows += [f"| {', '.join(f'`{f}`' for f in e['from'])} | {e['to']} | {e['why']} |"
                 for e in layers.exceptions]
    return "\n".join(rows) + "\n"


def check_docs(root, layers):
    doc = os.path.join(root, "docs", "architecture.md")
    try:
        with open(doc, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return [f"docs/architecture.md: {e.strerror}; it lists the layers"]
    begin, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if begin < 0 or end < begin:
        return [f"docs/architecture.md: no layer table between '{TABLE_BEGIN}' and '{TABLE_END}'"]
    if text[begin + len(TABLE_BEGIN):end].strip() != markdown(layers).strip():
        return ["docs/architecture.md: the layer table differs from tests/layering/layers.json; "
                "paste the output of tests/layering/check-layering.py --markdown"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    try:
        with open(args.data, encoding="utf-8") as f:
            layers = Layers(json.load(f))
    except (OSError, ValueError, KeyError) as e:
        print(f"check-layering: {args.data}: {e}", file=sys.stderr)
        return 2
    if args.markdown:
        sys.stdout.write(markdown(layers))
        return 0
    try:
        breaches = Checker(args.root, layers).run() + check_docs(args.root, layers)
    except LookupError as e:
        breaches = [str(e)]
    for b in breaches:
        print(b)
    print(f"check-layering: {len(breaches)} breach(es)", file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
