"""Shared fixtures of the Python package's tests: the profview under test (LIBPROF_PROFVIEW, set by
run_pytest.sh to the one just built) and the recorded sample traces."""

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def profview_path():
    path = os.environ.get("LIBPROF_PROFVIEW")
    if not path:
        pytest.fail("LIBPROF_PROFVIEW is not set: run these tests through CTest (run_pytest.sh)")
    return path


@pytest.fixture(scope="session")
def sample_traces():
    return Path(os.environ.get("LIBPROF_SAMPLE_TRACES",
                               Path(__file__).resolve().parents[2] / "samples" / "traces"))
