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

`harness.run` and `harness.sweep` are also the modules harness/run.py and
harness/sweep.py: Python binds a submodule over the package attribute of the
same name once it is imported, so this package makes those two modules
callable as they are bound (calling them calls harness.api.run /
harness.api.sweep); the modules themselves know nothing of the API.
"""

from __future__ import annotations

import importlib
import sys
import types


class _ApiModule(types.ModuleType):
    """harness/run.py or harness/sweep.py, callable as the API function of its name."""

    def __call__(self, *args, **kwargs):
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


class _Package(types.ModuleType):
    """This package: a submodule named like an API function (run, sweep) is
    made callable when the import system binds it here."""

    def __setattr__(self, name: str, value) -> None:
        if name in ("run", "sweep") and type(value) is types.ModuleType:
            value.__class__ = _ApiModule
        super().__setattr__(name, value)


# first: whatever imports harness.run / harness.sweep from here on binds a callable
sys.modules[__name__].__class__ = _Package

from harness import api  # noqa: E402
from harness.api import (Run, Sweep, Sweeps, check, load_run, load_sweep,  # noqa: E402
                         load_sweeps)
from harness.errors import ConfigError  # noqa: E402

__all__ = ["run", "sweep", "check", "load_run", "load_sweep", "load_sweeps", "Run", "Sweep",
           "Sweeps", "ConfigError"]


def __getattr__(name: str):
    """harness.run / harness.sweep on first use (PEP 562): the callable modules."""
    if name in ("run", "sweep"):
        return importlib.import_module(f"harness.{name}")
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
