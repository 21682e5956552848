"""The Python API, for notebooks and scripts (re-exported by `harness`):

    import harness
    r = harness.run("default", {"run.duration": 0.3}, seed=2)
    r.flows.groupby("size_class")["fct_s"].mean()
    s = harness.sweep("my-grid.toml", jobs=2)
    s.summary, s.deltas_mean, s.cell(s.summary["cell"][0]).iterations
    harness.load_run("results/runs/default-..."), harness.load_sweep("results/sweeps/quick")
    harness.load_sweeps(["results/sweeps/a", "results/sweeps/b"]).summary
    harness.check("thesis", {"run.duration": 3})   # the resolved Scenario, nothing run

Importing `harness` stays cheap: pandas, ns-3 and the simulation code load
on the first call. Bad input raises harness.ConfigError (a ValueError whose
message names the field), before ns-3 starts.
"""

from __future__ import annotations

import glob
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from harness.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from harness.config import Scenario

RUN_TABLES = ("flows", "queues", "utilization", "iterations", "transfers", "compute",
              "scheduler")


@dataclass
class Run:
    """One run's results. Tables are DataFrames (README, "Output: the run
    directory"); the training tables are None for a run without a job."""
    summary: dict                      # summary.json: FCT per class, iterations, ...
    manifest: dict                     # manifest.json: versions, seed, digest, timings
    config: dict                       # config.json: the resolved scenario and what followed
    flows: "pd.DataFrame"
    queues: "pd.DataFrame"
    utilization: "pd.DataFrame"
    iterations: "pd.DataFrame | None" = None
    transfers: "pd.DataFrame | None" = None
    compute: "pd.DataFrame | None" = None
    scheduler: "pd.DataFrame | None" = None
    dir: Path | None = None            # where it was written or read, if anywhere


