#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that every figure of `linerate run`'s text report is its JSON document's, to the digit.

run_table.py REPORT JSON

REPORT is what `run` printed (the table, "where the frames went", the search summary); JSON is
the document of the same run. Each step's row is rebuilt from the JSON with the format
print_steps() (src/run/run_report.c) uses, and must start the same way the printed row does (the
pass column is left out: its words are the verdict's, checked elsewhere). Then, per step, the
counts of "where the frames went" and the cost line, and per search the found rate, its L1 rate
and latency. Prints one line per mismatch and a count; exits 1 on any mismatch, 2 on bad input.
"""
import json
import re
import sys


def fmt_si(v):
    """lr_fmt_si(): 4 significant digits with a k/M/G/T suffix."""
    sfx = ["", " k", " M", " G", " T"]
    i = 0
    while v >= 1000.0 and i < 4:
        v /= 1000.0
        i += 1
    return ("%.3f%s" if i else "%.0f%s") % (v, sfx[i])


def lat_us(step, key):
    lat = step["latency_ns"]
    if not lat["valid"] or not lat["count"]:
        return "n/a"
    return "%.1f" % (lat[key] / 1e3)


def spread(step):
    out = ""
    for k, q in enumerate(step["tx"]["per_queue"]):
        if len(out) >= 64 - 12:
            break
        out += ("/" if k else "") + fmt_si(q["pps"])
    return out[:63]


def row(i, s):
    size = "mixed" if len(s["sizes"]) > 1 else str(s["size"])
    return "%-4u %5s %5s %10s %10s %10s %8.3f %8.3f %6u %8s %8s  %-18s " % (
        i + 1, size, str(s["trial"]) if s.get("trial") else "-",
        fmt_si(s["offered_pps"]) if s["offered_pps"] else "max", fmt_si(s["tx"]["pps"]),
        fmt_si(s["rx"]["pps"]), s["rx"]["bps_l1"] / 1e9, s["loss_pct"], s["rx"]["reordered"],
        lat_us(s, "p50"), lat_us(s, "p99"), spread(s))


def main():
    report = open(sys.argv[1]).read().splitlines()
    doc = json.load(open(sys.argv[2]))
    steps = doc["steps"]
    bad = []
    checked = 0

    # the table: the header, then one row per step
    try:
        top = next(n for n, line in enumerate(report) if re.match(r"^step +size +trial", line))
    except StopIteration:
        print("no table in the report")
        return 2
    rows = report[top + 1:top + 1 + len(steps)]
    if len(rows) != len(steps) or any(not re.match(r"^\d+ ", r) for r in rows):
        bad.append("table rows: want %d, got %r" % (len(steps), rows))
    for i, (s, got) in enumerate(zip(steps, rows)):
        want = row(i, s)
        checked += 1
        if not got.startswith(want):
            bad.append("step %d row:\n  printed  %r\n  from JSON %r" % (i + 1, got, want))

    # where the frames went: counts, and the cost split
    where = [line for line in report if re.match(r"^\d+ +(mode \S+; )?queued ", line)]
    if len(where) != len(steps):
        bad.append("'where the frames went' lines: want %d, got %d" % (len(steps), len(where)))
    for i, (s, line) in enumerate(zip(steps, where)):
        want = "queued %d, completed %d, received %d, lost %d; tx dev dropped %d, rx dev dropped %d" % (
            s["tx"]["queued"], s["tx"]["completed"], s["rx"]["packets"], s["rx"]["lost"],
            s["tx"]["device"]["tx_dropped"], s["rx"]["device"]["rx_dropped"])
        checked += 1
        if want not in line:
            bad.append("step %d where: want %r in %r" % (i + 1, want, line))
    costs = [line for line in report if re.match(r"^     cost [-0-9]", line)]
    with_cost = [s for s in steps if s["cost_ns_per_packet"] is not None]
    if len(costs) != len(with_cost):
        bad.append("cost lines: want %d, got %d" % (len(with_cost), len(costs)))
    for s, line in zip(with_cost, costs):
        c = s["cost_ns_per_packet"]
        checked += 1
        for part in ("sender", "path", "receiver"):
            if c[part] is None:
                continue
            want = "%s %.0f (+-%.0f)" % (part, c[part], c["error"][part])
            if want not in line:
                bad.append("cost: want %r in %r" % (want, line))
        want = "cost %.0f ns/packet (+-%.0f)" % (c["total"], c["error"]["total"])
        if want not in line:
            bad.append("cost: want %r in %r" % (want, line))

    # the search summary: "  SIZE B: RATE pps (L1 Gbit/s L1), [rtt ]p50 X us, p99 Y us, ..."
    for t in doc.get("throughput", []):
        if not t["found"]:
            continue
        lines = [line for line in report if re.match(r"^ +%d B: " % t["size"], line)]
        checked += 1
        if len(lines) != 1:
            bad.append("search %d B: want 1 summary line, got %r" % (t["size"], lines))
            continue
        p50 = "n/a" if t["latency_p50_ns"] is None else "%.1f" % (t["latency_p50_ns"] / 1e3)
        p99 = "n/a" if t["latency_p99_ns"] is None else "%.1f" % (t["latency_p99_ns"] / 1e3)
        for want in ("%s pps (%.3f Gbit/s L1)" % (fmt_si(t["rate_pps"]), t["bps_l1"] / 1e9),
                     "p50 %s us, p99 %s us" % (p50, p99)):
            if want not in lines[0]:
                bad.append("search %d B: want %r in %r" % (t["size"], want, lines[0]))

    for b in bad:
        print(b)
    print("%d steps, %d figures' lines checked, %d mismatches" % (len(steps), checked, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
