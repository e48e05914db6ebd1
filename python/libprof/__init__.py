"""libprof traces as tables, for notebooks: pandas DataFrames through profview.

    import libprof
    libprof.run_profview(["summary", "--format", "json", "run.pb"])  # profview's stdout

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

__all__ = [
    "PROFVIEW_ENV",
    "ProfviewError",
    "ProfviewNotFoundError",
    "ProfviewWarning",
    "find_profview",
    "run_profview",
]
