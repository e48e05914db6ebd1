#!/usr/bin/env python3
"""What reading Python frames costs libprof per API call (issue 19): the reader and the interning
that CallSiteRecorder::OnApiEnter adds on a call made from Python, timed in a real interpreter
through tests/libprof/python_frames_probe.cc at several stack depths, with frames seen before
(ProbeInternFrames: through the thread's PythonFrameCache) and on first sight
(ProbeInternFramesUncached), minus a ctypes call that reads nothing (ProbePythonMinor). Multiply by the blocking
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
    print("cached: frames seen before (libprof's steady state); first sight: every frame's names "
          "read, line looked up, interned")
    for depth in (10, 30, 60):
        frames = at_depth(depth, lib.ProbeInternFrames)
        for name, probe in (("cached", lib.ProbeInternFrames),
                            ("first sight", lib.ProbeInternFramesUncached)):
            costs = []
            for _ in range(7):
                read = timed(probe, depth)
                empty = timed(lib.ProbePythonMinor, depth)
                costs.append(read - empty)
            ns = statistics.median(costs)
            print(f"depth {frames} frames ({depth} + {base_frames + 1} below), {name}: "
                  f"{ns:.0f} ns per call, {ns / frames:.0f} ns per frame")
    return 0


if __name__ == "__main__":
    sys.exit(main())
