"""libprof traces as pandas DataFrames.

load() goes through profview's SQLite export (`profview export --format sqlite`): the tables are
the ones viewer-cli/USAGE.md documents for SQL, so a notebook and a SQL query see the same columns
and names, profview stays the only reader of the trace format, and the export streams a trace of
any size through bounded memory before pandas reads what it is asked for. summary() and
findings() are profview's own JSON outputs, so their figures are exactly profview's.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Union

from libprof.profview import PathLike, run_profview

Paths = Union[PathLike, Sequence[PathLike]]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _as_list(paths: Paths) -> List[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _is_database(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def export_sqlite(traces: Paths, output: PathLike, *, force: bool = False,
                  profview: Optional[PathLike] = None) -> str:
    """Runs `profview export --format sqlite -o OUTPUT TRACES...` and returns OUTPUT. An existing
    OUTPUT is kept (ProfviewError) unless force=True."""
    args = ["export", "--format", "sqlite", "-o", os.fspath(output)]
    if force:
        args.append("--force")
    run_profview(args + _as_list(traces), profview)
    return os.fspath(output)


def table_names(database: PathLike) -> List[str]:
    """The tables and views of an exported database that load() returns: each record kind's
    (a view where names are resolved, never its `_ids` storage table), then the others."""
    with sqlite3.connect(f"file:{os.fspath(database)}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                          "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    names = {name for name, _ in rows}
    return [name for name, _ in rows
            if not (name.endswith("_ids") and name[: -len("_ids")] in names)]


def _read_tables(database: str, tables: Optional[Iterable[str]]):
    import pandas as pd  # imported here so that the profview runner works without pandas

    available = table_names(database)
    wanted = list(tables) if tables is not None else available
    unknown = [t for t in wanted if t not in available]
    if unknown:
        raise KeyError(f"no table {', '.join(unknown)} in {database} "
                       f"(tables: {', '.join(available)})")
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        # Names are quoted as SQL identifiers; they come from sqlite_master anyway.
        return {t: pd.read_sql_query(f'SELECT * FROM "{t}"', db) for t in wanted}


def load(traces: Paths, tables: Optional[Iterable[str]] = None, *,
         profview: Optional[PathLike] = None) -> Dict[str, "pandas.DataFrame"]:
    """The tables of `traces` as DataFrames, by name (api_calls, kernels, memcpys, processes,
    ...: viewer-cli/USAGE.md documents every column). `traces` is a trace file, a directory of
    them, a list of either, or a database written by `profview export --format sqlite` (read as
    is). `tables` picks some tables (all by default; a large trace's tables can be large).
    Errors: ProfviewError with profview's message for a bad trace; KeyError for an unknown table.
    """
    paths = _as_list(traces)
    if len(paths) == 1 and _is_database(paths[0]):
        return _read_tables(paths[0], tables)
    with tempfile.TemporaryDirectory(prefix="libprof-") as scratch:
        database = os.path.join(scratch, "traces.sqlite")
        export_sqlite(paths, database, profview=profview)
        return _read_tables(database, tables)


def _flags(options: dict) -> List[str]:
    """Keyword arguments as profview flags: nvtx="step" -> --nvtx step, raw=True -> --raw,
    from_="1s" -> --from 1s, tid=[1, 2] -> --tid 1,2; None and False are left out."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.rstrip("_").replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def _profview_json(command: str, traces: Paths, profview: Optional[PathLike], options: dict):
    out = run_profview([command, "--format", "json"] + _flags(options) + _as_list(traces),
                       profview)
    return json.loads(out)


def summary(traces: Paths, *, profview: Optional[PathLike] = None,
            **options) -> Dict[str, "pandas.DataFrame"]:
    """`profview summary --format json` as DataFrames: "host" (API calls per name), "device"
    (kernels, copies, memsets per name), "copies" (per direction and memory kinds), "nvtx" (per
    range name) for all the traces together; "processes" (one row per process: its figures,
    without its tables); "totals" (one row: trace_ns, events, host_api_ns, gpu_busy_ns, ...).
    Options are profview's flags: raw=True, nvtx="step", from_="1s", to="2s", pid=[...],
    tid=[...], by="caller"."""
    import pandas as pd

    data = _profview_json("summary", traces, profview, options)
    tables = ("host", "device", "copies", "nvtx")
    out = {t: pd.DataFrame(data.get(t, [])) for t in tables}
    out["processes"] = pd.DataFrame(
        [{k: v for k, v in p.items() if k not in tables} for p in data.get("processes", [])])
    out["totals"] = pd.DataFrame(
        [{k: v for k, v in data.items() if not isinstance(v, (list, dict))}])
    return out


def findings(traces: Paths, *, profview: Optional[PathLike] = None,
             **options) -> "pandas.DataFrame":
    """`profview findings --format json` as a DataFrame, one row per finding (grouped as profview
    groups them; all=True for one per call). Nested fields (blamed, stack, nvtx) stay lists of
    dicts. The thresholds used are in `.attrs["thresholds"]`. Options are profview's flags:
    min_wait="50us", all=True, nvtx=..., ..."""
    import pandas as pd

    data = _profview_json("findings", traces, profview, options)
    frame = pd.DataFrame(data.get("findings", []))
    frame.attrs["thresholds"] = data.get("thresholds", {})
    return frame
