#!/usr/bin/env python3
"""Checks the JSON report of testdata/c/stats.c (run.sh):
statscheck.py REPORT.json NP PATH: one JSON line, for PATH, with stats.c's counts."""
import json
import sys

report, np, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(report) as f:
    docs = [json.loads(line) for line in f]
if len(docs) != 1:
    sys.exit(f"{report}: {len(docs)} reports, want 1")
d = docs[0]
cw, cr, iw = d["collective_write"], d["collective_read"], d["independent_write"]
checks = {
    "format": d["format"] == "collio-stats/1",
    "path": d["path"] == path,
    "ranks": d["ranks"] == np,
    "write calls": cw["calls"] == {"sum": 5 * np, "min": 5, "max": 5},
    "write bytes": cw["bytes"]["sum"] == np * 448 * 1024,
    "write pieces": cw["pieces"]["min"] == cw["pieces"]["max"] == 3073,
    "read calls": cr["calls"]["max"] == 1,
    "independent writes": iw["calls"]["sum"] == np and iw["bytes"]["sum"] == np * 64,
    "times": cw["total_ns"]["max"] > 0 and cw["io_ns"]["sum"] > 0,
    "strategy calls": sum(g["calls"] for g in d["strategies"]) == 6,
    "cb disabled": any(g["reason"].startswith("romio_cb_write=disable") and g["first_calls"] == [4]
                       for g in d["strategies"]),
}
bad = [k for k, ok in checks.items() if not ok]
if bad:
    sys.exit(f"wrong in the JSON report: {', '.join(bad)}:\n{json.dumps(d, indent=1)}")
