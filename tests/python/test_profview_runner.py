"""Finding profview and running it: where it is looked for, and that its failures reach Python
as exceptions carrying its own message and exit code."""

import os
import subprocess

import pytest

import libprof
from libprof import profview as runner


def test_env_variable_names_the_profview_used(profview_path, monkeypatch):
    monkeypatch.setenv("LIBPROF_PROFVIEW", profview_path)
    assert libprof.find_profview() == profview_path


def test_env_variable_naming_nothing_is_an_error_not_a_fallback(tmp_path, monkeypatch,
                                                                  profview_path):
    # A profview on PATH must not be used silently when the variable says another one.
    (tmp_path / "bin").mkdir()
    os.symlink(profview_path, tmp_path / "bin" / "profview")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("LIBPROF_PROFVIEW", str(tmp_path / "missing" / "profview"))
    with pytest.raises(libprof.ProfviewNotFoundError, match="LIBPROF_PROFVIEW=.*missing"):
        libprof.find_profview()


def test_found_on_path(tmp_path, monkeypatch, profview_path):
    (tmp_path / "bin").mkdir()
    os.symlink(profview_path, tmp_path / "bin" / "profview")
    monkeypatch.delenv("LIBPROF_PROFVIEW")
    monkeypatch.setattr(runner, "_candidates_next_to_package", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert libprof.find_profview() == str(tmp_path / "bin" / "profview")


def test_found_next_to_the_package_before_path(tmp_path, monkeypatch, profview_path):
    # The package's own directory: a copy of the package with profview beside it.
    beside = tmp_path / "pkg" / "profview"
    beside.parent.mkdir()
    os.symlink(profview_path, beside)
    monkeypatch.delenv("LIBPROF_PROFVIEW")
    monkeypatch.setattr(runner, "__file__", str(tmp_path / "pkg" / "profview.py"))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert libprof.find_profview() == str(beside)


def test_missing_profview_raises_not_found(tmp_path, monkeypatch):
    monkeypatch.delenv("LIBPROF_PROFVIEW")
    monkeypatch.setattr(runner, "_candidates_next_to_package", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(libprof.ProfviewNotFoundError, match="profview not found"):
        libprof.run_profview(["summary", "x.pb"])
    # Also an ordinary FileNotFoundError, for code that catches those.
    with pytest.raises(FileNotFoundError):
        libprof.find_profview()


def test_stdout_is_returned(sample_traces):
    out = libprof.run_profview(["summary", "--format", "csv", sample_traces / "alloc_loop.pb"])
    assert out.startswith("section,")  # profview's CSV header
    direct = subprocess.run([libprof.find_profview(), "summary", "--format", "csv",
                             str(sample_traces / "alloc_loop.pb")], capture_output=True,
                            text=True, check=True).stdout
    assert out == direct


def test_bad_trace_raises_profviews_message_and_exit_code(tmp_path):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"not a trace at all")
    with pytest.raises(libprof.ProfviewError) as raised:
        libprof.run_profview(["summary", bad])
    direct = subprocess.run([libprof.find_profview(), "summary", str(bad)], capture_output=True,
                            text=True)
    assert raised.value.exit_code == direct.returncode == 1
    assert "profview: " + str(raised.value) == direct.stderr.strip()
    assert str(bad) in str(raised.value)


def test_bad_usage_carries_exit_code_2(sample_traces):
    with pytest.raises(libprof.ProfviewError) as raised:
        libprof.run_profview(["summary", "--no-such-flag", sample_traces / "alloc_loop.pb"])
    assert raised.value.exit_code == 2
    assert "--no-such-flag" in str(raised.value)


def test_profview_warnings_become_python_warnings(tmp_path, sample_traces):
    cut = tmp_path / "cut.pb"
    data = (sample_traces / "normalize_nrm2.pb").read_bytes()
    cut.write_bytes(data[: len(data) * 3 // 4])
    with pytest.warns(libprof.ProfviewWarning, match="ends inside a chunk"):
        libprof.run_profview(["summary", "--format", "json", cut])
