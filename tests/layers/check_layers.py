#!/usr/bin/env python3
"""Layering check: no file includes a header of a higher layer (README "Source map").

Layers, lowest first: core, cute, layout, linear, dist, plan, codegen, exec, runtime, cuda, cli.
A file's layer is its folder: include/axe/<layer>/, src/<layer>/, runtime/ (runtime),
runtime/cuda/ and include/axe/cuda/ (cuda). An include "axe/<layer>/..." or a private
"<layer>/..." (src/<layer>/) names the included layer. Prints each violation as
FILE:LINE: LAYER includes HIGHER-LAYER ("header"), and exits 1 when there is one.
"""
import pathlib
import re
import sys

ORDER = ["core", "cute", "layout", "linear", "dist", "plan", "codegen", "exec", "runtime", "cuda", "cli"]
RANK = {name: i for i, name in enumerate(ORDER)}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def layer_of_file(rel):
    parts = rel.parts
    if parts[:2] == ("include", "axe") and len(parts) > 3:
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "runtime":
        return "cuda" if len(parts) > 2 and parts[1] == "cuda" else "runtime"
    return None


def layer_of_header(header):
    parts = header.split("/")
    if parts[0] == "axe" and len(parts) > 2 and parts[1] in RANK:
        return parts[1]
    if parts[0] in RANK and len(parts) > 1:
        return parts[0]
    return None


def main(root):
    root = pathlib.Path(root)
    bad = []
    files = 0
    for top in ("include", "src", "runtime"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".hpp", ".cpp", ".cu", ".cuh", ".h"):
                continue
            rel = path.relative_to(root)
            mine = layer_of_file(rel)
            if mine is None:
                if rel.parts[:2] == ("include", "axe") and rel.name != "axe.hpp":
                    bad.append(f"{rel}: a header outside every layer folder")
                continue
            if mine not in RANK:
                bad.append(f"{rel}: folder '{mine}' is not a layer ({', '.join(ORDER)})")
                continue
            files += 1
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                theirs = layer_of_header(m.group(1))
                if theirs is not None and RANK[theirs] > RANK[mine]:
                    bad.append(f"{rel}:{n}: {mine} includes {theirs} (\"{m.group(1)}\")")
    for b in bad:
        print(b)
    print(f"{files} files checked, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
