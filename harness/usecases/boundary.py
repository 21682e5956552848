"""A boundary search (`harness boundary`, harness.api.boundary) and checking
one (`harness check GRID` for a grid with [search]): every pre-check, then
harness.sweeps.searching.run_boundary, and the figure (boundary.png, over a
sweep's map if one is given), drawn here so that harness.sweeps draws
nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.usecases import checks
from harness.usecases.checks import Names


@dataclass(frozen=True)
class PreparedSearch:
    """A search that passed every pre-check: what run() runs."""

    grid: object                 # harness.sweeps.grid.Grid, with [search]
    out: Path                    # the checked search directory
    jobs: int
    executor: str
    scheduler: str | None
    resume: bool
    retry_failed: bool
    map_dir: Path | None         # the sweep whose map the curves are drawn over


def prepare(grid_file, out: Path | None, names: Names, *, jobs=None, executor: str = "local",
            scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
            map_dir: Path | None = None, allow_short: bool = False) -> PreparedSearch:
    """Every pre-check of a search before any cell runs: jobs, the
    environment, the grid (a [search] table) and every cell a probe may ask
    for (a window too short for one iteration refused, as a sweep's, unless
    allow_short), the directory (--resume: the same search), its free
    space, the map and the executor."""
    from harness.analysis.tables import SEED_AXIS
    from harness.io import outdir
    from harness.outputs.plots.boundary_figure import check_map
    from harness.sweeps import searching, sweepdir
    from harness.sweeps.search_plan import plan_search

    jobs = checks.jobs(jobs)
    checks.check_environment()
    grid = checks.load_search_grid(grid_file)
    searching.check_search(grid)     # every cell a probe may ask for
    target = outdir.check_sweep_dir(Path(out) if out is not None else sweepdir.default_dir(grid),
                                    names.out)
    sweepdir.check_dir(target, grid, [], resume)
    searching.check_resume(target, grid, resume)
    plan = plan_search(grid)
    outdir.check_space(target, sum(c.output_bytes for c in plan.end_cells) * 2, names.out,
                       "the search")
    fields = [f for f, _ in grid.axes if f != SEED_AXIS]
    map_dir = Path(map_dir) if map_dir is not None else None
    if map_dir is not None:   # read now, not after every probe has run
        check_map(map_dir, fields, grid.search.field, grid.search.arm)
    checks.check_executor(executor, scheduler, names)
    # last: a short window is valid input, refused unless asked for (the errors above first)
    checks.refuse_short_cells(plan.end_cells, allow_short, names)
    return PreparedSearch(grid, target, jobs, executor, scheduler, resume, retry_failed, map_dir)


def run(prepared: PreparedSearch, progress: bool | None = None):
    """Run every search to its end and draw boundary.png: the BoundaryReport
    (Ctrl-C: KeyboardInterrupt, the finished cells kept)."""
    from harness.sweeps import searching

    s = prepared

    def draw(out: Path, grid, table, probes) -> None:
        from harness.outputs.plots.boundary_figure import plot_boundary

        plot_boundary(out, grid, table, s.map_dir, probes=probes)

    return searching.run_boundary(s.grid, s.out, s.jobs, s.executor, s.scheduler, s.resume,
                                  s.retry_failed, progress, draw=draw, checked=True)


def search_plan(grid):
    """`harness check GRID` (a search): its SearchPlan (the cells of the
    range's ends, the probes at most, the cost's bounds) and its points."""
    from harness.sweeps.search_plan import plan_search

    return plan_search(grid), search_points(grid)


def search_points(grid) -> list:
    """The points of the grid's other axes, each searched on its own."""
    from harness.sweeps import searching

    return searching.search_points(grid)
