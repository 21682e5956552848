"""Operating-boundary sweeps: a grid file -> cells -> runs -> tidy tables.

run_sweep runs a grid's cells (harness.sweeps.grid: the grid file, its cells) in a
sweep directory (harness.sweeps.sweepdir: its files, the state of each cell, one
sweep at a time) on an executor (harness.sweeps.executors: local or Dask), longest
first (harness.sweeps.cost), adds seeds where a verdict is undecided
(harness.sweeps.adaptive: [adaptive], the budget) and writes the tables
(harness.sweeps.aggregate: summary, deltas, deltas_mean).

Adaptive seeding is asynchronous: no round waits for its slowest cell. As
soon as every cell of a point has ended, that point alone is judged from its
own cells (harness.sweeps.aggregate.compare: a point's rows depend on its cells
only), and if still undecided, under max_seeds and within the budget, its
next seed's cells go to the executor at once, ahead of the cells not started
yet. Each point gets the seeds the round-by-round rule (more_seeds after
every round) would give it, and the cells end in the order of those rounds:
the same tables.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.sweeps import executors
from harness.sweeps import cell_cache
from harness.sweeps.adaptive import (_cell_wall_s, _point_keys, _point_of, more_seeds,
                               undecided_points, within_budget)
from harness.sweeps.aggregate import aggregate, compare
from harness.sweeps.cells import Cell
from harness.sweeps.grid import Grid, expand
from harness.sweeps.sweepdir import (cell_dir, cell_state, clear_failure, is_done, is_failed,
                              locked, prepare_dir, record_failure, write_cells)
from harness.analysis.tables import SEED_AXIS
# the API's promise (harness.api.sweep): harness.sweeps.sweeping.SweepError
from harness.sweeps.sweepdir import SweepError  # noqa: F401
from harness.io.progress import ProgressLines, wants_lines


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C: running cells were stopped (they are unfinished, not failed) and
    the tables of the finished ones written; `report` says what finished."""

    def __init__(self, report: "SweepReport | None"):
        super().__init__()
        self.report = report


