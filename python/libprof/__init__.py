"""libprof traces as tables, for notebooks: pandas DataFrames through profview.

    import libprof
    t = libprof.load("run.pb")              # {"kernels": DataFrame, "api_calls": ..., ...}
    s = libprof.summary("run.pb")           # profview summary: {"host": ..., "device": ..., ...}
    f = libprof.findings("run.pb")          # profview findings, one row per finding
    libprof.run_profview(["streams", "--format", "json", "run.pb"])  # any command: its stdout

profview is found through $LIBPROF_PROFVIEW, next to this package, or on PATH (find_profview).
"""

from libprof.profview import (
    PROFVIEW_ENV,
    ProfviewError,
    ProfviewNotFoundError,
    ProfviewWarning,
    find_profview,
    run_profview,
)
from libprof.tables import export_sqlite, findings, load, summary, table_names

__all__ = [
    "PROFVIEW_ENV",
    "ProfviewError",
    "ProfviewNotFoundError",
    "ProfviewWarning",
    "find_profview",
    "run_profview",
    "export_sqlite",
    "findings",
    "load",
    "summary",
    "table_names",
]
