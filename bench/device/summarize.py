#!/usr/bin/env python3
"""Prints the one table of bench/device/run_device.sh from its raw CSV (stdlib only).

Per case and configuration: the median and range over rounds, the median's added cost over the
case's `none` row, libprof's added cost as a ratio of the reference tool's (the CUPTI floor for
the launch loop: target <= 1.1; torch.profiler CPU+CUDA for the PyTorch loops: target <= 0.5),
the most records any run dropped (target 0), trace bytes per record (target < 32) and the median
time from the last CUDA call to process end where the program reports it.

Then one line per case on the cost of call stacks (LIBPROF_BACKTRACE blocking and all against
none), and one line on trace size for 100k x.add_(1): libprof's trace (row size-libprof) against
torch.profiler's Chrome trace (its size in bytes, the second argument).

Usage: summarize.py bench.csv [kineto_chrome_trace_bytes]
"""
import csv
import statistics
import sys

UNITS = {"launch": "us/launch", "torch-add": "us/op", "torch-mlp": "us/step", "exit": "ms",
         "copy": "ms", "long": "ms", "uvm-launch": "us/launch", "resnet": "ms/step", "gpt2": "ms/step",
         "resnet-median": "ms/step", "gpt2-median": "ms/step"}
CONFIGS = ["none", "floor", "libprof-bt-none", "libprof", "libprof-no-driver", "libprof-uvm", "libprof-no-python",
           "libprof-bt-all", "libprof-all", "libprof-buffered", "kineto-cpu-cuda", "kineto-cuda"]
