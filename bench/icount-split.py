#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Split two engines' per-I/O counts of a bench/icount.sh run into what they
share and what is each one's own:  icount-split.py RESULTS_DIR A REF

RESULTS_DIR is bench/icount.sh's raw results (build/bench/icount, kept until
the next run).  For each workload both engines ran, in blocks and in
instructions per I/O (as icount-report.py computes them): the totals, the
shared part (the sum over functions of the smaller of the two counts; user
space is one "[user]"), each engine's own part (its total less the shared
part), the module's functions ([dio_batch]), and how small A's own part
would have to be for A to execute 0.85x REF's instructions and 0.9x its
blocks; then the 30 functions whose instructions differ most, and A's module
functions.  Spinning on a contended lock is left out, as in the report.
"""
import bisect, collections, sys
d = sys.argv[1]; A = sys.argv[2]; R = sys.argv[3]
SPIN = "native_queued_spin_lock_slowpath"
syms = []
for line in open(f"{d}/kallsyms"):
    f = line.split()
    if len(f) >= 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2] + (" " + f[3] if len(f) > 3 else "")))
syms.sort(); addrs = [a for a, _ in syms]
def sym(pc):
    if pc < 0xffff800000000000: return "[user]"
    i = bisect.bisect_right(addrs, pc) - 1
    return syms[i][1] if i >= 0 else "?"
dumps, order = {}, []
for line in open(f"{d}/runs"):
    f = line.split()
    if f[0] == "DUMP":
        dev, wl, eng, k, what = f[2].split(":")
        dumps[(dev, wl, eng, int(k), what)] = (int(f[1]), int(f[3]))
        if (dev, wl) not in order: order.append((dev, wl))
def load(i):
    c = {}
    for line in open(f"{d}/icount.{i}"):
        pc, n, e = line.split(); c[(int(pc, 16), int(n))] = int(e)
    return c
def window(key, k):
    a, n = dumps[key + (k, "start")]; b, _ = dumps[key + (k, "end")]
    a, b = load(a), load(b)
    return {blk: b.get(blk, 0) - a.get(blk, 0) for blk in b}, n
def per_io(key):
    (w0, n0), (w1, n1) = window(key, 0), window(key, 1)
    bl, ins = collections.Counter(), collections.Counter()
    for blk in set(w0) | set(w1):
        v = (w1.get(blk, 0) - w0.get(blk, 0)) / (n1 - n0)
        s = sym(blk[0]); bl[s] += v; ins[s] += v * blk[1]
    bl.pop(SPIN, None); ins.pop(SPIN, None)
    return bl, ins
for dev, wl in order:
    if (dev, wl, A, 0, "start") not in dumps or (dev, wl, R, 0, "start") not in dumps: continue
    a, r = per_io((dev, wl, A)), per_io((dev, wl, R))
    print(f"\n### {dev} {wl}: {A} vs {R}")
    for name, ia in (("blocks", 0), ("instructions", 1)):
        x, y = a[ia], r[ia]
        fs = set(x) | set(y)
        ta, tr = sum(x.values()), sum(y.values())
        shared = sum(min(max(x.get(f, 0), 0), max(y.get(f, 0), 0)) for f in fs)
        mod = sum(v for f, v in x.items() if f.endswith("[dio_batch]"))
        ua, ur = x.get("[user]", 0), y.get("[user]", 0)
        goal = 0.85 if ia else 0.90
        print(f"{name}: {A} {ta:.0f}, {R} {tr:.0f} ({ta/tr:.2f}x); shared (sum of per-function minima) {shared:.0f}; "
              f"own: {A} {ta-shared:.0f}, {R} {tr-shared:.0f}; module [dio_batch] {mod:.0f}; [user] {ua:.0f} / {ur:.0f}; "
              f"goal {goal}x = {goal*tr:.0f}, i.e. {A}'s own part at most {goal*tr-shared:.0f}")
    x, y = a[1], r[1]
    fs = sorted(set(x) | set(y), key=lambda f: (-abs(x.get(f, 0) - y.get(f, 0)), f))[:30]
    print("| function | %s insns | %s insns | %s blocks | %s blocks |" % (A, R, A, R))
    for f in fs:
        print(f"| {f} | {x.get(f,0):.0f} | {y.get(f,0):.0f} | {a[0].get(f,0):.0f} | {r[0].get(f,0):.0f} |")
    mods = sorted(((v, f) for f, v in x.items() if f.endswith("[dio_batch]")), reverse=True)
    print("module functions (insns, blocks): " + ", ".join(f"{f.split()[0]} {v:.0f}/{a[0].get(f,0):.0f}" for v, f in mods if v >= 1))
