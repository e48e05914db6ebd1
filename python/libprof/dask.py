"""Many-rank analysis on a Dask cluster: `profview summary` or `profview findings` over
thousands of trace files.

    python3 -m libprof.dask summary 'run/*.pb' [--scheduler ADDRESS] [--format json] [FLAGS]
    python3 -m libprof.dask findings 'run/*.pb' [--scheduler ADDRESS] [--format json] [FLAGS]

The map step runs `profview summary --partial` (or `findings --partial`) on the workers, one
task per group of files (--files-per-task, default 1); the reduce step is a tree of `profview
combine --partial` tasks over groups of --fan-in partials, then one `profview combine`; the
output is what `profview summary` (or `findings`) prints over all the files, byte for byte
(viewer-cli/USAGE.md, "Many ranks"). Without --scheduler a LocalCluster is started on this
machine. Workers need profview (LIBPROF_PROFVIEW, PATH or --profview) and the trace files at the
same paths (a shared filesystem, as on clusters); the client only lists the files.

Failures: a task that raises is retried (--retries); a worker that dies is replaced and its
tasks rescheduled by Dask (up to distributed.scheduler.allowed-failures times). A file that still
fails is named on stderr and, in the table output, under the summary, which covers the other
files; the exit status is then 1. Other flags (--raw, --by, --pid, --tid, --nvtx, --from, --to;
for findings its thresholds and --framework-path) are passed to `profview summary` (findings).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from libprof.profview import ProfviewError, find_profview, run_profview

_PROG = "libprof.dask"


def expand_traces(patterns: Sequence[str]) -> List[str]:
    """The trace files the patterns name, sorted and without duplicates: a glob pattern, a file,
    or a directory (its *.pb files). The order is the one `profview combine` prints processes in
    (trace path), so the result equals `profview summary` over these files in this order."""
    files = set()
    for pattern in patterns:
        if os.path.isdir(pattern):
            matches = glob.glob(os.path.join(pattern, "*.pb"))
        elif glob.has_magic(pattern):
            matches = glob.glob(pattern)
        else:
            matches = [pattern]  # a missing file fails in its task, named
        files.update(m for m in matches if not os.path.isdir(m))
    return sorted(files)


def _groups(files: Sequence[str], per_task: int) -> List[List[str]]:
    return [list(files[i:i + per_task]) for i in range(0, len(files), per_task)]


def summarize_partial(files: Sequence[str], summary_args: Sequence[str],
                      profview: Optional[str], command: str = "summary") -> str:
    """The map step, on a worker: the partial summary (or findings: `command`), JSON text, of
    `files`."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the partial carries them; combine prints them
        return run_profview([command, "--partial", "-o", "-", *summary_args, *files], profview)


def _combine(partials: Sequence[str], args: Sequence[str], profview: Optional[str]):
    import warnings
    with tempfile.TemporaryDirectory(prefix="libprof-combine-") as tmp:
        paths = []
        for i, text in enumerate(partials):
            path = Path(tmp) / f"part{i:06d}.json"
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = run_profview(["combine", *args, *paths], profview)
    return out, [str(w.message) for w in caught]


def combine_to_partial(partials: Sequence[str], profview: Optional[str]) -> str:
    """An inner step of the reduce, on a worker: the partials combined into one partial."""
    return _combine(partials, ["--partial", "-o", "-"], profview)[0]


def combine_partials(partials: Sequence[str], output_format: str,
                     profview: Optional[str]) -> Tuple[str, List[str]]:
    """The last step of the reduce, on a worker: `profview combine` over the partials; returns its
    output and the traces' warnings."""
    return _combine(partials, ["--format", output_format], profview)


def _failure_reason(future) -> str:
    try:
        error = future.exception()
    except Exception as e:  # a cancelled future has no exception to fetch
        return f"{type(e).__name__}: {e}"
    if isinstance(error, ProfviewError):
        return str(error)
    name = type(error).__name__
    if name == "KilledWorker":
        return "the worker running it died on every try"
    return f"{name}: {error}"


def _wait_settled(futures) -> None:
    """Waits until every future has finished or failed. wait() alone is not enough: a result
    held by a worker that dies after its task finished is lost (status "lost", then "pending")
    and computed again, maybe after wait() passed that future (seen under load in
    test_a_worker_that_dies_once_is_replaced_and_the_task_retried, the lost file then reported
    missing with no exception)."""
    from distributed import wait

    while True:
        wait(futures)
        if all(f.status in ("finished", "error", "cancelled") for f in futures):
            return


