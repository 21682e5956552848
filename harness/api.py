"""The Python API, for notebooks and scripts (re-exported by `harness`):

    import harness
    r = harness.run("default", {"run.duration": 0.3}, seed=2)
    r.flows.groupby("size_class")["fct_s"].mean()
    r.save("results/runs/mine")   # no out= given: r was in memory only (r.dir None)
    s = harness.sweep("my-grid.toml", jobs=2)
    b = harness.api.boundary("boundary-quick", jobs=2)   # b.table: the boundary
    s.summary, s.deltas_mean, s.cell(s.summary["cell"][0]).iterations
    harness.load_run("results/runs/default-..."), harness.load_sweep("results/sweeps/quick")
    harness.load_sweeps(["results/sweeps/a", "results/sweeps/b"]).summary
    harness.check("thesis", {"run.duration": 3})   # the resolved Scenario, nothing run

Importing `harness` stays cheap: pandas, ns-3 and the simulation code load
on the first call. Bad input raises harness.ConfigError (a ValueError whose
message names the field), before ns-3 starts.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config.errors import ConfigError, shorten
# reading run and sweep directories is harness.analysis.tables' (no run logic there)
from harness.analysis.tables import (RUN_TABLES, Run, Sweep, Sweeps, load_run,  # noqa: F401
                            load_sweep, load_sweeps)

if TYPE_CHECKING:
    import pandas as pd

    from harness.config.scenario import Scenario

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
          /, *, allow_short: bool = False, **more: Any) -> "Scenario":
    """The validated scenario `harness.run` would run (nothing runs):
    a file or built-in name (None: the default scenario) with overrides.
    Checked as `harness check` checks it: planned on its network (the
    services' and the jobs' checks against the links, the ports), and a
    window too short for one training iteration refused (allow_short=True
    lets it through). Raises ConfigError naming the field."""
    from harness.config.scenario import (apply_values, default_scenario_dict, read_scenario_dict,
                                scenario_from_dict)
    from harness.usecases import checks, running

    data = read_scenario_dict(scenario) if scenario is not None else default_scenario_dict()
    notes: list[str] = []
    data = apply_values(data, _override_pairs({**(overrides or {}), **more}), notes)
    for note in notes:
        _warn(note)
    sc = scenario_from_dict(data)
    checks.refuse_short_window(running.plan(lambda: sc), allow_short, checks.API)
    return sc


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warn(message: str) -> None:
    """A UserWarning attributed to the first caller outside this package (the
    user's file and line, however many harness frames are in between)."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, UserWarning, skip_file_prefixes=(_PACKAGE_DIR,))
        return
    level, frame = 2, sys._getframe(1)   # stacklevel 2: _warn's caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _writes(function):
    """An API call that writes an output: the output's lock (taken by its
    checks, harness.io.lock.OutputLock) let go when the call returns or
    raises, as a command's is when it ends."""
    import functools

    @functools.wraps(function)
    def call(*args, **kwargs):
        from harness.io.lock import writing

        with writing():
            return function(*args, **kwargs)

    return call


@_writes
def run(scenario: "str | Path | Scenario | None" = None,
        overrides: dict[str, Any] | None = None, /, *, out: str | Path | None = None,
        progress: bool = False, allow_short: bool = False, **more: Any) -> Run:
    """Run one scenario in ns-3 and return its tables.

    scenario: a scenario file, a built-in name ("default", "thesis", "ps-small", ...;
    `harness list`), a harness.config.scenario.Scenario, or None for the default.
    overrides: fields by dotted name, e.g. {"run.duration": 0.3,
    "background.load": 0.4}; keyword arguments add more (seed=2, or
    background__load=0.4 with "__" for "."). Values are Python values (numbers,
    strings such as "10Gbps", lists). Shortening run.duration alone below the
    warm-up + cool-down scales both (a warning says so).
    out: also write the run directory there (checked before the run: new, empty,
    or an earlier run directory). Without it nothing is written: the Run holds
    its tables in memory only and its `dir` is None (r.save(DIR) writes it
    later; harness.load_run reads directories, not such a Run).
    A run estimated at minutes of wall time warns with its cost before it starts.
    A training job whose measurement window is shorter than one of its
    iterations at the no-contention pace is refused (allow_short=True runs it).
    Raises ConfigError (a ValueError naming the field) before ns-3 starts."""
    from harness.config.scenario import Scenario
    from harness.usecases import checks, running

    if isinstance(scenario, Scenario) and (overrides or more):
        raise ConfigError("overrides", "apply overrides to a scenario name or file, "
                          "not to a Scenario object")

    def load() -> "Scenario":
        return scenario if isinstance(scenario, Scenario) else check(scenario, overrides, **more)

    # the switches, the cache, the compiler, the window, `out`: before the run
    prepared = running.prepare(load, Path(out) if out is not None else None, allow_short,
                               checks.API)
    if prepared.long_run:
        _warn(prepared.long_run)
    result = running.execute(prepared, progress=progress, quiet=True)
    running.write(result, prepared)
    return result


@_writes
def sweep(grid: str | Path, out: str | Path | None = None, *, jobs: int | None = None,
          executor: str = "local", scheduler: str | None = None, resume: bool = False,
          retry_failed: bool = False, progress: bool = False, allow_short: bool = False,
          max_seeds: int | None = None, budget: "str | float | None" = None,
          cached: str | Path | None = None, reference: str | Path | None = None) -> Sweep:
    """Run a grid (a grid file or a preset name: "quick", ...) and return its tables.

    out: the sweep directory (default results/sweeps/<grid name> under
    $DDNN_HARNESS_RESULTS or the current directory); resume=True continues one.
    jobs: cells at once (default: CPU count); executor: "local" or "dask"
    (scheduler: a Dask scheduler address, default a LocalCluster).
    max_seeds: add seeds to undecided points up to this many (default: the
    grid's [adaptive]); budget: their wall time from the start ("20min", or
    seconds); cached: cached cells for the cells of the grid's smallest
    scale (as `harness sweep --cached`; reference: its old name).
    A failing cell is recorded (status "failed", its error) and the others run;
    a grid with a cell whose window cannot measure one training iteration is
    refused, as by harness.run (allow_short=True runs it).
    Every check `harness sweep` makes is made here, before any cell runs
    (harness.usecases.sweeping): raises ConfigError for bad input (a boundary
    search's grid too: harness.api.boundary runs it),
    harness.sweeps.sweeping.SweepError for a directory that cannot be used as
    asked."""
    from harness.usecases import checks, sweeping

    prepared = sweeping.prepare(grid, Path(out) if out is not None else None, checks.API,
                                jobs=jobs, executor=executor, scheduler=scheduler,
                                resume=resume, retry_failed=retry_failed, max_seeds=max_seeds,
                                budget=budget, cached=cached if cached is not None else reference,
                                allow_short=allow_short)
    sweeping.run(prepared, progress)
    return load_sweep(prepared.out)


@_writes
def boundary(grid: str | Path, out: str | Path | None = None, *, jobs: int | None = None,
             executor: str = "local", scheduler: str | None = None, resume: bool = False,
             retry_failed: bool = False, progress: bool = False,
             map_dir: str | Path | None = None, allow_short: bool = False):
    """Run a boundary search (a grid with a [search] table, or a preset:
    "boundary-quick") as `harness boundary` does: for each point of its other
    axes and each threshold, where the training slowdown crosses it; writes
    boundary.parquet, probes.parquet and boundary.png (over the map of the
    sweep in map_dir if given) in `out` and returns the report (its .table
    is the boundary table). Raises ConfigError or SweepError, as
    `harness boundary` refuses, before any cell runs."""
    from harness.usecases import boundary as searching, checks

    prepared = searching.prepare(grid, Path(out) if out is not None else None, checks.API,
                                 jobs=jobs, executor=executor, scheduler=scheduler,
                                 resume=resume, retry_failed=retry_failed,
                                 map_dir=Path(map_dir) if map_dir is not None else None,
                                 allow_short=allow_short)
    return searching.run(prepared, progress)


def explain(directory: str | Path, points: "tuple[str, ...] | list[str]" = ()) -> list[str]:
    """What delayed the traffic besides queueing, in `harness explain`'s
    words, a line each: a run directory's TCP delays per size class, its
    training job's and its services'; a sweep directory's, per point (or
    those `points` choose: "training.ratio=2", one per axis) and compared
    arm, training's verdict and what its change is made of
    (training_causes.parquet), its connections' delays, the bands'
    starvation and losses, and each size class's mean-FCT change and each
    service's latency change split into RTO back-off and queueing and the
    rest (causes.parquet, service_causes.parquet, which pandas reads
    whole). Reads tables only. Raises ConfigError for a path that is
    neither, a sweep without any of those tables, or a point the sweep
    has not."""
    from harness.usecases import explaining

    if not isinstance(directory, (str, os.PathLike)) or not str(directory):
        raise ConfigError("directory", f"expected a run or sweep directory path; got "
                          f"{shorten(directory)}")
    if isinstance(points, str):
        points = (points,)
    return explaining.explain_lines(Path(directory), tuple(points))


@_writes
def compare(a: str | Path, b: str | Path, out: str | Path | None = None) -> "pd.DataFrame":
    """Each metric's change of B against A with its 95 % interval and verdict:
    two run directories, or two sweep directories matched point by point by
    their axis values and arm (harness.analysis.comparing; paired where the
    runs replayed the same background flows and seed). One row per (point,
    arm,) metric: change, change_low, change_high, samples, seeds, paired,
    verdict, decided. out: also write the table there, a new .csv or
    .parquet file (checked before anything is computed). Raises ConfigError
    for a path that is not a run or sweep directory, a run against a sweep,
    sweeps with different axes or no matching point, or a bad `out`."""
    from harness.usecases import results

    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ConfigError(name, f"expected a run or sweep directory path; got "
                              f"{shorten(value)}")
    result, target = results.compare(a, b, out)
    if target is not None:
        results.write_comparison(result, target)
    return result.table


@_writes
def export(directory: str | Path, out: str | Path, format: str = "csv") -> Path:
    """Write a run's or a sweep's tables into `out`, a new directory, as
    "csv" or "parquet", with data-dictionary.csv (every column's table,
    name, dtype, unit and meaning); returns `out`. Raises ConfigError, before
    anything is written, for a `directory` that is not a run or sweep
    directory, another format, or an `out` that exists."""
    from harness.usecases import results

    for name, value in (("directory", directory), ("out", out)):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ConfigError(name, f"expected a directory path; got {shorten(value)}")
    return results.export(directory, format, out)
