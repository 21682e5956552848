"""The pre-checks the use cases share, in one place: each raises the
harness's ConfigError (naming the input as the caller spells it, Names)
before anything runs or is written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from harness.config.errors import ConfigError, shorten


@dataclass(frozen=True)
class Names:
    """How a front door spells the inputs a message names: the command's
    options, or the API's keyword arguments."""

    out: str             # the output directory or file
    allow_short: str     # what runs a short window anyway
    max_seeds: str
    budget: str
    executor: str
    boundary: str        # how to run a boundary search, {grid} for the grid given


CLI = Names("-o", "--allow-short", "--max-seeds", "--budget", "--executor",
            "harness boundary {grid}")
API = Names("out", "allow_short=True", "max_seeds", "budget", "executor",
            "`harness boundary {grid}` (Python: harness.api.boundary)")


def refused(field: str, text: str) -> ConfigError:
    """A ConfigError naming `field` whose message is `text` as it stands (one
    that does not read "field: ...")."""
    error = ConfigError("", text)
    error.field = field
    return error


def check_environment() -> None:
    """The switches, the cache and the compiler a simulation needs, before
    anything runs (harness.engine.ns3.check_environment: a ConfigError naming
    the variable)."""
    from harness.engine import ns3

    ns3.check_environment()


def jobs(value: Any) -> int:
    """Cells at once: a whole number >= 1, or None for the CPU count (0 is
    not "every CPU": None is). The CLI's -j is an IntRange(1) already."""
    if value is None:
        return os.cpu_count() or 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError("jobs", f"expected a whole number >= 1 (cells at once) or None for "
                          f"the CPU count; got {shorten(value)}")
    if value < 1:
        raise ConfigError("jobs", f"must be >= 1 (cells at once; None: the CPU count); got "
                          f"{value}")
    return value


def refuse_short_window(p, allow_short: bool, names: Names) -> None:
    """A run whose window cannot measure one training iteration
    (harness.engine.planning.short_window) is refused unless allowed."""
    from harness.engine.planning import short_window

    short = None if allow_short else short_window(p)
    if short is not None:
        raise ConfigError(short.field, f"{str(short)[len(short.field) + 2:]}; "
                          f"{names.allow_short} runs it anyway")


def refuse_short_cells(cells, allow_short: bool, names: Names) -> None:
    """The same for a grid's cells, before any runs: the first such cell
    named, and how many more."""
    short = [] if allow_short else [c for c in cells if c.scenario is not None and c.short]
    if short:
        first = short[0]
        field, _, problem = first.short.partition(": ")
        where = ", ".join([*(f"{k} = {v}" for k, v in first.point), *(
            [f"arm {first.arm}"] if first.arm else [])])
        more = f" and {len(short) - 1} more of the {len(cells)} cells" if len(short) > 1 else ""
        raise ConfigError(field, f"cell {first.id} ({where}){more}: {problem}; "
                          f"{names.allow_short} runs them anyway")


def refuse_search_grid(grid, grid_file, names: Names) -> None:
    """A grid with [search] is a boundary search, not a sweep: its points are
    probes chosen as it goes."""
    if grid.search is not None:
        raise ConfigError("search", f"{grid_file} is a boundary search; run it with "
                          + names.boundary.format(grid=grid_file))


def load_search_grid(grid_file):
    """A grid with a [search] table (a grid without one is a sweep)."""
    from harness.sweeps.grid import load_grid

    grid = load_grid(grid_file)
    if grid.search is None:
        raise ConfigError("search", f"missing: {grid_file} has no [search] table (a sweep: "
                          f"harness sweep {grid_file}); e.g. [search] field = "
                          '"background.rate", lo = 23, hi = 184, tolerance = 10')
    return grid


def check_executor(executor: str, scheduler: str | None, names: Names) -> None:
    """The executor by name, and a Dask scheduler's address answering,
    before a directory is made."""
    if executor not in ("local", "dask"):
        raise ConfigError(names.executor, f"unknown executor {executor!r}; allowed: local, dask")
    if executor == "dask" and scheduler is not None:
        from harness.sweeps import executors

        executors.check_scheduler(scheduler)


def time_option(text: str, field: str) -> float:
    """A time given as text: "2h", "30min", "90s" or a bare number of
    seconds ("60")."""
    from harness.config.scenario import parse_time

    try:
        value = float(text)
    except (TypeError, ValueError):   # "2h"; the API's budget may be anything
        return parse_time(text, field)
    return parse_time(value, field)
