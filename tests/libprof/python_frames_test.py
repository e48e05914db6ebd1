"""Proves libprof's Python frame reader (libprof/backtrace/python_frames.h) against the real
interpreter running this script: the calling thread's frames are read innermost first with file,
line and qualified function name, whether the call holds the GIL (ctypes.PyDLL) or released it
(ctypes.CDLL, as PyTorch does before its CUDA calls); generator and coroutine frames are read; a
thread Python never saw reads nothing; a second Python thread reads its own frames; frames read
without the GIL stay exact while other threads run Python; reading changes no reference count
and no exception state.

Usage: python3 python_frames_test.py path/to/libpython_frames_probe.so"""
import asyncio
import ctypes
import sys
import threading

PROBE = sys.argv[1]
WITH_GIL = ctypes.PyDLL(PROBE)  # PyDLL keeps the GIL during the call
WITHOUT_GIL = ctypes.CDLL(PROBE)  # CDLL releases it
failures = []
QUALIFIED = sys.version_info >= (3, 11)  # co_qualname


def check(condition, what):
    if not condition:
        failures.append(what)


def parse(text):
    frames = [line.split("|") for line in text.splitlines()]
    return [(file, int(line), name) for file, line, name in frames]


def read(lib, function="ProbePythonFrames"):
    buffer = ctypes.create_string_buffer(1 << 16)
    n = getattr(lib, function)(buffer, len(buffer))
    return n, parse(buffer.value.decode())


def line_of(marker):
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return number
    raise AssertionError(marker)


def names(frames):
    return [name for _, _, name in frames]


class Model:
    def forward(self, lib):
        return read(lib)  # probe-call


def outer(lib):
    return Model().forward(lib)  # outer-call


FORWARD = "Model.forward" if QUALIFIED else "forward"
minor = WITH_GIL.ProbePythonMinor()
check(minor == sys.version_info.minor, f"reader found 3.{minor}, interpreter is {sys.version}")

for lib, how in ((WITH_GIL, "GIL held"), (WITHOUT_GIL, "GIL released")):
    n, frames = outer(lib)
    check(n == len(frames) and n >= 4, f"{how}: frames: {n} {frames}")
    check(names(frames)[:4] == ["read", FORWARD, "outer", "<module>"],
          f"{how}: innermost first: {names(frames)}")
    check(frames[1][1] == line_of("probe-call") and frames[2][1] == line_of("outer-call"),
          f"{how}: lines: {frames[:3]}")
    check(all(file == __file__ for file, _, _ in frames[:4]), f"{how}: files: {frames[:4]}")

n, frames = read(WITH_GIL, "ProbeFromNativeThread")
check(n == 0 and frames == [], f"native thread: {n} {frames}")


def generator(lib):
    yield read(lib)  # generator-call


async def coroutine(lib):
    return read(lib)  # coroutine-call


for lib, how in ((WITH_GIL, "GIL held"), (WITHOUT_GIL, "GIL released")):
    n, frames = next(generator(lib))
    check(names(frames)[:3] == ["read", "generator", "<module>"] and
          frames[1][1] == line_of("generator-call"), f"{how}: generator: {frames[:3]}")
    n, frames = asyncio.run(coroutine(lib))
    check(names(frames)[:2] == ["read", "coroutine"] and frames[1][1] == line_of("coroutine-call"),
          f"{how}: coroutine: {frames[:2]}")


def in_thread(result):
    result.append(outer(WITHOUT_GIL))  # thread-call


result = []
thread = threading.Thread(target=in_thread, args=(result,))
thread.start()
thread.join()
n, frames = result[0]
check(names(frames)[:4] == ["read", FORWARD, "outer", "in_thread"], f"thread: {frames}")
check(frames[3][1] == line_of("thread-call"), f"thread line: {frames[3]}")


# Without the GIL, while four threads run Python (calls, returns, new code objects, collected
# garbage), one thread reads its own frames 20000 times: every read is the same.
def busy(stop):
    while not stop.is_set():
        exec(compile("def f(x):\n    return [x] * 3\nf(1)", "<busy>", "exec"), {})


def read_repeatedly(times):
    buffer = ctypes.create_string_buffer(1 << 16)
    same = WITHOUT_GIL.ProbeReadRepeatedly(times, buffer, len(buffer))  # repeated-call
    return same, parse(buffer.value.decode())


stop = threading.Event()
workers = [threading.Thread(target=busy, args=(stop,)) for _ in range(4)]
for worker in workers:
    worker.start()
same, frames = read_repeatedly(20000)
stop.set()
for worker in workers:
    worker.join()
check(same == 20000, f"reads without the GIL that differed from the first: {20000 - same}")
check(names(frames)[:2] == ["read_repeatedly", "<module>"] and
      frames[0][1] == line_of("repeated-call"), f"repeated: {frames[:2]}")

# Nothing is written: reference counts unchanged, an exception being handled stays as it was.
frame = sys._getframe()
before = sys.getrefcount(frame.f_code), sys.getrefcount(frame.f_code.co_filename)
for _ in range(100):
    outer(WITH_GIL)
    outer(WITHOUT_GIL)
after = sys.getrefcount(frame.f_code), sys.getrefcount(frame.f_code.co_filename)
check(before == after, f"references: {before} -> {after}")
try:
    raise KeyError("kept")
except KeyError:
    outer(WITH_GIL)
    check(repr(sys.exc_info()[1]) == "KeyError('kept')", "the exception being handled changed")
check(sys.exc_info() == (None, None, None), "an exception was left set")
check(WITH_GIL.ProbeChecking() == 0, "loads are still checked after many good frames")
check(WITH_GIL.ProbeStopped() == 0, "the reader stopped")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"ok: CPython {sys.version.split()[0]} ({sys.executable})")
