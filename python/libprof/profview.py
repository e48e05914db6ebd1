"""Finding and running profview, the analyser every other part of this package goes through.

profview is the one reader of libprof traces (it validates them and knows the schema); the Python
side never parses a trace itself, so there is no second reader to keep in step with the format.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

#: The environment variable that names the profview executable to use.
PROFVIEW_ENV = "LIBPROF_PROFVIEW"

PathLike = Union[str, "os.PathLike[str]"]


class ProfviewError(RuntimeError):
    """profview failed: the message is profview's own (its stderr, without the "profview: "
    prefix); `exit_code` is its exit status (1 bad input, 2 bad usage), `command` what was run
    and `stderr` everything it wrote there."""

    def __init__(self, message: str, exit_code: Optional[int] = None,
                 command: Sequence[str] = (), stderr: str = ""):
        super().__init__(message)
        self.exit_code = exit_code
        self.command = list(command)
        self.stderr = stderr


class ProfviewNotFoundError(ProfviewError, FileNotFoundError):
    """No profview executable where this package looks for it (see find_profview)."""

    def __init__(self, message: str):
        ProfviewError.__init__(self, message)


class ProfviewWarning(UserWarning):
    """A warning profview printed (a truncated trace, dropped records, skipped kinds)."""


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _candidates_next_to_package() -> Iterable[Path]:
    # A profview placed in the package's own directory (a bundle), then in the bin directory of
    # the environment the package is installed in (a venv or prefix that also holds libprof).
    yield Path(__file__).resolve().parent / "profview"
    scripts = sysconfig.get_path("scripts")
    if scripts:
        yield Path(scripts) / "profview"
    yield Path(sys.prefix) / "bin" / "profview"


def find_profview(profview: Optional[PathLike] = None) -> str:
    """The path of the profview executable: `profview` when given, else $LIBPROF_PROFVIEW, else
    one next to this package, else the first on PATH. Raises ProfviewNotFoundError naming where
    it looked; an explicit path or $LIBPROF_PROFVIEW that is not runnable is an error, never
    silently replaced by another profview."""
    if profview is not None:
        path = Path(profview)
        if not _runnable(path):
            raise ProfviewNotFoundError(f"profview not found: {path} is not an executable file")
        return str(path)
    from_env = os.environ.get(PROFVIEW_ENV)
    if from_env:
        path = Path(from_env)
        if not _runnable(path):
            raise ProfviewNotFoundError(
                f"profview not found: {PROFVIEW_ENV}={from_env} is not an executable file")
        return str(path)
    for path in _candidates_next_to_package():
        if _runnable(path):
            return str(path)
    on_path = shutil.which("profview")
    if on_path:
        return on_path
    raise ProfviewNotFoundError(
        f"profview not found: set {PROFVIEW_ENV} to its path (build/viewer-cli/profview in a "
        f"libprof build), or put it on PATH or next to the libprof package")


def _profview_lines(stderr: str):
    """profview's stderr lines without their "profview: " prefix, split into warnings and the
    rest (the error)."""
    found_warnings, errors = [], []
    for line in stderr.splitlines():
        text = line[len("profview: "):] if line.startswith("profview: ") else line
        if text.startswith("warning: "):
            found_warnings.append(text[len("warning: "):])
        elif text.strip():
            errors.append(text)
    return found_warnings, errors


def run_profview(args: Sequence[Union[str, PathLike]], profview: Optional[PathLike] = None,
                 *, text: bool = True) -> Union[str, bytes]:
    """Runs profview with `args` and returns its stdout (str, or bytes with text=False).
    profview's warnings are re-issued as ProfviewWarning; a non-zero exit raises ProfviewError
    carrying profview's message and exit code; a missing profview raises
    ProfviewNotFoundError."""
    command = [find_profview(profview)] + [os.fspath(a) for a in args]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, check=False)
    except OSError as e:  # not an ELF for this machine, a missing loader, ...
        raise ProfviewError(f"cannot run {command[0]}: {e}", None, command) from e
    stderr = done.stderr.decode("utf-8", errors="replace")
    found_warnings, errors = _profview_lines(stderr)
    if done.returncode != 0:
        message = "\n".join(errors) or f"profview exited with status {done.returncode}"
        raise ProfviewError(message, done.returncode, command, stderr)
    for w in found_warnings:
        warnings.warn(w, ProfviewWarning, stacklevel=2)
    return done.stdout.decode("utf-8") if text else done.stdout
