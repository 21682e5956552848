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

from harness.config.errors import ConfigError
# reading run and sweep directories is harness.analysis.tables' (no run logic there)
from harness.analysis.tables import (RUN_TABLES, Run, Sweep, Sweeps, load_run,  # noqa: F401
                            load_sweep, load_sweeps)

if TYPE_CHECKING:
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
        progress: bool = False, **more: Any) -> Run:
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
    Raises ConfigError (a ValueError naming the field) before ns-3 starts."""
    from harness.outputs import outdir
    from harness.config.scenario import Scenario
    from harness.engine.simulation import execute, output_bytes, plan, write_run_dir
    from harness.sweeps.cost import long_run_note

    if isinstance(scenario, Scenario):
        if overrides or more:
            raise ConfigError("overrides", "apply overrides to a scenario name or file, "
                              "not to a Scenario object")
        sc = scenario
    else:
        sc = check(scenario, overrides, **more)
    p = plan(sc)
    target = outdir.check_run_dir(Path(out), "out", output_bytes(p)) if out is not None else None
    long_run = long_run_note(p)
    if long_run:
        _warn(long_run)
    result = execute(p, progress=progress, quiet=True)
    if target is not None:
        write_run_dir(result, target)
    return result


def sweep(grid: str | Path, out: str | Path | None = None, *, jobs: int | None = None,
          executor: str = "local", scheduler: str | None = None, resume: bool = False,
          retry_failed: bool = False, progress: bool = False) -> Sweep:
    """Run a grid (a grid file or a preset name: "quick", ...) and return its tables.

    out: the sweep directory (default results/sweeps/<grid name> under
    $DDNN_HARNESS_RESULTS or the current directory); resume=True continues one.
    jobs: cells at once (default: CPU count); executor: "local" or "dask"
    (scheduler: a Dask scheduler address, default a LocalCluster).
    A failing cell is recorded (status "failed", its error) and the others run.
    Raises ConfigError for a bad grid, harness.sweeps.sweeping.SweepError for a directory
    that cannot be used as asked, before any cell runs."""
    from harness.outputs import outdir
    from harness.sweeps import sweepdir
    from harness.sweeps.grid import expand, load_grid
    from harness.sweeps.sweeping import run_sweep

    g = load_grid(grid)
    target = outdir.check_sweep_dir(Path(out) if out is not None else sweepdir.default_dir(g),
                                    "out")
    cells = expand(g)
    outdir.check_space(target, sweepdir.output_bytes_left(target, cells), "out", "the sweep")
    run_sweep(g, target, jobs or os.cpu_count() or 1, executor, scheduler, resume,
              retry_failed, progress, cells)
    return load_sweep(target)
