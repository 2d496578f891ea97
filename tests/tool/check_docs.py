#!/usr/bin/env python3
"""Runs the commands and programs of README.md and docs/*.md (docs/cli.md,
"Commands in the documentation"), so that they cannot drift from the tool.

Usage: check_docs.py WORKSPACE-SETUP-SCRIPT DOC.md...

Fenced blocks, by their info string (GitHub renders by its first word and
ignores the rest):

  ```sh            shell commands: run with bash -e in a fresh workspace;
                   they must exit 0.
  ```console       a transcript: each "$ CMD" line is run in the workspace
                   (assignments such as "$ T=dir" carry over); the lines
                   after it are its output, each of which must appear in
                   what CMD prints (stdout and stderr), "..." matching
                   anything and a decimal number such as 0.4 any decimal
                   number (a time, "0.4 us", any time in any unit); CMD
                   must fail exactly when its output
                   shows an error.
  ```c program     a complete C program, saved as app.c in the workspace
                   for the sh blocks after it (README.md compiles it).
  ... no-test      not run (setup that installs packages or rebuilds the
                   tree; machine-specific output); each says why nearby.
  ... vulkan       run only where `dmlc devices` reports vulkan available.

The workspace is a fresh directory per document, made by the setup script:
the source tree's include/, examples/ and scripts/ and the build directory
as build/ (so commands read as they would in the source tree), dmlc on
PATH, and the small files the documents name (bad.dmlir, typo.dmlir,
model.dmlir, model.onnx).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 300


def blocks(path):
    """(line, info words, text) of each fenced block."""
    out, info, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if info is None and line.startswith("```"):
                info, start, body = line[3:].split(), n, []
            elif info is not None and line.rstrip("\n") == "```":
                out.append((start, info, "".join(body)))
                info = None
            elif info is not None:
                body.append(line)
    return out


def pattern(expected):
    """An expected output line as a regex: '...' anything, decimals any."""
    parts = re.split(r"(\.\.\.|\d+\.\d+(?: (?:us|ms|s)\b)?)", expected)
    rx = ""
    for p in parts:
        if p == "...":
            rx += ".*"
        elif re.fullmatch(r"\d+\.\d+ (us|ms|s)", p):
            rx += r"\d+(\.\d+)? (us|ms|s)"
        elif re.fullmatch(r"\d+\.\d+", p):
            rx += r"\d+(\.\d+)?"
        else:
            rx += re.escape(p)
    return re.compile("^" + rx + "$")


def run(cmd, cwd, env):
    p = subprocess.run(["bash", "-eo", "pipefail", "-c", cmd], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def check_console(text, cwd, env, where, failures):
    steps, cur = [], None
    for line in text.splitlines():
        if line.startswith("$ "):
            cur = [line[2:], []]
            steps.append(cur)
        elif cur is not None:
            cur[1].append(line)
    prelude = ""
    ran = 0
    for cmd, expected in steps:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S+", cmd):
            prelude += "export " + cmd + "\n"
            continue
        rc, out = run(prelude + cmd, cwd, env)
        ran += 1
        lines = out.splitlines()
        want_fail = any("error:" in e for e in expected)
        if (rc != 0) != want_fail:
            failures.append(f"{where}: '{cmd}' exited {rc}, expected "
                            f"{'failure' if want_fail else 'success'}:\n{out}")
            continue
        for e in expected:
            if e.strip() and not any(pattern(e).match(l) for l in lines):
                failures.append(f"{where}: '{cmd}' did not print:\n  {e}\nit printed:\n{out}")
                break
    return ran


def main():
    setup, docs = sys.argv[1], sys.argv[2:]
    env = dict(os.environ)
    has_vulkan = None
    failures, counts = [], {"sh": 0, "console": 0, "c": 0, "skipped": 0}
    for doc in docs:
        ws = tempfile.mkdtemp(prefix="dmlc-docs-")
        try:
            subprocess.run(["bash", setup, ws], check=True)
            for line, info, text in blocks(doc):
                if not info or info[0] not in ("sh", "console", "c"):
                    continue
                where = f"{os.path.basename(doc)}:{line}"
                if "no-test" in info:
                    counts["skipped"] += 1
                    continue
                if info[0] == "c":
                    if "program" in info:
                        with open(os.path.join(ws, "app.c"), "w") as f:
                            f.write(text)
                        counts["c"] += 1
                    continue
                if "vulkan" in info:
                    if has_vulkan is None:
                        _, out = run("dmlc devices", ws, env)
                        has_vulkan = re.search(r"^vulkan +available", out, re.M) is not None
                    if not has_vulkan:
                        counts["skipped"] += 1
                        continue
                if info[0] == "sh":
                    rc, out = run(text, ws, env)
                    counts["sh"] += 1
                    if rc != 0:
                        failures.append(f"{where}: the sh block exited {rc}:\n{text}{out}")
                else:
                    counts["console"] += check_console(text, ws, env, where, failures)
        finally:
            shutil.rmtree(ws, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print(f"tool.docs: {counts['sh']} sh blocks, {counts['console']} console commands, "
          f"{counts['c']} C programs run; {counts['skipped']} blocks marked no-test or "
          f"needing vulkan skipped; {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
