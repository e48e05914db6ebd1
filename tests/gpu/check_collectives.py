#!/usr/bin/env python3
"""Checks `profview collectives --format json` (stdin) of samples/torch_allreduce.py's trace:
15 AllReduce calls of 105 MiB in all and 3 AllGather calls of 3 MiB, on a one-rank communicator.
Exit status 1 on any difference."""
import json
import sys

MiB = 1 << 20
WANT = {"AllReduce": (15, 5 * MiB + 5 * 4 * MiB + 5 * 16 * MiB), "AllGather": (3, 3 * MiB)}


def main() -> int:
    rows = {r["operation"]: r for r in json.load(sys.stdin)["collectives"]}
    bad = 0
    for op, (calls, size) in WANT.items():
        r = rows.get(op)
        if r is None:
            print(f"FAIL: no {op} row: {sorted(rows)}")
            bad += 1
            continue
        got = (r["calls"], r["bytes"], r["ranks"])
        if got != (calls, size, 1):
            print(f"FAIL: {op}: calls, bytes, ranks {got}, want {(calls, size, 1)}")
            bad += 1
        else:
            print(f"OK: {op}: {calls} calls, {size} bytes, 1 rank, "
                  f"{r['host_only_calls']} without device work")
    # The AVG all-reduces run a kernel each and the all-gathers a copy: at most the 5 SUM calls
    # (nothing to do on one rank) lack device work.
    if rows.get("AllReduce", {}).get("host_only_calls", 99) > 5:
        print("FAIL: AllReduce calls without device work:", rows["AllReduce"]["host_only_calls"])
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
