"""libprof.load / summary / findings against profview's own figures on the recorded sample traces:
the tables that load() returns must give exactly the counts and totals profview prints, so that a
notebook and profview never disagree. Also: several files, databases read as they are, and errors
surfacing as Python exceptions with profview's message."""

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import libprof

SAMPLES = sorted(Path(os.environ.get("LIBPROF_SAMPLE_TRACES", "samples/traces")).glob("*.pb"))
# The kinds profview counts as events (proto/record_kinds.h: roles kTimed and kDeviceOp).
TIMED_TABLES = ["api_calls", "kernels", "memcpys", "memsets", "synchronizations", "nvtx_events",
                "memory_ops", "cuda_events", "overheads", "graph_traces", "unified_memory_counters"]


def profview_json(*args):
    return json.loads(subprocess.run([libprof.find_profview(), *map(str, args)],
                                     capture_output=True, text=True, check=True).stdout)


def per_name(frame, key, duration=("start_ns", "end_ns")):
    """calls and total_ns per `key`, as profview's summary rows give them."""
    d = frame[duration[1]] - frame[duration[0]]
    out = frame.assign(d=d).groupby(key).agg(calls=("d", "size"), total_ns=("d", "sum"))
    return out.sort_index()


@pytest.fixture(scope="module", params=SAMPLES, ids=lambda p: p.name)
def sample(request):
    return request.param, libprof.load(request.param)


def test_the_samples_are_there():
    assert len(SAMPLES) >= 5, SAMPLES


def test_api_calls_agree_with_summary(sample):
    trace, tables = sample
    host = libprof.summary(trace, raw=True)["host"]  # raw: every call, nested ones included
    expected = host.set_index("name")[["calls", "total_ns"]].sort_index()
    pd.testing.assert_frame_equal(per_name(tables["api_calls"], "name"), expected,
                                  check_names=False, check_dtype=False)


def test_kernels_agree_with_summary(sample):
    trace, tables = sample
    device = libprof.summary(trace)["device"]
    kernels = device[device["kind"] == "kernel"]
    expected = kernels.set_index("name")[["calls", "total_ns"]].sort_index()
    pd.testing.assert_frame_equal(per_name(tables["kernels"], "name"), expected,
                                  check_names=False, check_dtype=False)
    assert tables["kernels"]["mangled_name"].notna().all()


def test_copies_agree_with_summary(sample):
    trace, tables = sample
    copies = libprof.summary(trace)["copies"]
    m = tables["memcpys"]
    keys = ["copy_kind", "src_kind", "dst_kind"]
    got = (m.assign(d=m.end_ns - m.start_ns).groupby(keys)
           .agg(count=("d", "size"), bytes=("bytes", "sum"), total_ns=("d", "sum")))
    expected = (copies.set_index(keys)[["count", "bytes", "total_ns"]] if len(copies)
                else got.iloc[0:0])
    pd.testing.assert_frame_equal(got.sort_index(), expected.sort_index(), check_dtype=False)


def test_event_and_drop_counts_agree_with_summary(sample):
    trace, tables = sample
    totals = libprof.summary(trace)["totals"].iloc[0]
    assert sum(len(tables[t]) for t in TIMED_TABLES) == totals["events"]
    assert tables["processes"]["records_dropped"].fillna(0).sum() == totals["dropped_records"]
    # The header: the process row carries profview's pid and recording length.
    process = libprof.summary(trace)["processes"].iloc[0]
    row = tables["processes"].iloc[0]
    assert row["pid"] == process["pid"]


