"""Proves libprof's Python frame reader (libprof/backtrace/python_frames.h) against the real
interpreter running this script: the frames of a thread holding the GIL are read innermost first
with file, line and qualified function name; a call that released the GIL and a thread Python
never saw read nothing; a second Python thread reads its own frames; reading leaves no exception
set and no reference behind.

Usage: python3 python_frames_test.py path/to/libpython_frames_probe.so"""
import ctypes
import sys
import threading

PROBE = sys.argv[1]
WITH_GIL = ctypes.PyDLL(PROBE)  # PyDLL keeps the GIL during the call
WITHOUT_GIL = ctypes.CDLL(PROBE)  # CDLL releases it
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def read(lib, function="ProbePythonFrames"):
    buffer = ctypes.create_string_buffer(1 << 16)
    n = getattr(lib, function)(buffer, len(buffer))
    frames = [line.split("|") for line in buffer.value.decode().splitlines()]
    return n, [(file, int(line), name) for file, line, name in frames]


def line_of(marker):
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return number
    raise AssertionError(marker)


class Model:
    def forward(self, lib):
        return read(lib)  # probe-call


def outer(lib):
    return Model().forward(lib)  # outer-call


minor = WITH_GIL.ProbePythonMinor()
check(minor == sys.version_info.minor, f"reader found 3.{minor}, interpreter is {sys.version}")

n, frames = outer(WITH_GIL)
check(n == len(frames) and n >= 4, f"frames: {n} {frames}")
names = [name for _, _, name in frames]
qualified = sys.version_info >= (3, 11)
check(names[:3] == ["read", "Model.forward" if qualified else "forward", "outer"],
      f"innermost first: {names}")
check(frames[1][1] == line_of("probe-call") and frames[2][1] == line_of("outer-call"),
      f"lines: {frames[:3]}")
check(all(file == __file__ for file, _, _ in frames[:4]), f"files: {frames[:4]}")
check(names[3] == "<module>", f"outermost: {names}")

n, frames = outer(WITHOUT_GIL)
check(n == 0 and frames == [], f"GIL released: {n} {frames}")
n, frames = read(WITH_GIL, "ProbeFromNativeThread")
check(n == 0 and frames == [], f"native thread: {n} {frames}")


def in_thread(result):
    result.append(outer(WITH_GIL))  # thread-call


result = []
thread = threading.Thread(target=in_thread, args=(result,))
thread.start()
thread.join()
n, frames = result[0]
check([name for _, _, name in frames][:4] ==
      ["read", "Model.forward" if qualified else "forward", "outer", "in_thread"],
      f"thread: {frames}")
check(frames[3][1] == line_of("thread-call"), f"thread line: {frames[3]}")

# No reference kept: the reader's new references are all released (refcounts unchanged).
frame = sys._getframe()
before = sys.getrefcount(frame.f_code), sys.getrefcount(frame.f_code.co_filename)
for _ in range(100):
    outer(WITH_GIL)
after = sys.getrefcount(frame.f_code), sys.getrefcount(frame.f_code.co_filename)
check(before == after, f"references: {before} -> {after}")

# After those reads the names come from the code object directly (python_frames.h): the same
# frames, methods still qualified.
check(WITH_GIL.ProbeDirectNames() == 1, "names are still read as attributes")
n, frames = outer(WITH_GIL)
check([name for _, _, name in frames][:3] == ["read", "Model.forward" if qualified else "forward",
                                               "outer"], f"direct names: {frames}")
check(frames[1][0] == __file__, f"direct file: {frames[1]}")
check(sys.exc_info() == (None, None, None), "an exception was left set")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"ok: CPython {sys.version.split()[0]} ({sys.executable})")