REFERENCE = {"launch": "floor", "torch-add": "kineto-cpu-cuda", "torch-mlp": "kineto-cpu-cuda",
             "resnet": "kineto-cpu-cuda", "gpt2": "kineto-cpu-cuda",
             "resnet-median": "kineto-cpu-cuda", "gpt2-median": "kineto-cpu-cuda"}


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    with open(sys.argv[1], newline="") as f:
        all_rows = list(csv.DictReader(f))
    rows = [r for r in all_rows if r["case"] in UNITS]
    order = {name: i for i, name in enumerate(list(UNITS) + CONFIGS)}
    rows.sort(key=lambda r: (order[r["case"]], order.get(r["config"], len(order))))
    groups = {}  # (case, config) -> rows, cases and configurations in the order above
    for r in rows:
        groups.setdefault((r["case"], r["config"]), []).append(r)
    medians = {}
    for key, runs in groups.items():
        values = [v for v in (number(r["value"]) for r in runs) if v is not None]
        medians[key] = statistics.median(values) if values else None

    header = ["case", "config", "median", "min-max", "added vs none", "added/ref", "dropped",
              "B/record", "exit ms", "runs"]
    table = [header]
    for (case, config), runs in groups.items():
        values = [v for v in (number(r["value"]) for r in runs) if v is not None]
        median = medians[(case, config)]
        base = medians.get((case, "none"))
        added = None if median is None or base is None else median - base
        ratio = "-"
        ref = REFERENCE.get(case)
        if config.startswith("libprof") and ref and added is not None:
            ref_median = medians.get((case, ref))
            ref_added = None if ref_median is None or base is None else ref_median - base
            ratio = fmt(added / ref_added, 2) if ref_added and ref_added > 0 else "n/a"
        dropped = [int(d) for d in (number(r["dropped"]) for r in runs) if d is not None]
        per_record = [number(r["trace_bytes"]) / number(r["records"]) for r in runs
                      if number(r["trace_bytes"]) and number(r["records"])]
        exits = [e / 1000 for e in (number(r["exit_us"]) for r in runs) if e is not None]
        failed = sum(1 for r in runs if number(r["value"]) is None)
        statuses = sorted({r["value"] for r in runs if number(r["value"]) is None})
        table.append([
            case, config,
            f"{fmt(median)} {UNITS[case]}" if median is not None else "/".join(statuses),
            f"{fmt(min(values))}-{fmt(max(values))}" if values else "-",
            f"{added:+.3f}" if added is not None and config != "none" else "-",
            ratio,
            str(max(dropped)) if dropped else "-",
            fmt(statistics.median(per_record), 1) if per_record else "-",
            fmt(statistics.median(exits), 1) if exits else "-",
            f"{len(values)}" + (f" ({failed} {'/'.join(statuses)})" if failed else ""),
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print_round_ratios(groups)
    print_backtrace_cost(medians)
    print_trace_size(all_rows, number(sys.argv[2]) if len(sys.argv) > 2 else None)
    return 0


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def print_round_ratios(groups):
    """The added/ref ratio computed within each round, where the configurations ran back to back:
    a slow spell of the machine shifts all of a round's runs, so these ratios vary less than
    the runs themselves. Median and quartiles over the rounds."""
    for (case, config), runs in groups.items():
        ref = REFERENCE.get(case)
        if not ref or not config.startswith("libprof"):
            continue
        by_round = lambda c: {r["round"]: number(r["value"]) for r in groups.get((case, c), [])}
        mine, base, reference = by_round(config), by_round("none"), by_round(ref)
        ratios = []
        for rnd, value in mine.items():
            b, f = base.get(rnd), reference.get(rnd)
            if None not in (value, b, f) and f - b > 0:
                ratios.append((value - b) / (f - b))
        if ratios:
            q1, q2, q3 = quartiles(ratios)
            print(f"{case} {config} added/{ref} per round: median {q2:.2f}, "
                  f"quartiles {q1:.2f}-{q3:.2f}, {len(ratios)} rounds")


def print_backtrace_cost(medians):
    """Call stacks (LIBPROF_BACKTRACE): libprof (blocking, the default) and libprof-bt-all against
    libprof-bt-none, per unit of the case (a launch, an op, a step)."""
    for case in ("launch", "torch-add", "torch-mlp", "resnet", "gpt2"):
        base = medians.get((case, "libprof-bt-none"))
        if base is None:
            continue
        # The target: blocking within 10% of libprof's overhead without stacks.
        none = medians.get((case, "none"))
        overhead = base - none if none is not None else None
        parts = []
        for config, label in (("libprof", "blocking"), ("libprof-bt-all", "all")):
            value = medians.get((case, config))
            if value is None:
                continue
            share = (f" ({(value - base) / overhead * 100:+.1f}% of libprof's overhead)"
                     if overhead and overhead > 0 else "")
            parts.append(f"{label} {value - base:+.3f} {UNITS[case]}{share}")
        tail = f"; libprof's overhead with none: {overhead:+.3f}" if overhead is not None else ""
        print(f"Call stacks, {case}: vs LIBPROF_BACKTRACE=none, " + ", ".join(parts) + tail)
        # Python frames (issue 19): blocking with them against blocking without, as a share of
        # libprof's own added time (target <= 2%).
        with_python, without = medians.get((case, "libprof")), medians.get((case, "libprof-no-python"))
        if None not in (with_python, without, none) and with_python > none:
            print(f"Python frames, {case}: {with_python - without:+.3f} {UNITS[case]}, "
                  f"{(with_python - without) / (with_python - none) * 100:+.1f}% of libprof's "
                  f"added time ({with_python - none:+.3f})")


def print_trace_size(all_rows, kineto_bytes):
    size = next((r for r in all_rows if r["case"] == "size-libprof"), None)
    libprof_bytes = number(size["trace_bytes"]) if size else None
    records = number(size["records"]) if size else None
    # The libprof run traces the 5k warm-up ops too; torch.profiler only the 100k timed ones.
    libprof = (f"{libprof_bytes / 105_000:.0f} B/op, {libprof_bytes / records:.1f} B/record"
               if libprof_bytes and records else "FAILED")
    kineto = f"{kineto_bytes / 100_000:.0f} B/op" if kineto_bytes else "FAILED"
    print(f"Trace size, 100k x.add_(1): libprof {libprof} (105k ops traced, with warm-up); "
          f"torch.profiler CPU+CUDA Chrome trace {kineto} (uncompressed)")


if __name__ == "__main__":
    sys.exit(main())
