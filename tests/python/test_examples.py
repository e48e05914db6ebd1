"""The notebook-style examples under samples/notebooks run and answer their question from the
recorded traces: their figures agree with profview's own."""

import os
import runpy
import sys
from pathlib import Path

import libprof

SOURCE = Path(os.environ.get("LIBPROF_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def test_where_is_cudaMemcpyAsync(capsys, monkeypatch):
    trace = SOURCE / "samples" / "traces" / "normalize_nrm2.pb"
    example = SOURCE / "samples" / "notebooks" / "where_is_cudaMemcpyAsync.py"
    monkeypatch.setattr(sys, "argv", [str(example), str(trace)])
    result = runpy.run_path(str(example), run_name="__main__")
    printed = capsys.readouterr().out
    summary = result["summary"]
    host = libprof.summary(trace)["host"].set_index("name").loc["cudaMemcpyAsync"]
    assert summary["calls"].sum() == host["calls"]
    assert round(summary["host_us"].sum() * 1e3) == host["total_ns"]
    # The call site is the one findings names ("cudaMemcpyAsync <- cublasSnrm2_v2 ...").
    sites = {f.get("call_site", "") for f in libprof.findings(trace).to_dict("records")
             if f.get("api") == "cudaMemcpyAsync"}
    assert any("cublasSnrm2_v2" in s for s in sites)
    assert all(site.startswith("cublasSnrm2_v2 <- ") for site, _, _ in summary.index)
    assert "was spent waiting for earlier work on its stream" in printed