def run_summary(files: Sequence[str], client, summary_args: Sequence[str] = (),
                output_format: str = "table", files_per_task: int = 1, retries: int = 2,
                profview: Optional[str] = None, fan_in: int = 16, command: str = "summary"):
    """Runs the summary (or, with command "findings", the findings) of `files` on the Dask
    `client`. Returns (output, warnings, missing), where missing lists (file, reason) for the
    files whose task failed on every try (the output then covers the others; None when every
    file failed). `fan_in`: partials per reduce task."""
    groups = _groups(list(files), max(1, files_per_task))
    futures = [client.submit(summarize_partial, g, list(summary_args), profview, command,
                             retries=retries, pure=False) for g in groups]
    _wait_settled(futures)
    partials, missing, retry_singly = [], [], []
    for group, future in zip(groups, futures):
        if future.status == "finished":
            partials.append(future)
        elif len(group) > 1:
            retry_singly.extend(group)  # find which of the group fails
        else:
            missing.append((group[0], _failure_reason(future)))
    if retry_singly:
        singles = [client.submit(summarize_partial, [f], list(summary_args), profview, command,
                                 retries=retries, pure=False) for f in retry_singly]
        _wait_settled(singles)
        for f, future in zip(retry_singly, singles):
            if future.status == "finished":
                partials.append(future)
            else:
                missing.append((f, _failure_reason(future)))
    missing.sort()
    if not partials:
        return None, [], missing
    # The partials move worker to worker; the client never holds them. A combination of
    # overlapping ranks is smaller than its inputs, so no task holds more than fan_in partials.
    fan_in = max(2, fan_in)
    while len(partials) > fan_in:
        partials = [client.submit(combine_to_partial, partials[i:i + fan_in], profview,
                                  retries=retries, pure=False)
                    for i in range(0, len(partials), fan_in)]
    result = client.submit(combine_partials, partials, output_format, profview, retries=retries,
                           pure=False)
    out, found_warnings = result.result()
    return out, found_warnings, missing


def _missing_note(missing: Sequence[Tuple[str, str]]) -> str:
    lines = [f"Missing: {len(missing)} trace file(s) could not be read and are not in the result:"]
    lines += [f"  {path}: {reason}" for path, reason in missing]
    return "\n".join(lines) + "\n"


def _parse(argv: Sequence[str]):
    parser = argparse.ArgumentParser(
        prog=f"python3 -m {_PROG}",
        description="profview summary or findings over many trace files on a Dask cluster "
                    "(map: summary/findings --partial per group of files on the workers; "
                    "reduce: combine). Other flags (--raw, --by, --pid, --tid, --nvtx, --from, "
                    "--to; findings' thresholds) go to profview summary or findings.")
    parser.add_argument("command", choices=["summary", "findings"])
    parser.add_argument("traces", nargs="+", help="trace files, directories or glob patterns "
                                                  "(quote them: the pattern is expanded here)")
    parser.add_argument("--scheduler", help="address of a Dask scheduler (tcp://host:8786); "
                                            "default: a LocalCluster on this machine")
    parser.add_argument("--workers", type=int, default=None,
                        help="LocalCluster only: worker processes (default: one per core)")
    parser.add_argument("--format", default="table", choices=["table", "csv", "json"])
    parser.add_argument("--files-per-task", type=int, default=1,
                        help="trace files per map task (default 1)")
    parser.add_argument("--fan-in", type=int, default=16,
                        help="partial summaries per reduce task (default 16): a tree of "
                             "combine --partial steps above that")
    parser.add_argument("--retries", type=int, default=2,
                        help="extra tries of a task that fails (default 2)")
    parser.add_argument("--profview", help="profview on the workers (default: LIBPROF_PROFVIEW, "
                                           "next to the package, or PATH, looked up there)")
    return parser.parse_known_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args, summary_args = _parse(sys.argv[1:] if argv is None else argv)
    files = expand_traces(args.traces)
    if not files:
        print(f"{_PROG}: no trace file matches {' '.join(args.traces)}", file=sys.stderr)
        return 1
    if args.profview is None:
        try:
            find_profview()  # fail early on the client when there is none at all
        except ProfviewError as e:
            print(f"{_PROG}: {e}", file=sys.stderr)
            return 1
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if args.scheduler:
            client = Client(args.scheduler)
        else:
            cluster = LocalCluster(n_workers=args.workers or os.cpu_count() or 1,
                                   threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        with client:
            try:
                out, found_warnings, missing = run_summary(
                    files, client, summary_args, args.format, args.files_per_task, args.retries,
                    args.profview, args.fan_in, args.command)
            except ProfviewError as e:  # the reduce step: options that cannot be combined
                print(f"{_PROG}: {e}", file=sys.stderr)
                return 1
    finally:
        if cluster is not None:
            cluster.close()
    for w in found_warnings:
        print(f"{_PROG}: warning: {w}", file=sys.stderr)
    if out is not None:
        sys.stdout.write(out)
        if missing and args.format == "table":
            sys.stdout.write("\n" + _missing_note(missing))
        sys.stdout.flush()
    if missing:
        print(f"{_PROG}: error: " + _missing_note(missing).rstrip("\n"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
