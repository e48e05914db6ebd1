#!/usr/bin/env python3
"""What reading Python frames costs libprof per API call (issue 19): the reader and the interning
that CallSiteRecorder::OnApiEnter adds on a call made from Python holding the GIL, timed in a
real interpreter through tests/libprof/python_frames_probe.cc (ProbeInternFrames) at several
stack depths, minus a ctypes call that reads nothing (ProbePythonMinor). Multiply by the blocking
calls per step (or every call, LIBPROF_BACKTRACE=all) to get its share of a step.

Usage: python3 bench/python_frames_bench.py build/tests/libprof/libpython_frames_probe.so
Prints one line per depth: ns per call, ns per frame.
"""
import ctypes
import statistics
import sys
import time

lib = ctypes.PyDLL(sys.argv[1])
CALLS = 20000


def at_depth(depth, fn):
    if depth > 1:
        return at_depth(depth - 1, fn)
    return fn()


def timed(fn, depth):
    def loop():
        for _ in range(CALLS):
            fn()
    start = time.perf_counter_ns()
    at_depth(depth, loop)
    return (time.perf_counter_ns() - start) / CALLS


def main():
    base_frames = lib.ProbeInternFrames() - 1  # the frames below at_depth: main and <module>
    print(f"python {sys.version.split()[0]}; {CALLS} calls per sample, median of 7 samples")
    for depth in (10, 30, 60):
        frames = at_depth(depth, lib.ProbeInternFrames)
        costs = []
        for _ in range(7):
            read = timed(lib.ProbeInternFrames, depth)
            empty = timed(lib.ProbePythonMinor, depth)
            costs.append(read - empty)
        ns = statistics.median(costs)
        print(f"depth {frames} frames ({depth} + {base_frames + 1} below): {ns:.0f} ns per call, "
              f"{ns / frames:.0f} ns per frame")
    return 0


if __name__ == "__main__":
    sys.exit(main())
