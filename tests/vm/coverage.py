#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Line and branch coverage of module/*.c from a guest run on the debug kernel.

    coverage.py RESDIR... [--target LINES,BRANCHES] [--html DIR] [--json FILE]

RESDIR is a build/vm/<run> directory of tests/vm/check.sh: the module was
built with gcov (DIO_BATCH_COVERAGE=1) in RESDIR/ko/src/module, which holds
the .gcno files, and the guest's run-suite.sh copied the kernel's counters
(/sys/kernel/debug/gcov/.../*.gcda, kept by gcov across the module's
unloads) to RESDIR/gcov.  The gcov of the compiler that built the module
(tests/vm/gcov.sh: the host's, or on a host that is not Debian 12 the
bookworm chroot's) reads both.  Several RESDIRs (the debug suite's parts, run in two
guests side by side) count as one run: their counts are added up, line by
line and branch by branch, over the same sources.

Prints a line per file and a total line:
    coverage: module lines 95.1% (1900/1998), branches 85.3% (900/1055)
Only lines of module/*.c count: code inlined from kernel headers is the
kernel's.  A branch is one outcome of a conditional jump gcov reports on a
line of those files (both outcomes of an `if` are two branches).  Branches
on a line with an assertion (WARN_ON*, WARN*, BUG_ON, lockdep_assert*:
the side that fires must never be taken) are counted apart and printed
apart; the branch percentage and the target leave them out, the line
after the total shows the figure with them.

With --target, exits 1 when lines or branches are below the percentages.
With --html, writes an lcov/genhtml report there (lcov on the host).
With --json, writes the per-file counts and the lines never executed.
"""
import argparse
import glob
import re
import gzip
import json
import os
import shutil
import subprocess
import sys


# lcov's settings for 1.16 (Debian 12) and 2.0 (Debian 13), each ignoring
# the other's: branches on; 2.0's consistency check off, which refuses
# counts of code inlined from kernel headers (a line hit, its branches
# not), lines the report leaves out anyway.
LCOV_RC = ["--rc", "lcov_branch_coverage=1", "--rc", "branch_coverage=1",
           "--rc", "check_data_consistency=0"]
GCOV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gcov.sh")


def gcov_json(objdir):
    """Run gcov on every .gcda of objdir; yield its JSON documents."""
    out = os.path.join(objdir, ".gcov-json")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    gcdas = sorted(glob.glob(os.path.join(objdir, "*.gcda")))
    if not gcdas:
        sys.exit(f"coverage: no .gcda files in {objdir}")
    subprocess.run([GCOV, "--branch-probabilities", "--json-format",
                    "--object-directory", objdir] + gcdas,
                   cwd=out, check=True, stdout=subprocess.DEVNULL)
    for f in sorted(glob.glob(os.path.join(out, "*.gcov.json.gz"))):
        with gzip.open(f) as fh:
            yield json.load(fh)


def collect(objdir, files=None):
    """{file name: {lines: {n: count}, branches: {n: [counts]}}}, module .c only,
    added to files when given."""
    files = {} if files is None else files
    for doc in gcov_json(objdir):
        for f in doc["files"]:
            name = os.path.basename(f["file"])
            # module/*.c, wherever the tree was when it was built.
            if os.path.basename(os.path.dirname(f["file"])) != "module" or \
                    not name.endswith(".c") or name.endswith(".mod.c") or \
                    not os.path.exists(os.path.join(objdir, name)):
                continue
            ent = files.setdefault(name, {"lines": {}, "branches": {}})
            for ln in f["lines"]:
                n = ln["line_number"]
                ent["lines"][n] = ent["lines"].get(n, 0) + ln["count"]
                br = [b["count"] for b in ln["branches"] if not b.get("throw")]
                if br:
                    old = ent["branches"].get(n)
                    ent["branches"][n] = br if old is None or len(old) != len(br) \
                        else [a + b for a, b in zip(old, br)]
    return files


ASSERTION = re.compile(r"\b(WARN_ON_ONCE|WARN_ON|WARN_ONCE|WARN|BUG_ON|lockdep_assert\w*)\s*\(")


def pct(a, b):
    return 100.0 * a / b if b else 100.0


def html_info(objdirs, info):
    """lcov's tracefile of the runs in objdirs, added up, in info; the
    second run's paths renamed to the first's, so each file is one."""
    parts = []
    for i, d in enumerate(objdirs):
        part = f"{info}.{i}"
        r = subprocess.run(["lcov", "--quiet", "--capture", *LCOV_RC,
                            "--gcov-tool", GCOV, "--directory", d, "--output-file", part],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            return r
        if d != objdirs[0]:
            with open(part) as fh:
                text = fh.read().replace(d + "/", objdirs[0] + "/")
            with open(part, "w") as fh:
                fh.write(text)
        parts.append(part)
    args = ["lcov", "--quiet", *LCOV_RC, "--output-file", info]
    for part in parts:
        args += ["--add-tracefile", part]
    return subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("resdir", nargs="+")
    ap.add_argument("--target")
    ap.add_argument("--html")
    ap.add_argument("--json")
    a = ap.parse_args()
    files = {}
    objdirs = []
    for resdir in a.resdir:
        objdir = os.path.abspath(os.path.join(resdir, "ko", "src", "module"))
        gcovdir = os.path.join(resdir, "gcov")
        copied = glob.glob(os.path.join(gcovdir, "*.gcda"))
        if not copied:
            sys.exit(f"coverage: the guest left no counters in {gcovdir}")
        for g in copied:
            shutil.copy(g, objdir)
        collect(objdir, files)
        objdirs.append(objdir)
    objdir = objdirs[0]
    tot = [0, 0, 0, 0]
    asrt = [0, 0]
    report = {}
    print(f"{'file':<14} {'lines':>18} {'branches':>18}")
    for name in sorted(files):
        ent = files[name]
        with open(os.path.join(objdir, name)) as fh:
            src = fh.read().split("\n")
        lh = sum(1 for c in ent["lines"].values() if c)
        lf = len(ent["lines"])
        bh = bf = 0
        for n, br in ent["branches"].items():
            hit = sum(1 for c in br if c)
            if n <= len(src) and ASSERTION.search(src[n - 1]):
                asrt = [asrt[0] + hit, asrt[1] + len(br)]
            else:
                bh, bf = bh + hit, bf + len(br)
        tot = [tot[0] + lh, tot[1] + lf, tot[2] + bh, tot[3] + bf]
        print(f"{name:<14} {pct(lh, lf):6.1f}% {lh:4}/{lf:<5} {pct(bh, bf):6.1f}% {bh:4}/{bf:<5}")
        report[name] = {
            "lines_hit": lh, "lines": lf, "branches_hit": bh, "branches": bf,
            "lines_missed": sorted(n for n, c in ent["lines"].items() if not c),
            "branches_missed": sorted(n for n, br in ent["branches"].items()
                                      if any(c == 0 for c in br)),
        }
    if not tot[1]:
        sys.exit(f"coverage: gcov found no line of module/*.c in {objdir}")
    lp, bp = pct(tot[0], tot[1]), pct(tot[2], tot[3])
    print(f"coverage: module lines {lp:.1f}% ({tot[0]}/{tot[1]}), "
          f"branches {bp:.1f}% ({tot[2]}/{tot[3]})")
    print(f"coverage: assertion branches (WARN_ON, lockdep_assert_held, ...) {asrt[0]}/{asrt[1]} "
          f"taken; with them branches are {pct(tot[2] + asrt[0], tot[3] + asrt[1]):.1f}%")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"lines": [tot[0], tot[1]], "branches": [tot[2], tot[3]],
                       "assertion_branches": asrt, "files": report}, fh, indent=1)
    if a.html:
        info = os.path.join(a.resdir[0], "coverage.info")
        r = html_info(objdirs, info)
        if r.returncode == 0:
            r = subprocess.run(["lcov", "--quiet", *LCOV_RC,
                                "--extract", info, os.path.abspath(objdir) + "/*.c",
                                "--output-file", info],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode == 0:
            shutil.rmtree(a.html, ignore_errors=True)
            r = subprocess.run(["genhtml", "--quiet", "--branch-coverage", "--output-directory",
                                a.html, info], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print(f"coverage: HTML report failed: {r.stderr.strip()[-500:]}")
        else:
            print(f"coverage: HTML report in {a.html}/index.html")
    if a.target:
        tl, tb = (float(x) for x in a.target.split(","))
        if lp < tl or bp < tb:
            print(f"coverage: below the target of {tl:g}% lines, {tb:g}% branches")
            return 1
        print(f"coverage: meets the target of {tl:g}% lines, {tb:g}% branches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
