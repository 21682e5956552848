"""ddnn-harness: ns-3 experiments on when distributed DNN training traffic can
be sent at lower network priority without slowing training.

The Python API (harness.api; importing `harness` loads neither pandas nor
ns-3, the first call does):

    harness.run(scenario=None, overrides=None, /, *, out=None, **more) -> Run
        (without out: in memory only, r.dir is None; r.save(DIR) writes it)
    harness.sweep(grid, out=None, *, jobs=None, resume=False, ...) -> Sweep
    harness.check(scenario=None, overrides=None, /, **more) -> Scenario
    harness.load_run(path) -> Run, harness.load_sweep(path) -> Sweep (directories)
    harness.load_sweeps(dirs or "results/sweeps/*") -> Sweeps (one table each)
    harness.compare(a, b, out=None) -> DataFrame (B's changes against A: runs or sweeps)
    harness.export(directory, out, format="csv") -> Path (tables and a data dictionary)
    harness.explain(directory, points=()) -> list[str] (what delayed the traffic, in words)

The engine behind them: harness.engine.simulation (planning and running one scenario
in ns-3) and harness.sweeps.sweeping (running a grid's cells: run_sweep).
"""

from __future__ import annotations

from harness.api import (Run, Sweep, Sweeps, check, compare, explain, export, load_run,
                         load_sweep, load_sweeps, run, sweep)
from harness.config.errors import ConfigError

__all__ = ["run", "sweep", "check", "load_run", "load_sweep", "load_sweeps", "compare", "export",
           "explain", "Run", "Sweep", "Sweeps", "ConfigError"]
