"""The tables of a run, and reading what runs and sweeps wrote.

Run is the one type for a run's tables, whether it is in memory (what
harness.engine.simulation.execute returns, what harness.run returns without `out`)
or read from a run directory (load_run, read_run): the figures
(harness.outputs.plots), the metrics and verdicts (harness.analysis.stats, harness.analysis.claims,
harness.sweeps.aggregate) and the report read a run through it the same way. Also
here: a sweep directory's tables, the names their columns share with the
grid files, and the CSV text ns-3's C++ trackers return (read_csv). No run
logic and no ns-3 (harness.io.outdir places what is written). pandas loads on
the first read, so importing this stays cheap.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from harness.config.errors import CorruptTableError, shorten, shorten_text

if TYPE_CHECKING:
    import pandas as pd

#: The axis of repeated seeds: a grid field and a column of the sweep's tables.
SEED_AXIS = "seed"
#: An explicit point's name: a grid point's key and a column of the sweep's tables.
POINT_LABEL = "label"
SWEEP_REQUIRED = ("sweep.json", "summary.parquet")


def rows_at(frame: "pd.DataFrame", keys: list[str], key: tuple) -> "pd.DataFrame":
    """frame's rows at one point: each key's value (a missing value, NaN or
    None, matches a missing value: a labelled point leaves fields unset)."""
    import pandas as pd
    for k, v in zip(keys, key):
        frame = frame[frame[k].isna() if pd.isna(v) else frame[k] == v]
    return frame


def require_files(directory: Path, names: Iterable[str], kind: str) -> None:
    """FileNotFoundError naming what makes `directory` not a `kind` directory."""
    missing = [name for name in names if not (Path(directory) / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{directory} is not a {kind} directory: missing {', '.join(missing)}")


#: The columns every table of a name has (its file's stem: a run's tables, a
#: sweep's and a finding's), whoever wrote it and since when: what the
#: readers index by. A table without them is another table under this name.
TABLE_COLUMNS = {
    "flows": ("id", "size", "size_class", "start_s", "fct_s", "completed", "measured"),
    "iterations": ("worker", "iteration", "start_ns", "end_ns", "iteration_s", "measured"),
    "queues": ("from_node", "to_node", "band"),
    "utilization": ("from_node", "to_node", "t_s", "utilization"),
    "transfers": ("worker", "iteration", "bytes", "start_ns", "end_ns"),
    "compute": ("worker", "iteration", "layer", "phase", "start_ns", "end_ns"),
    "scheduler": ("iteration", "state"),
    "services": ("service_name", "kind", "latency_s", "measured"),
    "streams": ("service_name", "delay_s", "measured"),
    "pfc": ("from_node", "to_node", "band", "paused_s"),
    "rdma": ("host", "peer_host", "bytes_sent", "bytes_received"),
    "summary": ("cell", "status"),           # a sweep's: one row per cell
    "deltas": ("arm", "metric", "change"),
    "deltas_mean": ("arm", "metric", "change"),
    "claims": ("label", "arm", "baseline", "change", "low", "high"),
}
_RERUN = ("rerun what wrote it (a sweep: `harness sweep GRID -o DIR --resume` rewrites its "
          "tables and reruns a cell whose table is corrupt)")


def read_table(path: Path, columns: Iterable[str] | None = None) -> "pd.DataFrame":
    """A Parquet table of a run or sweep, holding `columns` (default: those
    TABLE_COLUMNS gives its name). One that cannot be read, or that lacks
    them (another table under this name), is a CorruptTableError naming the
    file and what is missing (not pyarrow's traceback, nor a KeyError later)."""
    import pandas as pd

    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        reason = " ".join(str(e).replace(str(path), "").split())[:120]
        raise CorruptTableError(str(path), f"cannot be read ({reason}): truncated or not "
                                f"Parquet; {_RERUN}") from None
    need = tuple(columns) if columns is not None else TABLE_COLUMNS.get(Path(path).stem, ())
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise CorruptTableError(str(path), f"is not the {Path(path).stem} table the harness "
                                f"writes: it lacks the column(s) {', '.join(map(repr, missing))} "
                                f"(has {shorten_text(', '.join(map(str, table.columns)), 100)}); "
                                f"{_RERUN}")
    return table


#: a JSON value's kind as a message names it
_JSON_KINDS = {dict: "an object", list: "a list", str: "a string", int: "an integer",
               float: "a number", bool: "true or false", type(None): "null"}


def _kind(value: object) -> str:
    return _JSON_KINDS.get(type(value), type(value).__name__)


def _corrupt(path: Path, why: str, what: str):
    from harness.config.errors import CorruptRecordError

    return CorruptRecordError(str(path), f"{why}; it is {what}: restore it, or run what wrote "
                              "it again into a new directory")


def read_record(path: Path, fields: dict[str, type | tuple[type, ...]] | None = None,
                what: str = "a record the harness writes") -> dict:
    """One of the harness's own JSON records (sweep.json, reference.json): a
    JSON object holding `fields` (name -> the Python type(s) its value has).
    The one reader of them, so that a damaged record (cut short, edited, not
    JSON, a list) is one CorruptRecordError naming the file and what is
    wrong in every command and in the API, never json's traceback."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise _corrupt(path, "is missing", what) from None
    except OSError as e:
        raise _corrupt(path, f"cannot be read ({e.strerror or e})", what) from None
    except UnicodeDecodeError:
        raise _corrupt(path, "is not UTF-8 text", what) from None
    except json.JSONDecodeError as e:
        raise _corrupt(path, f"is not JSON ({e.msg} at line {e.lineno}, column {e.colno})",
                       what) from None
    except (ValueError, RecursionError):   # a number too long, nesting too deep
        raise _corrupt(path, "is not JSON the harness wrote", what) from None
    if not isinstance(data, dict):
        raise _corrupt(path, f"holds {_kind(data)}, not a JSON object", what)
    for name, kinds in (fields or {}).items():
        if name not in data:
            raise _corrupt(path, f"has no {name!r} field", what)
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        value = data[name]   # (True is an int to isinstance, not to a record)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise _corrupt(path, f"its {name!r} is {_kind(value)}, not what the harness "
                           "writes", what)
    return data


#: sweep.json's fields (harness.sweeps.sweepdir writes it), and each cell's
SWEEP_RECORD_FIELDS = {"grid": str, "cells": list}
SWEEP_CELL_FIELDS = {"id": (str,), "arm": (str, type(None)), "point": (dict,)}
_SWEEP_NAMES = ("axes", "arms")   # lists of names, where present
_SWEEP_WHAT = "the sweep's record of its cells"


def read_sweep_record(directory: Path) -> dict:
    """A sweep directory's sweep.json (read_record), each of its cells checked
    too: every reader of a sweep (tables, figures, report, frontier, claims,
    --map, --resume, harness cache) reads it here."""
    path = Path(directory) / "sweep.json"
    record = read_record(path, SWEEP_RECORD_FIELDS, _SWEEP_WHAT)
    for name in _SWEEP_NAMES:
        value = record.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _corrupt(path, f"its {name!r} is not a list of names", _SWEEP_WHAT)
    if not isinstance(record.get("reference"), (str, type(None))):
        raise _corrupt(path, "its 'reference' is not an arm's name", _SWEEP_WHAT)
    for i, cell in enumerate(record["cells"]):
        if not isinstance(cell, dict):
            raise _corrupt(path, f"its cells[{i}] is {_kind(cell)}, not an object", _SWEEP_WHAT)
        for key, kinds in SWEEP_CELL_FIELDS.items():
            if key not in cell or not isinstance(cell[key], kinds):
                raise _corrupt(path, f"its cells[{i}] has no {key!r} "
                               f"({' or '.join(_JSON_KINDS[k] for k in kinds)})", _SWEEP_WHAT)
    return record


def optional_table(directory: Path, name: str) -> "pd.DataFrame | None":
    """`name`.parquet of `directory`, or None when the run/sweep has none."""
    path = Path(directory) / f"{name}.parquet"
    return read_table(path) if path.is_file() else None


def read_csv(text) -> "pd.DataFrame":
    """A table ns-3's C++ side returns as CSV text (the flow log, queue and
    utilisation trackers, a training job's tables) as a DataFrame, empty
    strings kept as such."""
    import io

    import pandas as pd

    return pd.read_csv(io.StringIO(str(text)), keep_default_na=False, na_values=[])


RUN_TABLES = ("flows", "queues", "utilization", "iterations", "transfers", "compute",
              "scheduler", "services", "streams", "queue_samples", "pfc", "rdma")
RUN_RECORDS = ("summary", "manifest", "config")
#: what makes a directory a run directory (load_run)
RUN_FILES = ("config.json", "summary.json", "manifest.json")


@dataclass
class Run:
    """One run's results, in memory or read from its directory. Tables are
    DataFrames (docs/user-guide/runs.md); the training tables are None for a
    run without a job, and a table not read (read_run's `tables`) is None."""
    summary: dict = field(default_factory=dict)    # summary.json: FCT per class, iterations, ...
    manifest: dict = field(default_factory=dict)   # manifest.json: versions, seed, digest, timings
    config: dict = field(default_factory=dict)     # config.json: the resolved scenario and what followed
    flows: "pd.DataFrame | None" = None
    queues: "pd.DataFrame | None" = None
    utilization: "pd.DataFrame | None" = None
    iterations: "pd.DataFrame | None" = None
    transfers: "pd.DataFrame | None" = None
    compute: "pd.DataFrame | None" = None
    scheduler: "pd.DataFrame | None" = None
    # [[service]]: one row per request (services) and per stream packet (streams); None without
    services: "pd.DataFrame | None" = None
    streams: "pd.DataFrame | None" = None
    # run.queue_samples: one row per sample and band of each sampled egress; None without
    queue_samples: "pd.DataFrame | None" = None
    # network.pfc: one row per link end and band (harness.analysis.lossless); None without
    pfc: "pd.DataFrame | None" = None
    # RDMA jobs: one row per queue pair end (harness.analysis.lossless); None without
    rdma: "pd.DataFrame | None" = None
    # where it was written or read; None: a harness.run(...) without `out`,
    # in memory only (save() writes it)
    dir: Path | None = None
    # the harness.engine.planning.Plan it ran from (a run just run; None when read)
    plan: Any = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        s = self.summary or {}
        tables = [name for name in RUN_TABLES if getattr(self, name) is not None]
        where = (f"dir {str(self.dir)!r}" if self.dir is not None
                 else "in memory only: dir is None, .save(DIR) writes it")
        return (f"<Run {shorten(s.get('scenario'))} seed {s.get('seed')} digest {s.get('digest')}: "
                f"{', '.join(tables)}; {where}>")

    def save(self, out: str | Path) -> Path:
        """Write this run's directory (as `harness run` does) to `out`: new,
        empty, or an earlier run directory (replaced whole; anything else is
        refused with a ConfigError naming `out`). Sets and returns `dir`."""
        from harness.io import outdir

        # its size, roughly, for the free-space check: the tables as held in
        # memory (Parquet takes less) and the JSON files
        size = 64 * 1024 + sum(int(getattr(self, name).memory_usage(index=False).sum())
                               for name in RUN_TABLES if getattr(self, name) is not None)
        target = outdir.check_run_dir(_directory_arg(out, "out", "Run.save"), "out", size)
        self.dir = outdir.write_dir(target, self.write_files)
        return self.dir

    def write_files(self, directory: Path, extra_json: dict | None = None) -> None:
        """Write the run's tables and JSON records into `directory` (as they
        are, no checks: save() and harness.engine.simulation.write_run_dir place
        the directory). extra_json: more files ({name: data}) alongside."""
        for name in RUN_TABLES:
            table = getattr(self, name)
            if table is not None:
                table.to_parquet(directory / f"{name}.parquet", index=False)
        for name in ("config", "summary", "manifest"):
            write_json(directory / f"{name}.json", getattr(self, name))
        for name, data in (extra_json or {}).items():
            write_json(directory / name, data)


def write_json(path: Path, data) -> None:
    """A run's JSON record as every run directory has it."""
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


@dataclass
class Sweep:
    """One sweep directory's tables (docs/user-guide/sweeps.md); deltas are None for
    a grid without arms."""
    dir: Path
    grid: dict                         # sweep.json: axes, arms, reference, cells
    summary: "pd.DataFrame"            # one row per cell
    deltas: "pd.DataFrame | None"
    deltas_mean: "pd.DataFrame | None"

    def cell(self, cell: str) -> Run:
        """A cell's run (its id or a unique prefix of it)."""
        ids = [c for c in self.summary["cell"] if str(c).startswith(cell)]
        if len(ids) != 1:
            raise KeyError(f"{cell!r} matches {len(ids)} cells of {self.dir}")
        return load_run(self.dir / "cells" / ids[0])


@dataclass
class Sweeps:
    """Several sweeps as one table each, with a `sweep` column naming the
    sweep directory of every row."""
    summary: "pd.DataFrame"
    deltas: "pd.DataFrame"
    deltas_mean: "pd.DataFrame"


# --------------------------------------------------------------------------
# reading


def _directory_arg(path, name: str, function: str, kind: str | None = None) -> Path:
    """The argument `name` of `function` as a Path; with `kind`, an existing
    directory. TypeError / FileNotFoundError / NotADirectoryError naming the
    argument otherwise."""
    import os

    if not isinstance(path, (str, os.PathLike)) or not str(path):
        hint = (" (a Run from harness.run() without out= is in memory only, its dir is "
                "None: use it as it is, or write it with r.save(DIR) first)"
                if path is None and kind == "run" else "")
        raise TypeError(f"{function}: {name}: expected a{' ' + kind if kind else ''} "
                        f"directory path (a str or Path), got {path!r}{hint}")
    d = Path(path)
    if kind is not None and not d.is_dir():
        if d.exists():
            raise NotADirectoryError(f"{function}: {name}: {d} is a file, not a {kind} "
                                     "directory")
        raise FileNotFoundError(f"{function}: {name}: {d} does not exist (expected a "
                                f"{kind} directory)")
    return d


def load_run(path: str | Path) -> Run:
    """A run directory (written by `harness run`, `harness.run(out=...)`,
    Run.save or a sweep's cells/<id>/) as a Run. A path that is not one is a
    TypeError / FileNotFoundError naming `path`."""
    d = _directory_arg(path, "path", "load_run", "run")
    try:
        return read_run(d)
    except FileNotFoundError as e:
        raise FileNotFoundError(f"load_run: path: {e}") from None


def read_run(directory: str | Path, tables: Iterable[str] = RUN_TABLES,
             required: Iterable[str] = RUN_FILES) -> Run:
    """The Run of a run directory (no argument checks: load_run's). tables:
    the tables to read (the others None: a figure or a statistic reads what
    it needs); required: the files without which it is not a run directory
    (FileNotFoundError naming them); a JSON record that is not there and not
    required is an empty dict."""
    d = Path(directory)
    require_files(d, required, "run")
    read = {name: optional_table(d, name) for name in tables}
    records = {name: read_record(d / f"{name}.json", what=f"the run's {name}")
               if (d / f"{name}.json").is_file() else {} for name in RUN_RECORDS}
    return Run(**records, **read, dir=d)


def read_sweep_summary(directory: Path, record: dict) -> "pd.DataFrame":
    """A sweep's summary.parquet, holding beside TABLE_COLUMNS["summary"] the
    arm's column where the sweep has arms (its record, sweep.json, says so):
    a CorruptTableError naming what it lacks."""
    arms = ("arm",) if record.get("arms") else ()
    return read_table(Path(directory) / "summary.parquet", (*TABLE_COLUMNS["summary"], *arms))


def load_sweep(path: str | Path) -> Sweep:
    """A sweep directory as a Sweep (its tables; .cell(id) loads a cell's run)."""
    d = _directory_arg(path, "path", "load_sweep", "sweep")
    require_files(d, SWEEP_REQUIRED, "sweep")
    record = read_sweep_record(d)
    return Sweep(d, record, read_sweep_summary(d, record),
                 *(optional_table(d, name) for name in ("deltas", "deltas_mean")))


def load_sweeps(paths: str | Path | Iterable[str | Path]) -> Sweeps:
    """Several sweep directories as one table each (summary, deltas,
    deltas_mean), with a `sweep` column first: the directory's name (its path
    where two names are alike). `paths`: directories, or one glob pattern
    such as "results/sweeps/*". Columns one sweep lacks (other axes) are
    empty (NaN) in its rows."""
    import pandas as pd

    if paths is None:
        raise TypeError("load_sweeps: paths: expected sweep directories or a glob pattern "
                        "such as \"results/sweeps/*\", got None")
    if isinstance(paths, (str, Path)) and glob.has_magic(str(paths)):
        dirs = [Path(p) for p in sorted(glob.glob(str(paths))) if (Path(p) / "sweep.json").is_file()]
        if not dirs:
            raise FileNotFoundError(f"no sweep directory matches {str(paths)!r}")
    elif isinstance(paths, (str, Path)):
        dirs = [Path(paths)]
    else:
        dirs = [Path(p) for p in paths]
    sweeps = [load_sweep(d) for d in dirs]
    names = [d.name for d in dirs]
    if len(set(names)) < len(names):
        names = [str(d) for d in dirs]

    def concat(attr: str) -> "pd.DataFrame":
        parts = [getattr(s, attr).assign(sweep=name) for s, name in zip(sweeps, names)
                 if getattr(s, attr) is not None]
        if not parts:
            return pd.DataFrame({"sweep": pd.Series(dtype=str)})
        df = pd.concat(parts, ignore_index=True, sort=False)
        return df[["sweep", *[c for c in df.columns if c != "sweep"]]]

    return Sweeps(concat("summary"), concat("deltas"), concat("deltas_mean"))
