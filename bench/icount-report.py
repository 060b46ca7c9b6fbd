#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The report of bench/icount.sh: icount-report.py RESULTS_DIR [TOP [REF]].

RESULTS_DIR holds the guest's runs file (DUMP lines), kallsyms and the
plugin's dumps icount.N ("PC INSNS EXECS" a block).  Each engine and
workload ran N0 and N0 + N I/Os between two dumps; a figure per I/O is
(window(N0 + N) - window(N0)) / N, so io_bench's set-up and exit cancel
out.  Kernel blocks are named by the guest's kallsyms; user space is one
"[user]".  Spinning on a contended lock (native_queued_spin_lock_slowpath)
depends on timing, not on the code: it is left out of the totals and
shown on its own.  Ratios are relative to REF, by default io_uring+pi
if it ran (the peer of the engines with the caller's PI), else io_uring,
else the last engine.
"""
import bisect
import collections
import sys

SPIN = "native_queued_spin_lock_slowpath"


def main():
    d = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    want = sys.argv[3] if len(sys.argv) > 3 else None
    syms = []
    for line in open(f"{d}/kallsyms"):
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            syms.append((int(f[0], 16), f[2] + (" " + f[3] if len(f) > 3 else "")))
    syms.sort()
    addrs = [a for a, _ in syms]

    def sym(pc):
        if pc < 0xffff800000000000:
            return "[user]"
        i = bisect.bisect_right(addrs, pc) - 1
        return syms[i][1] if i >= 0 else "?"

    guest, devs, dumps, order = "", {}, {}, []
    for line in open(f"{d}/runs"):
        f = line.split()
        if f[0] == "GUEST":
            guest = line[6:].strip()
        elif f[0] == "DEV":
            devs[f[1]] = " ".join(f[2:])
        elif f[0] == "DUMP":
            dev, wl, eng, k, what = f[2].split(":")
            dumps[(dev, wl, eng, int(k), what)] = (int(f[1]), int(f[3]))
            if (dev, wl, eng) not in order:
                order.append((dev, wl, eng))
    cache = {}

    def load(i):
        if i not in cache:
            c = {}
            for line in open(f"{d}/icount.{i}"):
                pc, n, e = line.split()
                c[(int(pc, 16), int(n))] = int(e)
            cache[i] = c
        return cache[i]

    def window(key, k):
        a, n = dumps[key + (k, "start")]
        b, _ = dumps[key + (k, "end")]
        a, b = load(a), load(b)
        return {blk: b.get(blk, 0) - a.get(blk, 0) for blk in b}, n

    res = {}
    for key in order:
        cache.clear()		# a key's three dumps at a time
        (w0, n0), (w1, n1) = window(key, 0), window(key, 1)
        blocks, insns = collections.Counter(), collections.Counter()
        for blk in set(w0) | set(w1):
            v = (w1.get(blk, 0) - w0.get(blk, 0)) / (n1 - n0)
            s = sym(blk[0])
            blocks[s] += v
            insns[s] += v * blk[1]
        res[key] = (blocks, insns)

    print(f"Guest: {guest}")
    for k, v in sorted(devs.items()):
        print(f"Device {k}: {v}")
    print("Per I/O, whole guest (all CPUs, kernel and user space): TCG blocks executed (what CPU")
    print("time costs under TCG) and guest instructions executed (what it would cost on hardware);")
    print(f"spinning = blocks in {SPIN}, not in the totals.")
    groups = []
    for dev, wl, eng in order:
        if (dev, wl) not in groups:
            groups.append((dev, wl))
    for dev, wl in groups:
        engs = [e for (d2, w2, e) in order if (d2, w2) == (dev, wl)]
        ref = next((r for r in (want, "io_uring+pi", "io_uring") if r in engs), engs[-1])
        tot = {}
        for e in engs:
            b, i = res[(dev, wl, e)]
            tot[e] = (sum(v for s, v in b.items() if s != SPIN),
                      sum(v for s, v in i.items() if s != SPIN), b.get(SPIN, 0))
        print(f"\n### {dev}, {wl} ({devs.get(dev, '')})\n")
        print(f"| engine | blocks | vs {ref} | instructions | vs {ref} | spinning blocks |")
        print("|---|---:|---:|---:|---:|---:|")
        for e in engs:
            b, i, sp = tot[e]
            print(f"| {e} | {b:.0f} | {b / tot[ref][0]:.2f}x | {i:.0f} | {i / tot[ref][1]:.2f}x | {sp:.0f} |")
        first = engs[0]
        rows = set()
        for e in engs:
            rows |= set(res[(dev, wl, e)][0])
        rows.discard(SPIN)
        rows = sorted(rows, key=lambda s: -abs(res[(dev, wl, first)][0].get(s, 0) -
                                              res[(dev, wl, ref)][0].get(s, 0)))[:top]
        print(f"\nBlocks per I/O by function, the {top} that differ most between {first} and {ref}:\n")
        print("| function | " + " | ".join(engs) + " |")
        print("|---|" + "---:|" * len(engs))
        for s in rows:
            print(f"| {s} | " + " | ".join(f"{res[(dev, wl, e)][0].get(s, 0):.0f}" for e in engs) + " |")


if __name__ == "__main__":
    main()
