"""ddnn-harness: ns-3 experiments on when distributed DNN training traffic can
be sent at lower network priority without slowing training.

The Python API (harness.api; importing `harness` loads neither pandas nor
ns-3, the first call does):

    harness.run(scenario=None, overrides=None, /, *, out=None, **more) -> Run
    harness.sweep(grid, out=None, *, jobs=None, resume=False, ...) -> Sweep
    harness.check(scenario=None, overrides=None, /, **more) -> Scenario
    harness.load_run(dir) -> Run, harness.load_sweep(dir) -> Sweep
    harness.load_sweeps(dirs or "results/sweeps/*") -> Sweeps (one table each)

`harness.run` and `harness.sweep` are also the modules harness/run.py and
harness/sweep.py: Python binds a submodule over the package attribute of the
same name once it is imported, so those two modules are made callable (see
the end of each) and calling them calls harness.api.run / harness.api.sweep.
"""

from __future__ import annotations

import importlib

from harness.api import Run, Sweep, Sweeps, check, load_run, load_sweep, load_sweeps
from harness.errors import ConfigError

__all__ = ["run", "sweep", "check", "load_run", "load_sweep", "load_sweeps", "Run", "Sweep",
           "Sweeps", "ConfigError"]


def __getattr__(name: str):
    """harness.run / harness.sweep on first use (PEP 562): the callable modules."""
    if name in ("run", "sweep"):
        return importlib.import_module(f"harness.{name}")
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
