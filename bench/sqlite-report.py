#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""bench-sqlite's table, from the guest's RUN and PI_PAGE lines
(bench/run-sqlite.sh): per configuration the medians of speedtest1's CPU
time (user + system), the guest's busy time, wall time and the pages (4 KiB)
the namespace read and wrote; each round's ratio to ext4 (the unix VFS on
ext4, the host doing no PI), as the median and the range; then the CPU
cost of PI per page (pi_page) and its share of the dio run's CPU per page.

    sqlite-report.py GUEST_LOG

Exit status 1 when a run failed (dio-nopi aside), speedtest1's
verification hashes differ, or a line is missing."""
import statistics
import sys

REF = "ext4"
ORDER = ["dio", "ext4", "ext4+pi", "ext4-nopi"]
PAGE = 4096


def kv(line):
    return dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)


def main():
    runs, pi, other, nopi = [], [], [], []
    keep = False  # the indented lines after dio-nopi's: its messages
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            if keep and line.startswith("    "):
                nopi.append(line.rstrip())
                continue
            keep = line.startswith(("RUN cfg=dio-nopi ", "dio-nopi:"))
            if line.startswith(("dio-nopi:", "ext4-nopi:")):
                nopi.append(line.rstrip())
            elif line.startswith("RUN "):
                runs.append(kv(line))
            elif line.startswith("PI_PAGE "):
                pi.append(kv(line))
            elif line.startswith(("guest:", "device:", "speedtest1 ")):
                other.append(line.rstrip())
    bad = 0
    for line in other:
        print(line)
    ticks = 100  # USER_HZ
    for line in other:
        if "USER_HZ" in line:
            ticks = int(line.split("USER_HZ ")[1].split(",")[0])
    for r in runs:
        r["cpu"] = float(r["user"]) + float(r["sys"])
        r["busy"] = int(r["guest_busy_ticks"]) / ticks
        r["wall"] = int(r["wall_ms"]) / 1000
        r["rd"] = int(r["rd_sectors"]) * 512 / PAGE
        r["ios"] = int(r["rd_ios"]) + int(r["wr_ios"])
        r["wr"] = int(r["wr_sectors"]) * 512 / PAGE
    ok = [r for r in runs if r["status"] == "0" and r["cfg"] in ORDER]
    for r in runs:
        if r["cfg"] in ORDER and r["status"] != "0":
            print(f"FAIL: {r['cfg']} round {r['round']}: speedtest1 exited with {r['status']}")
            bad = 1
    hashes = {r["hash"] for r in ok}
    if len(hashes) != 1:
        print(f"FAIL: speedtest1's verification hashes differ: {sorted(hashes)}")
        bad = 1
    else:
        print(f"speedtest1's verification hash, the same in all {len(ok)} runs: "
              f"{hashes.pop().replace('/', ' ')}")
    print()
    by = {c: [r for r in ok if r["cfg"] == c] for c in ORDER}
    ref = {r["round"]: r for r in by[REF]}
    print("Medians over the rounds; x = the configuration over ext4 in the same round,"
          " median (lowest-highest).")
    print("CPU = speedtest1's user + system time; guest = both vCPUs' busy time;"
          " pages = 4 KiB read + written on the namespace; I/Os = its requests.")
    print()
    print("| configuration | runs | CPU s | xCPU | guest s | xguest | wall s | xwall "
          "| pages read + written | I/Os |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in ORDER:
        rs = by[c]
        if not rs:
            print(f"| {c} | 0 | | | | | | | | |")
            bad |= c != "ext4-nopi"
            continue
        cells = [c, str(len(rs))]
        for k in ("cpu", "busy", "wall"):
            cells.append(f"{statistics.median(r[k] for r in rs):.2f}")
            xs = [r[k] / ref[r["round"]][k] for r in rs
                  if r["round"] in ref and ref[r["round"]][k] > 0]
            cells.append(f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
                         if xs else "")
        cells.append(f"{statistics.median(r['rd'] for r in rs):.0f} + "
                     f"{statistics.median(r['wr'] for r in rs):.0f}")
        cells.append(f"{statistics.median(r['ios'] for r in rs):.0f}")
        print("| " + " | ".join(cells) + " |")
    for r in runs:
        if r["cfg"] == "dio-nopi":
            print()
            print(f"dio-nopi (the dio VFS on a namespace without PI): speedtest1 exited with "
                  f"{r['status']}" + (": refused" if r["status"] != "0" else ", ran"))
    for line in nopi:
        print(line)
    print()
    if not pi:
        print("FAIL: no PI_PAGE lines (pi_page did not run)")
        return 1
    print("PI's CPU cost per page (pi_page in each round, after its dio run: libdioctl's"
          " dio_pi_generate() and dio_pi_verify() with every check, a hot page), median"
          " (lowest-highest) over the rounds:")
    print()
    print("| format | generate ns/page | verify ns/page |")
    print("| --- | ---: | ---: |")
    fmts = sorted({(p["guard"], p["interval"], p["page"]) for p in pi},
                  key=lambda f: (int(f[1]), f[0], int(f[2])))
    for f in fmts:
        ps = [p for p in pi if (p["guard"], p["interval"], p["page"]) == f]
        cells = [f"{f[0]} at {f[1]}-byte intervals, {f[2]}-byte page"]
        for k in ("gen_ns", "verify_ns"):
            xs = [float(p[k]) for p in ps]
            cells.append(f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})")
        print("| " + " | ".join(cells) + " |")
    # Namespace 1's format, CRC16 at 512-byte intervals, against the dio
    # run of the same round: PI for every page written and read.
    ns1 = {p["round"]: p for p in pi if p["guard"] == "crc16" and p["interval"] == "512"
           and p["page"] == str(PAGE)}
    fr_cpu, fr_busy, per_page = [], [], []
    for r in by["dio"]:
        p = ns1.get(r["round"])
        if not p:
            continue
        pi_s = (float(p["gen_ns"]) * r["wr"] + float(p["verify_ns"]) * r["rd"]) / 1e9
        fr_cpu.append(100 * pi_s / r["cpu"])
        fr_busy.append(100 * pi_s / r["busy"])
        per_page.append(r["cpu"] * 1e6 / (r["rd"] + r["wr"]))
    if not fr_cpu:
        print("FAIL: no round with both a dio run and pi_page's CRC16 512 line")
        return 1
    rng = lambda xs, f: f"{statistics.median(xs):{f}} ({min(xs):{f}}-{max(xs):{f}})"
    print()
    print(f"dio: speedtest1's CPU time per page read or written {rng(per_page, '.0f')} µs;"
          f" PI generation of every page written and verification of every page read"
          f" (CRC16, 512-byte intervals) would take {rng(fr_cpu, '.2f')}% of it,"
          f" {rng(fr_busy, '.2f')}% of the guest's busy time (each round's pi_page"
          f" against its own dio run).")
    return bad


if __name__ == "__main__":
    sys.exit(main())
