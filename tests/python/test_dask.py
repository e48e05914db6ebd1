"""libprof.dask on a LocalCluster of 2 workers over synthetic traces: its result is what
`profview summary` (or `findings`) prints over the same files (tables and JSON, one or several
files per task, one reduce step or a tree of them);
a worker killed while running a task is replaced and the task retried; a trace that fails on
every try (unreadable, or killing its worker each time) is named as missing while the rest of
the summary is still printed."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

dask_config = pytest.importorskip("dask.config", reason="needs python3-dask")
distributed = pytest.importorskip("distributed", reason="needs python3-distributed")

import libprof
from libprof import dask as libprof_dask


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Five synthetic ranks (make_synthetic_trace, path in LIBPROF_SYNTHETIC_TRACE)."""
    generator = os.environ.get("LIBPROF_SYNTHETIC_TRACE")
    if not generator:
        pytest.fail("LIBPROF_SYNTHETIC_TRACE is not set: run these tests through CTest")
    directory = tmp_path_factory.mktemp("ranks")
    files = []
    for rank in range(5):
        path = directory / f"rank{rank}.pb"
        subprocess.run([generator, "--records", "3000", "--seed", str(rank + 1), "--pid",
                        str(30000 + rank), "--rank", str(rank), "-o", str(path)],
                       check=True, stdout=subprocess.DEVNULL)
        files.append(str(path))
    return files


@pytest.fixture(scope="module")
def client():
    # One death is enough to call a task's failure final in the test of a trace that always
    # kills its worker (the default, 3, only makes that test slower).
    with dask_config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        with distributed.Client(cluster) as c:
            yield c
        cluster.close()


@pytest.mark.parametrize("output_format,per_task,fan_in",
                         [("table", 1, 16), ("json", 2, 16), ("csv", 3, 16), ("table", 1, 2)])
def test_result_equals_profview_summary(traces, client, output_format, per_task, fan_in):
    # fan_in 2 over 5 partials: a tree of combine --partial steps before the last combine.
    out, warnings, missing = libprof_dask.run_summary(traces, client, (), output_format, per_task,
                                                      fan_in=fan_in)
    assert missing == []
    expected = libprof.run_profview(["summary", "--format", output_format, *traces])
    assert out == expected
    if output_format == "table":
        assert "Per process, slowest first" in out


@pytest.mark.parametrize("output_format,per_task,fan_in", [("table", 2, 16), ("json", 1, 2)])
def test_findings_result_equals_profview_findings(traces, client, output_format, per_task,
                                                  fan_in):
    out, warnings, missing = libprof_dask.run_summary(
        traces, client, ("--min-wait", "10us"), output_format, per_task, fan_in=fan_in,
        command="findings")
    assert missing == []
    expected = libprof.run_profview(
        ["findings", "--min-wait", "10us", "--format", output_format, *sorted(traces)])
    assert out == expected
    assert "blocked-on-prior-work" in out or "sync-api" in out  # the synthetic loop waits


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_summary_with_findings_equals_profview_summary_findings(traces, client, output_format):
    # Each rank's host time lost and top finding travel in its partial to the per-process table.
    out, _, missing = libprof_dask.run_summary(traces, client, ["--findings"], output_format, 2,
                                               fan_in=2)
    assert missing == []
    assert out == libprof.run_profview(["summary", "--findings", "--format", output_format,
                                        *traces])
    assert "Host time lost" in out or '"host_lost_ns"' in out


def test_filters_go_to_every_partial(traces, client):
    out, _, missing = libprof_dask.run_summary(traces, client, ["--from", "1ms", "--raw"])
    assert missing == []
    assert out == libprof.run_profview(["summary", "--from", "1ms", "--raw", *traces])


def _fake_profview(tmp_path, real, body):
    """A profview that runs `body` (sh) first, then the real one: a worker dies when the body
    kills its parent, the worker process that ran it."""
    script = tmp_path / "profview"
    script.write_text(f"#!/bin/sh\n{body}\nexec '{real}' \"$@\"\n")
    script.chmod(0o755)
    return str(script)


def test_a_worker_that_dies_once_is_replaced_and_the_task_retried(traces, client, tmp_path,
                                                                   profview_path):
    marker = tmp_path / "died"
    profview = _fake_profview(tmp_path, profview_path, f"""
case "$*" in *rank2.pb*)
  if [ ! -e '{marker}' ]; then touch '{marker}'; kill -9 $PPID; sleep 30; fi ;;
esac""")
    out, _, missing = libprof_dask.run_summary(traces, client, (), "table", 1, 2, profview)
    assert marker.exists()  # a worker did die
    assert missing == []
    assert out == libprof.run_profview(["summary", *traces])


def test_a_trace_that_kills_its_worker_every_time_is_missing(traces, client, tmp_path,
                                                             profview_path):
    profview = _fake_profview(tmp_path, profview_path, """
case "$*" in *rank4.pb*) kill -9 $PPID; sleep 30 ;; esac""")
    out, _, missing = libprof_dask.run_summary(traces, client, (), "table", 2, 1, profview)
    assert [path for path, _ in missing] == [traces[4]]
    assert "died" in missing[0][1]
    assert out == libprof.run_profview(["summary", *traces[:4]])


def test_cli_names_an_unreadable_trace_and_prints_the_rest(traces, tmp_path):
    bad = tmp_path / "rank9.pb"
    bad.write_bytes(b"not a trace at all")
    for t in traces[:2]:
        os.symlink(t, tmp_path / Path(t).name)
    done = subprocess.run([sys.executable, "-m", "libprof.dask", "summary",
                           str(tmp_path / "*.pb"), "--workers", "2", "--retries", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    good = sorted(str(tmp_path / Path(t).name) for t in traces[:2])
    expected = libprof.run_profview(["summary", *good])
    assert done.stdout.startswith(expected)
    assert f"Missing: 1 trace file(s)" in done.stdout
    assert str(bad) in done.stdout and str(bad) in done.stderr
    assert "not a libprof trace" in done.stderr or "rank9.pb:" in done.stderr


def test_cli_result_equals_summary_on_a_local_cluster(traces):
    done = subprocess.run([sys.executable, "-m", "libprof.dask", "summary", *traces,
                           "--workers", "2", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == libprof.run_profview(["summary", "--format", "json", *traces])
