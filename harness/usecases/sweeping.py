"""Running a grid of scenarios (`harness sweep`, harness.api.sweep) and
checking one (`harness check GRID`): every pre-check, then
harness.sweeps.sweeping.run_sweep."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.usecases import checks
from harness.usecases.checks import Names


@dataclass(frozen=True)
class PreparedSweep:
    """A sweep that passed every pre-check: what run() runs."""

    grid: object                 # harness.sweeps.grid.Grid
    out: Path                    # the checked sweep directory
    cells: list                  # the grid's cells (expand)
    jobs: int
    executor: str
    scheduler: str | None
    resume: bool
    retry_failed: bool
    max_seeds: int | None
    budget_s: float | None
    cached: Path | None          # cached cells standing in for some cells
    taken: int = 0               # the cells taken from them


def prepare(grid_file, out: Path | None, names: Names, *, jobs=None, executor: str = "local",
            scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
            max_seeds: int | None = None, budget=None, cached=None,
            allow_short: bool = False) -> PreparedSweep:
    """Every pre-check of a sweep, in the order the command makes them,
    before any cell runs or the directory is made: jobs, the environment,
    the grid (not a boundary search), the directory, added seeds and their
    budget, the cells' windows, the directory's cells (--resume), its free
    space, the executor and the cached cells."""
    from harness.io import outdir
    from harness.sweeps import sweepdir
    from harness.sweeps.grid import check_adaptive, expand, load_grid

    jobs = checks.jobs(jobs)   # before anything is read or made
    checks.check_environment()
    grid = load_grid(grid_file)
    checks.refuse_search_grid(grid, grid_file, names)
    target = outdir.check_sweep_dir(Path(out) if out is not None else sweepdir.default_dir(grid),
                                    names.out)
    if max_seeds:
        check_adaptive(dict(grid.axes), grid.reference, names.max_seeds)
    budget_s = None if budget is None else checks.time_option(budget, names.budget)
    cells = expand(grid)
    checks.refuse_short_cells(cells, allow_short, names)
    sweepdir.check_dir(target, grid, cells, resume)
    outdir.check_space(target, sweepdir.output_bytes_left(target, cells), names.out,
                       "the sweep")
    checks.check_executor(executor, scheduler, names)
    taken, chosen = 0, None
    if cached is not None:
        from harness.sweeps import cell_cache

        chosen = cell_cache.resolve(cached)
        taken = len(cell_cache.check(chosen, grid, cells))
    return PreparedSweep(grid, target, cells, jobs, executor, scheduler, resume, retry_failed,
                         max_seeds, budget_s, chosen, taken)


def run(prepared: PreparedSweep, progress: bool | None = None):
    """Run the cells not done yet and write the tables: the SweepReport
    (harness.sweeps.sweeping: Ctrl-C raises SweepInterrupted)."""
    from harness.sweeps import sweeping

    s = prepared
    return sweeping.run_sweep(s.grid, s.out, s.jobs, s.executor, s.scheduler, s.resume,
                              s.retry_failed, progress, s.cells, s.max_seeds, s.budget_s,
                              s.cached)


def grid_cells(grid, allow_short: bool, names: Names) -> list:
    """`harness check GRID` (a sweep): its cells, invalid ones with their
    error; a cell whose window cannot measure an iteration is refused."""
    from harness.sweeps.grid import expand

    cells = expand(grid)
    checks.refuse_short_cells(cells, allow_short, names)
    return cells
