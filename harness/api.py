"""The Python API, for notebooks and scripts (re-exported by `harness`):

    import harness
    r = harness.run("default", {"run.duration": 0.3}, seed=2)
    r.flows.groupby("size_class")["fct_s"].mean()
    r.save("results/runs/mine")   # no out= given: r was in memory only (r.dir None)
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
          /, **more: Any) -> "Scenario":
    """The validated scenario `harness.run` would run (nothing runs):
    a file or built-in name (None: the default scenario) with overrides.
    Raises ConfigError naming the field."""
    from harness.config.scenario import (apply_values, default_scenario_dict, read_scenario_dict,
                                scenario_from_dict)

    data = read_scenario_dict(scenario) if scenario is not None else default_scenario_dict()
    notes: list[str] = []
    data = apply_values(data, _override_pairs({**(overrides or {}), **more}), notes)
    for note in notes:
        _warn(note)
    return scenario_from_dict(data)


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
    from harness.engine import ns3
    from harness.io import outdir
    from harness.config.scenario import Scenario
    from harness.engine.simulation import (execute, output_bytes, plan, short_window,
                                           write_run_dir)
    from harness.sweeps.cost import long_run_note

    if isinstance(scenario, Scenario):
        if overrides or more:
            raise ConfigError("overrides", "apply overrides to a scenario name or file, "
                              "not to a Scenario object")
        sc = scenario
    else:
        sc = check(scenario, overrides, **more)
    ns3.check_environment()   # the switches, the cache, the compiler: before the run
    p = plan(sc)
    short = None if allow_short else short_window(p)
    if short is not None:
        raise ConfigError(short.field, f"{str(short)[len(short.field) + 2:]}; allow_short=True "
                          "runs it anyway")
    target = outdir.check_run_dir(Path(out), "out", output_bytes(p)) if out is not None else None
    long_run = long_run_note(p)
    if long_run:
        _warn(long_run)
    result = execute(p, progress=progress, quiet=True)
    if target is not None:
        write_run_dir(result, target)
    return result


def _jobs(jobs: Any) -> int:
    """`jobs` as the CLI's -j takes it: a whole number >= 1, or None for the
    CPU count; anything else a ConfigError naming jobs (0 is not "every
    CPU": None is)."""
    if jobs is None:
        return os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise ConfigError("jobs", f"expected a whole number >= 1 (cells at once) or None for "
                          f"the CPU count; got {shorten(jobs)}")
    if jobs < 1:
        raise ConfigError("jobs", f"must be >= 1 (cells at once; None: the CPU count); got "
                          f"{jobs}")
    return jobs


def sweep(grid: str | Path, out: str | Path | None = None, *, jobs: int | None = None,
          executor: str = "local", scheduler: str | None = None, resume: bool = False,
          retry_failed: bool = False, progress: bool = False, allow_short: bool = False) -> Sweep:
    """Run a grid (a grid file or a preset name: "quick", ...) and return its tables.

    out: the sweep directory (default results/sweeps/<grid name> under
    $DDNN_HARNESS_RESULTS or the current directory); resume=True continues one.
    jobs: cells at once (default: CPU count); executor: "local" or "dask"
    (scheduler: a Dask scheduler address, default a LocalCluster).
    A failing cell is recorded (status "failed", its error) and the others run;
    a grid with a cell whose window cannot measure one training iteration is
    refused, as by harness.run (allow_short=True runs it).
    Raises ConfigError for a bad grid (a boundary search's too: `harness boundary`
    runs it), harness.sweeps.sweeping.SweepError for a directory
    that cannot be used as asked, before any cell runs."""
    from harness.engine import ns3
    from harness.io import outdir
    from harness.sweeps import sweepdir
    from harness.sweeps.grid import expand, load_grid
    from harness.sweeps.sweeping import run_sweep

    jobs = _jobs(jobs)   # before anything is read or made, as the CLI's -j
    ns3.check_environment()   # the switches, the cache, the compiler
    g = load_grid(grid)
    if g.search is not None:   # as `harness sweep` refuses it: its points are probes
        raise ConfigError("search", f"{grid} is a boundary search, not a sweep; run it with "
                          f"`harness boundary {grid}` (Python: harness.sweeps.searching."
                          "run_boundary)")
    target = outdir.check_sweep_dir(Path(out) if out is not None else sweepdir.default_dir(g),
                                    "out")
    cells = expand(g)
    short = [] if allow_short else [c for c in cells if c.scenario is not None and c.short]
    if short:
        field, _, problem = short[0].short.partition(": ")
        raise ConfigError(field, f"cell {short[0].id} {dict(short[0].point)} (arm "
                          f"{short[0].arm}), {len(short)} of {len(cells)} cells: {problem}; "
                          "allow_short=True runs them anyway")
    outdir.check_space(target, sweepdir.output_bytes_left(target, cells), "out", "the sweep")
    run_sweep(g, target, jobs, executor, scheduler, resume,
              retry_failed, progress, cells)
    return load_sweep(target)


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
    from harness.analysis import comparing

    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ConfigError(name, f"expected a run or sweep directory path; got "
                              f"{shorten(value)}")
    target = comparing.check_output(out)
    result = comparing.compare(a, b)
    if target is not None:
        comparing.write(result, target)
    return result.table


def export(directory: str | Path, out: str | Path, format: str = "csv") -> Path:
    """Write a run's or a sweep's tables into `out`, a new directory, as
    "csv" or "parquet", with data-dictionary.csv (every column's table,
    name, dtype, unit and meaning); returns `out`. Raises ConfigError, before
    anything is written, for a `directory` that is not a run or sweep
    directory, another format, or an `out` that exists."""
    from harness.outputs import export as exporting

    for name, value in (("directory", directory), ("out", out)):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ConfigError(name, f"expected a directory path; got {shorten(value)}")
    return exporting.export(directory, format, out)