@contextlib.contextmanager
def _uninterruptible():
    """A second Ctrl-C (or SIGTERM) while the tables of an interrupted sweep
    are written would leave them unwritten: ignore it for that second (main
    thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass(frozen=True)
class SweepReport:
    out: Path
    cells: int
    ran: int               # cells run to an end now (finished or failed)
    done_before: int       # finished in an earlier run of the directory (--resume)
    failed_before: int     # failed earlier and not retried (no --retry-failed)
    invalid: int           # invalid scenarios: recorded failed without running
    failed: list[str]      # ids of cells failed now or before
    wall_s: float
    tables: dict
    rounds: int = 1        # adaptive sweeps: 1 + the most seeds added to one point (the
                           # rounds a round-by-round sweep would run)
    unfinished: int = 0    # left to run (an interrupted sweep)
    failed_now: int = 0    # of `ran`


def run_sweep(grid: Grid, out: Path, jobs: int = 1, executor: str = "local",
              scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
              progress: bool | None = None, cells: list[Cell] | None = None,
              max_seeds: int | None = None, budget_s: float | None = None,
              cached: Path | None = None) -> SweepReport:
    """Run every cell not yet done, record failures, aggregate the tables.
    cells: expand(grid), when the caller has it already. max_seeds: add seeds
    to undecided points up to this many (default: the grid's [adaptive]);
    budget_s: the added rounds' seeds only where they fit in this wall time
    from the sweep's start (default: the grid's [adaptive] budget).
    cached: cached cells (harness.sweeps.cell_cache) standing in for the
    cells of the grid's smallest scale, which then do not run.
    Ctrl-C (KeyboardInterrupt) stops the running cells, which stay unfinished
    (not failed: --resume runs them), writes the tables of what finished and
    raises SweepInterrupted carrying the report.
    The input is checked before: the executor, the scheduler and added seeds
    (harness.usecases.sweeping.prepare, which `harness sweep` and
    harness.api.sweep call; a grid's own [adaptive] by load_grid)."""
    import time

    started = time.monotonic()
    base = expand(grid) if cells is None else cells
    max_seeds = grid.max_seeds if max_seeds is None else max_seeds
    budget_s = grid.budget_s if budget_s is None else budget_s
    from_cache = cell_cache.check(cached, grid, base) if cached is not None else []
    with locked(out):  # one sweep at a time in a directory
        cells = prepare_dir(out, grid, base, resume)
        cell_cache.install(cached, out, from_cache)
        added = {c.id for c in cells} - {c.id for c in base}
        first = {c.id: cell_state(out, c, retry_failed) for c in cells}
        todo = [c for c in cells if first[c.id] == "run"]
        counts = {"ran": 0, "failed": 0, "todo": len(todo)}
        rounds, interrupted = 1, False
        seeding = None
        if max_seeds:
            seeding = _Seeding(out, grid, cells, max_seeds, budget_s, started, jobs,
                               retry_failed, added, counts)
        try:
            _run_cells(out, grid, todo, jobs, executor, scheduler, progress, counts, seeding)
            if seeding is not None:
                cells = seeding.finish()
                rounds = seeding.rounds
            tables = aggregate(out, grid, cells)
        except KeyboardInterrupt:
            interrupted = True  # the executor has stopped its cells; record what finished
            with _uninterruptible():
                if seeding is not None:
                    cells = seeding.finish()
                    rounds = seeding.rounds
                tables = aggregate(out, grid, cells)
        failed = [c.id for c in cells if is_failed(out, c)]
        states = list(first.values())
        report = SweepReport(out, len(cells), counts["ran"], states.count("done"),
                             states.count("failed-before"), states.count("invalid"), failed,
                             time.monotonic() - started, tables, rounds,
                             unfinished=counts["todo"] - counts["ran"],
                             failed_now=counts["failed"])
        if interrupted:
            raise SweepInterrupted(report)
        return report


def _task(out: Path, grid: Grid, cell: Cell) -> executors.Task:
    return executors.Task(cell, cell_dir(out, cell), out / "logs" / f"{cell.id}.stderr",
                          grid.timeout_s)


def _run_cells(out: Path, grid: Grid, todo: list[Cell], jobs: int, executor: str,
               scheduler: str | None, progress: bool | None, counts: dict,
               seeding: "_Seeding | None" = None) -> None:
    """Run cells on the executor, longest first; record each outcome and count
    it in counts["ran"] and counts["failed"]. seeding: an adaptive sweep's
    added seeds, judged point by point as its cells end; their cells run
    next."""
    from tqdm import tqdm

    todo = sorted(todo, key=lambda c: c.predicted_bytes, reverse=True)  # stable
    tasks = [_task(out, grid, c) for c in todo]
    first = seeding.start(todo) if seeding is not None else []
    tasks = [_task(out, grid, c) for c in first] + tasks
    if not tasks:
        return
    bar = tqdm(total=len(tasks), unit="cell", disable=None if progress is None else not progress,
               desc=f"sweep {grid.name}", file=sys.stderr)
    # no terminal (a log, a batch job): a line a minute instead of the bar
    lines = (ProgressLines(f"sweep {grid.name}", len(tasks), "cells done",
                           postfix=lambda: f"{counts['failed']} failed").start()
             if bar.disable and wants_lines(progress) else None)

    def done(outcome: executors.Outcome) -> None:
        if outcome.error is None:
            clear_failure(out, outcome.cell)
        else:
            counts["failed"] += 1
            record_failure(out, outcome.cell, outcome.error, outcome.detail)
        counts["ran"] += 1
        bar.set_postfix_str(f"{counts['failed']} failed", refresh=False)
        bar.update(1)
        if lines is not None:
            lines.update(1)
        if seeding is None:
            return None
        more = seeding.ended(outcome.cell)
        if more:
            bar.total += len(more)
            bar.refresh()
            if lines is not None:
                lines.total += len(more)
        return [_task(out, grid, c) for c in more]

    try:
        if executor == "local":
            executors.run_local(tasks, jobs, done)
        else:
            executors.run_dask(tasks, jobs, scheduler, done)
    finally:
        bar.close()
        if lines is not None:
            lines.close()


class _Seeding:
    """An adaptive sweep's added seeds, point by point as its cells end (the
    module's doc): start() and ended() return the cells to run next,
    finish() the sweep's cells in the order the rounds would have added them."""

    def __init__(self, out: Path, grid: Grid, cells: list[Cell], max_seeds: int,
                 budget_s: float | None, started: float, jobs: int, retry_failed: bool,
                 added: set[str], counts: dict) -> None:
        self.out, self.grid, self.max_seeds, self.budget_s = out, grid, max_seeds, budget_s
        self.started, self.jobs, self.retry_failed = started, jobs, retry_failed
        self.added, self.counts = added, counts
        self.keys = _point_keys(grid)
        self.given = list(cells)        # the grid's cells and those added before (--resume)
        self.cells = list(cells)        # and those added now, in the order added
        self.points: dict[tuple, list[Cell]] = {}
        for cell in cells:
            self.points.setdefault(_point_of(cell, self.keys), []).append(cell)
        self.left: dict[tuple, int] = {}    # a point's cells running or waiting
        self.new: list[Cell] = []       # the cells added now, in the order added
        self.seeds_added: dict[tuple, int] = {}
        self.over_budget: set[tuple] = set()
        self.walls: dict[str, float | None] = {}   # finished cells' (_cell_wall_s)

    @property
    def rounds(self) -> int:
        """The rounds of seeds the round-by-round sweep would have run."""
        return 1 + max(self.seeds_added.values(), default=0)

    def start(self, todo: list[Cell]) -> list[Cell]:
        """The added cells of the points that have none to run (all ended
        before: --resume); todo: the cells about to run."""
        for cell in todo:
            key = _point_of(cell, self.keys)
            self.left[key] = self.left.get(key, 0) + 1
        more: list[Cell] = []
        for key in sorted(self.points, key=str):
            if not self.left.get(key):
                more += self._judge(key)
        return more

    def ended(self, cell: Cell) -> list[Cell]:
        """A cell ended (finished or failed): its point's next seed, if every
        cell of the point has ended and its verdict is still undecided."""
        key = _point_of(cell, self.keys)
        self.left[key] -= 1
        return self._judge(key) if not self.left[key] else []

    def _judge(self, key: tuple) -> list[Cell]:
        import time

        while True:
            own = self.points[key]
            if not any(is_done(self.out, c) for c in own):
                return []   # nothing measured: no verdict (as in the grid's tables)
            judged = compare(self.out, self.grid, own).get("deltas_mean")
            if judged is None:
                return []
            extra = more_seeds(self.grid, own, judged, self.max_seeds)
            if not extra:
                return []
            undecided = undecided_points(self.grid, judged)
            if self.budget_s is not None:
                left_s = self.budget_s - (time.monotonic() - self.started)
                extra, left_out = within_budget(self.out, self.grid, own, extra,
                                                left_s - self._backlog_s() / max(1, self.jobs),
                                                self.jobs, undecided, self.max_seeds)
                if left_out:
                    self.over_budget.add(key)
                    return []
            self.seeds_added[key] = self.seeds_added.get(key, 0) + 1
            self.new += extra
            own += extra
            self.cells += extra
            self.added |= {c.id for c in extra}
            write_cells(self.out, self.grid, self.cells, self.added)
            seed = dict(extra[0].point)[SEED_AXIS]
            where = ", ".join(f"{k}={v}" for k, v in zip(self.keys, key))
            print(f"sweep {self.grid.name}: {where}: undecided, seed {seed} added",
                  file=sys.stderr, flush=True)
            todo = [c for c in extra if cell_state(self.out, c, self.retry_failed) == "run"]
            if todo:
                self.counts["todo"] += len(todo)
                self.left[key] = len(todo)
                return todo
            # nothing to run (finished before, or invalid): judge the point again

    def _backlog_s(self) -> float:
        """The cells running or waiting, in seconds of one core: each at its
        point's mean cell wall time so far (else the sweep's)."""
        walls: dict[tuple, list[float]] = {}
        for key, own in self.points.items():
            for cell in own:
                if self.walls.get(cell.id) is None:   # not finished when last asked
                    self.walls[cell.id] = _cell_wall_s(self.out, cell)
            walls[key] = [self.walls[c.id] for c in own if self.walls[c.id] is not None]
        every = [w for ws in walls.values() for w in ws]
        default = sum(every) / len(every) if every else 0.0
        return sum(n * (sum(walls[k]) / len(walls[k]) if walls[k] else default)
                   for k, n in self.left.items() if n)

    def finish(self) -> list[Cell]:
        """The sweep's cells: the grid's, then the added ones (before and now)
        as the rounds would have added them: by round (a point's k-th added
        seed is in round k + 1), then point (more_seeds' order), then arm.
        sweep.json is rewritten so, for --resume: an interrupted sweep
        resumed ends with the cells, in order, of one never interrupted."""
        if self.over_budget:
            n = len(self.over_budget)
            print(f"sweep {self.grid.name}: budget: {n} undecided point{'s' if n != 1 else ''} "
                  f"got no more seeds (the {self.budget_s / 60:.0f} min budget)",
                  file=sys.stderr, flush=True)
        extra = [c for c in self.given if c.id in self.added] + self.new
        added_seeds: dict[tuple, set] = {}
        for cell in extra:
            added_seeds.setdefault(_point_of(cell, self.keys), set()).add(
                dict(cell.point)[SEED_AXIS])

        def order(cell: Cell) -> tuple[int, str]:
            key = _point_of(cell, self.keys)
            seed = dict(cell.point)[SEED_AXIS]
            return sum(s <= seed for s in added_seeds[key]), str(key)

        # stable: a seed's cells keep their arms' order
        cells = [c for c in self.given if c.id not in self.added] + sorted(extra, key=order)
        if self.new:
            write_cells(self.out, self.grid, cells, self.added)
        return cells