def test_nvtx_ranges_and_the_usage_query_agree_with_summary():
    trace = next(p for p in SAMPLES if p.name == "nvtx_ranges.pb")
    tables = libprof.load(trace)
    summary = libprof.summary(trace)["nvtx"]
    assert len(summary) > 0
    n = tables["nvtx_events"]
    ranges = per_name(n[n["kind"] != "mark"], "message")
    pd.testing.assert_frame_equal(ranges, summary.set_index("name")[["calls", "total_ns"]]
                                  .sort_index(), check_names=False, check_dtype=False)
    # USAGE.md's "GPU time per NVTX range name" query gives profview's gpu_ns.
    usage = Path(os.environ["LIBPROF_SOURCE_DIR"]) / "viewer-cli" / "USAGE.md"
    query = next(q for q in re.findall(r"```sql\n(.*?)```", usage.read_text(), re.S)
                 if q.startswith("-- GPU time per NVTX range name"))
    database = libprof.export_sqlite(trace, Path(os.environ.get("TMPDIR", "/tmp")) /
                                     f"nvtx-{os.getpid()}.sqlite", force=True)
    try:
        with sqlite3.connect(database) as db:
            got = {row[0]: row[4] for row in db.execute(query)}
    finally:
        os.remove(database)
    expected = {r["name"]: r["gpu_ns"] for _, r in summary.iterrows() if r["gpu_ns"] > 0}
    assert got == expected


def test_findings_are_profviews(sample):
    trace, _ = sample
    frame = libprof.findings(trace)
    data = profview_json("findings", "--format", "json", trace)
    assert len(frame) == len(data["findings"])
    if len(frame):
        assert list(frame["rule"]) == [f["rule"] for f in data["findings"]]
    assert frame.attrs["thresholds"] == data["thresholds"]


def test_summary_options_become_flags():
    trace = next(p for p in SAMPLES if p.name == "normalize_nrm2.pb")
    window = libprof.summary(trace, from_="100ms", to="200ms")["totals"].iloc[0]
    direct = profview_json("summary", "--format", "json", "--from", "100ms", "--to", "200ms",
                           trace)
    assert window["events"] == direct["events"]
    assert window["events"] < libprof.summary(trace)["totals"].iloc[0]["events"]


def test_several_files_are_several_processes():
    a, b = SAMPLES[0], SAMPLES[1]
    tables = libprof.load([a, b])
    assert list(tables["processes"]["file"]) == [str(a), str(b)]
    one_a, one_b = libprof.load(a), libprof.load(b)
    counts = tables["api_calls"].groupby("process_id").size()
    assert list(counts) == [len(one_a["api_calls"]), len(one_b["api_calls"])]


def test_a_database_is_read_as_it_is(tmp_path):
    trace = SAMPLES[0]
    database = libprof.export_sqlite(trace, tmp_path / "run.sqlite")
    tables = libprof.load(database, tables=["kernels", "processes"])
    assert set(tables) == {"kernels", "processes"}
    assert len(tables["kernels"]) == len(libprof.load(trace)["kernels"])
    names = libprof.table_names(database)
    assert "kernels" in names and "kernels_ids" not in names
    with pytest.raises(KeyError, match="no table nope"):
        libprof.load(database, tables=["nope"])


def test_existing_database_needs_force(tmp_path):
    out = tmp_path / "run.sqlite"
    out.write_text("keep me")
    with pytest.raises(libprof.ProfviewError, match="exists already") as raised:
        libprof.export_sqlite(SAMPLES[0], out)
    assert raised.value.exit_code == 1
    assert out.read_text() == "keep me"
    libprof.export_sqlite(SAMPLES[0], out, force=True)
    assert "processes" in libprof.table_names(out)


def test_bad_trace_raises_profviews_error_and_leaves_nothing(tmp_path):
    data = SAMPLES[0].read_bytes()
    corrupt = tmp_path / "corrupt.pb"
    corrupt.write_bytes(data[:200] + b"\xff" * 64 + data[264:])
    cut = tmp_path / "cut.pb"
    cut.write_bytes(data[: len(data) - 50])
    for bad, message in ((corrupt, "corrupt"), (cut, "ends inside a chunk")):
        with pytest.raises(libprof.ProfviewError, match=message) as raised:
            libprof.load(bad)
        assert raised.value.exit_code == 1
        assert str(bad) in str(raised.value)
        with pytest.raises(libprof.ProfviewError):
            libprof.export_sqlite(bad, tmp_path / "bad.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.pb", "cut.pb"]