@dataclass
class Sweep:
    """One sweep directory's tables (README, "Sweeps"); deltas are None for
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
# running


def _override_pairs(overrides: dict[str, Any]) -> list[tuple[list[str], Any]]:
    """{"run.duration": 0.3, "background__load": 0.4} -> [(["run", "duration"], 0.3), ...]
    ("__" stands for "." so that keyword arguments can name nested fields)."""
    pairs = []
    for key, value in overrides.items():
        path = str(key).replace("__", ".").split(".")
        if not all(path):
            raise ConfigError(str(key), "bad field name; use dotted names like \"run.duration\"")
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Path):
            value = str(value)
        pairs.append((path, value))
    return pairs


def check(scenario: "str | Path | None" = None, overrides: dict[str, Any] | None = None,
          /, **more: Any) -> "Scenario":
    """The validated scenario `harness.run` would run (nothing runs):
    a file or built-in name (None: the default scenario) with overrides.
    Raises ConfigError naming the field."""
    from harness.config import (apply_values, default_scenario_dict, read_scenario_dict,
                                scenario_from_dict)

    data = read_scenario_dict(scenario) if scenario is not None else default_scenario_dict()
    notes: list[str] = []
    data = apply_values(data, _override_pairs({**(overrides or {}), **more}), notes)
    for note in notes:
        warnings.warn(note, stacklevel=3)
    return scenario_from_dict(data)


def run(scenario: "str | Path | Scenario | None" = None,
        overrides: dict[str, Any] | None = None, /, *, out: str | Path | None = None,
        progress: bool = False, **more: Any) -> Run:
    """Run one scenario in ns-3 and return its tables.

    scenario: a scenario file, a built-in name ("default", "thesis", "ps-small", ...;
    `harness list`), a harness.config.Scenario, or None for the default.
    overrides: fields by dotted name, e.g. {"run.duration": 0.3,
    "background.load": 0.4}; keyword arguments add more (seed=2, or
    background__load=0.4 with "__" for "."). Values are Python values (numbers,
    strings such as "10Gbps", lists). Shortening run.duration alone below the
    warm-up + cool-down scales both (a warning says so).
    out: also write the run directory there (checked before the run: new, empty,
    or an earlier run directory).
    Raises ConfigError (a ValueError naming the field) before ns-3 starts."""
    from harness import outdir
    from harness.config import Scenario
    from harness.run import execute, plan, write_run_dir

    if isinstance(scenario, Scenario):
        if overrides or more:
            raise ConfigError("overrides", "apply overrides to a scenario name or file, "
                              "not to a Scenario object")
        sc = scenario
    else:
        sc = check(scenario, overrides, **more)
    p = plan(sc)
    target = outdir.check_run_dir(Path(out)) if out is not None else None
    result = execute(p, progress=progress, quiet=True)
    if target is not None:
        write_run_dir(result, target)
    return Run(summary=result.summary, manifest=result.manifest, config=p.resolved(),
               flows=result.flows, queues=result.queues, utilization=result.utilization,
               iterations=result.iterations, transfers=result.transfers,
               compute=result.compute, scheduler=result.scheduler, dir=target)


def sweep(grid: str | Path, out: str | Path | None = None, *, jobs: int | None = None,
          executor: str = "local", scheduler: str | None = None, resume: bool = False,
          retry_failed: bool = False, progress: bool = False) -> Sweep:
    """Run a grid (a grid file or a preset name: "quick", ...) and return its tables.

    out: the sweep directory (default results/sweeps/<grid name> under
    $DDNN_HARNESS_RESULTS or the current directory); resume=True continues one.
    jobs: cells at once (default: CPU count); executor: "local" or "dask"
    (scheduler: a Dask scheduler address, default a LocalCluster).
    A failing cell is recorded (status "failed", its error) and the others run.
    Raises ConfigError for a bad grid, harness.sweep.SweepError for a directory
    that cannot be used as asked, before any cell runs."""
    from harness import outdir
    from harness import sweep as sweeps

    g = sweeps.load_grid(grid)
    target = outdir.check_sweep_dir(Path(out) if out is not None else sweeps.default_dir(g))
    sweeps.run_sweep(g, target, jobs or os.cpu_count() or 1, executor, scheduler, resume,
                     retry_failed, progress)
    return load_sweep(target)


# --------------------------------------------------------------------------
# reading


def _missing(directory: Path, names: Iterable[str], kind: str) -> None:
    missing = [n for n in names if not (directory / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{directory} is not a {kind} directory: missing "
                                f"{', '.join(missing)}")


def load_run(path: str | Path) -> Run:
    """A run directory (written by `harness run`, `harness.run(out=...)` or a
    sweep's cells/<id>/) as a Run."""
    import pandas as pd

    d = Path(path)
    _missing(d, ("config.json", "summary.json", "manifest.json"), "run")
    tables = {name: pd.read_parquet(d / f"{name}.parquet")
              for name in RUN_TABLES if (d / f"{name}.parquet").is_file()}
    records = {name: json.loads((d / f"{name}.json").read_text())
               for name in ("summary", "manifest", "config")}
    return Run(**records, **{"flows": None, "queues": None, "utilization": None, **tables},
               dir=d)


def load_sweep(path: str | Path) -> Sweep:
    """A sweep directory as a Sweep (its tables; .cell(id) loads a cell's run)."""
    import pandas as pd

    d = Path(path)
    _missing(d, ("sweep.json", "summary.parquet"), "sweep")

    def table(name: str) -> "pd.DataFrame | None":
        p = d / f"{name}.parquet"
        return pd.read_parquet(p) if p.is_file() else None

    return Sweep(d, json.loads((d / "sweep.json").read_text()), table("summary"),
                 table("deltas"), table("deltas_mean"))


def load_sweeps(paths: str | Path | Iterable[str | Path]) -> Sweeps:
    """Several sweep directories as one table each (summary, deltas,
    deltas_mean), with a `sweep` column first: the directory's name (its path
    where two names are alike). `paths`: directories, or one glob pattern
    such as "results/sweeps/*". Columns one sweep lacks (other axes) are
    empty (NaN) in its rows."""
    import pandas as pd

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
