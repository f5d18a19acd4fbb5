#!/usr/bin/env python3
"""Runs the commands the README shows and checks that they work as shown.

  check_readme.py SOURCE_DIR BUILD_DIR

In the README's ```sh blocks:
  * `$ axe ARGS` runs build/bin/axe ARGS; the lines after it (up to the next `$` or the block's
    end) are what it prints: each must appear in its stdout + stderr, in order ("..." in a shown
    line, or a line of its own, stands for elided output). A shown `axe: error:` means exit
    status 2, else 0.
  * `launch/axe-run ...` on one host runs as written (programs under ./build/ taken from
    BUILD_DIR) and must exit 0; a multi-host line (--hosts, --hostfile) runs with --dry-run and
    must print the mpirun command it would run.
  * a `launch/axe-run ... python3 SCRIPT` line runs SCRIPT with the interpreter in $AXE_PYTHON
    and the package in BUILD_DIR/python (skipped, and said so, when the build has no extension).
In the README's ```python blocks (section "Python"): each block runs as a script with that
interpreter, under `launch/axe-run -np 4` when it calls axe.init(); it must exit 0.
The Set-up section's two commands are what CI runs (.ci/run); they are not run here.
Prints one line per command and exits 1 when any fails.
"""
import os
import re
import shlex
import subprocess
import sys


def python_env(build):
    """(interpreter, environment) for the Python package of BUILD_DIR, or None without it."""
    py = os.environ.get("AXE_PYTHON")
    if not py or not os.path.isdir(os.path.join(build, "python", "axe")):
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(build, "python") + os.pathsep + env.get("PYTHONPATH", "")
    return py, env


def sh_blocks(text, lang="sh"):
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("## "):
            section = lines[i][3:].strip()
        if lines[i].strip() == "```" + lang:
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            yield section, lines[i + 1:j]
            i = j
        i += 1


def run(cmd, cwd, timeout=300, env=None):
    p = subprocess.run(cmd, cwd=cwd, shell=True, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout + p.stderr


def check_axe(args, shown, src, build):
    rc, out = run(shlex.quote(os.path.join(build, "bin", "axe")) + " " + args, src)
    want_rc = 2 if any(l.startswith("axe: error:") for l in shown) else 0
    problems = []
    if rc != want_rc:
        problems.append(f"exit status {rc}, the README implies {want_rc}")
    got = out.splitlines()
    at = 0
    for line in shown:
        if line.strip() == "...":  # elided lines
            continue
        # "..." inside a line stands for elided text
        pattern = re.compile(".*".join(re.escape(part) for part in line.rstrip().split("...")))
        while at < len(got) and not pattern.fullmatch(got[at].rstrip()):
            at += 1
        if at == len(got):
            problems.append(f"does not print (in this order) the README's line: {line!r}")
            break
        at += 1
    return problems, out


def check_launch(line, src, build):
    words = shlex.split(line.split(" #", 1)[0])
    env = None
    if "python3" in words:
        pe = python_env(build)
        if pe is None:
            return None, "skipped: the build has no Python extension (AXE_PYTHON unset or no build/python/axe)"
        words[words.index("python3")], env = pe
    multi = "--hosts" in words or "--hostfile" in words
    if multi and "--dry-run" not in words:
        words.insert(1, "--dry-run")
    if "--hostfile" in words:  # the README's hostfile names two hosts
        i = words.index("--hostfile") + 1
        words[i] = os.path.join(build, "readme_hosts.txt")
        with open(words[i], "w", encoding="utf-8") as f:
            f.write("h1 slots=4\nh2 slots=4\n")
    fixed = []
    for w in words:
        for prefix in ("./build/", "build/"):
            if w.startswith(prefix):
                w = os.path.join(build, w[len(prefix):])
        fixed.append(w)
    rc, out = run(" ".join(shlex.quote(w) for w in fixed), src, env=env)
    problems = []
    if rc != 0:
        problems.append(f"exit status {rc}")
    if multi and "mpirun" not in out:
        problems.append("--dry-run printed no mpirun command")
    return problems, out


def main(src, build):
    text = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    failed = 0
    count = 0
    for section, block in sh_blocks(text):
        if section == "Set-up":
            continue
        i = 0
        while i < len(block):
            line = block[i]
            if line.startswith("$ axe "):
                j = i + 1
                while j < len(block) and not block[j].startswith("$ "):
                    j += 1
                problems, out = check_axe(line[len("$ axe "):], block[i + 1:j], src, build)
                i = j
            elif line.startswith("launch/axe-run "):
                problems, out = check_launch(line, src, build)
                i += 1
            else:
                i += 1
                continue
            count += 1
            if problems is None:
                print(f"skip {line}: {out}")
            elif problems:
                failed += 1
                print(f"FAIL {line}\n  " + "\n  ".join(problems) + "\n  output:\n    " +
                      "\n    ".join(out.splitlines()[-20:]))
            else:
                print(f"ok   {line}")
    for section, block in sh_blocks(text, "python"):
        code = "\n".join(block) + "\n"
        name = "python block: " + block[0]
        count += 1
        pe = python_env(build)
        if pe is None:
            print(f"skip {name}: the build has no Python extension")
            continue
        path = os.path.join(build, "readme_block_%d.py" % count)
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        cmd = shlex.quote(pe[0]) + " " + shlex.quote(path)
        if "axe.init()" in code:
            cmd = shlex.quote(os.path.join(src, "launch", "axe-run")) + " -np 4 " + cmd
        rc, out = run(cmd, src, env=pe[1])
        if rc != 0:
            failed += 1
            print(f"FAIL {name}\n  exit status {rc}\n  output:\n    " + "\n    ".join(out.splitlines()[-20:]))
        else:
            print(f"ok   {name}")
    print(f"{count} README commands run, {failed} failed")
    return 1 if failed or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
