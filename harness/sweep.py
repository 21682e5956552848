"""Operating-boundary sweeps: a grid file -> cells -> runs -> tidy tables.

run_sweep runs a grid's cells (harness.grid: the grid file, its cells) in a
sweep directory (harness.sweepdir: its files, the state of each cell, one
sweep at a time) on an executor (harness.executors: local or Dask), longest
first (harness.cost), adds seeds where a verdict is undecided
(harness.adaptive: [adaptive], the budget) and writes the tables
(harness.aggregate: summary, deltas, deltas_mean).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from harness import executors
from harness import reference as reference_results
from harness.adaptive import more_seeds, undecided_points, within_budget
from harness.aggregate import aggregate
from harness.cells import Cell
from harness.config import ConfigError
from harness.grid import Grid, check_adaptive, expand
from harness.sweepdir import (cell_dir, cell_state, clear_failure, is_failed, locked,
                              prepare_dir, record_failure, write_cells)
# the API's promise (harness.api.sweep): harness.sweep.SweepError
from harness.sweepdir import SweepError  # noqa: F401


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C: running cells were stopped (they are unfinished, not failed) and
    the tables of the finished ones written; `report` says what finished."""

    def __init__(self, report: "SweepReport | None"):
        super().__init__()
        self.report = report


@contextlib.contextmanager
def _uninterruptible():
    """A second Ctrl-C while the tables of an interrupted sweep are written
    would leave them unwritten: ignore it for that second (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
    rounds: int = 1        # adaptive sweeps: rounds of seeds run
    unfinished: int = 0    # left to run (an interrupted sweep)
    failed_now: int = 0    # of `ran`


def run_sweep(grid: Grid, out: Path, jobs: int = 1, executor: str = "local",
              scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
              progress: bool | None = None, cells: list[Cell] | None = None,
              max_seeds: int | None = None, budget_s: float | None = None,
              reference: Path | None = None) -> SweepReport:
    """Run every cell not yet done, record failures, aggregate the tables.
    cells: expand(grid), when the caller has it already. max_seeds: add seeds
    to undecided points up to this many (default: the grid's [adaptive]);
    budget_s: the added rounds' seeds only where they fit in this wall time
    from the sweep's start (default: the grid's [adaptive] budget).
    reference: reference results (harness.reference) standing in for the
    cells of the grid's smallest scale, which then do not run.
    Ctrl-C (KeyboardInterrupt) stops the running cells, which stay unfinished
    (not failed: --resume runs them), writes the tables of what finished and
    raises SweepInterrupted carrying the report."""
    import time

    if executor not in ("local", "dask"):
        raise ConfigError("--executor", f"unknown executor {executor!r}; allowed: local, dask")
    if executor == "dask" and scheduler is not None:
        executors.check_scheduler(scheduler)  # before the directory is made
    started = time.monotonic()
    base = expand(grid) if cells is None else cells
    max_seeds = grid.max_seeds if max_seeds is None else max_seeds
    budget_s = grid.budget_s if budget_s is None else budget_s
    if max_seeds:
        check_adaptive(dict(grid.axes), grid.reference or
                       next((own[1] for own in grid.point_arms if own), None), "--max-seeds")
    from_reference = (reference_results.check(reference, grid, base)
                      if reference is not None else [])
    with locked(out):  # one sweep at a time in a directory
        cells = prepare_dir(out, grid, base, resume)
        reference_results.install(reference, out, from_reference)
        added = {c.id for c in cells} - {c.id for c in base}
        first = {c.id: cell_state(out, c, retry_failed) for c in cells}
        todo = [c for c in cells if first[c.id] == "run"]
        counts = {"ran": 0, "failed": 0, "todo": len(todo)}
        rounds, interrupted = 1, False
        try:
            _run_cells(out, grid, todo, jobs, executor, scheduler, progress, counts)
            tables = aggregate(out, grid, cells)
            while max_seeds and "deltas_mean" in tables:
                extra = more_seeds(grid, cells, tables["deltas_mean"], max_seeds)
                if extra and budget_s is not None:
                    left_s = budget_s - (time.monotonic() - started)
                    extra, left_out = within_budget(out, grid, cells, extra, left_s, jobs,
                                                    undecided_points(grid, tables["deltas_mean"]),
                                                    max_seeds)
                    if left_out:
                        print(f"sweep {grid.name}: budget: {left_out} undecided point"
                              f"{'s' if left_out != 1 else ''} get no more seeds "
                              f"({max(0.0, left_s) / 60:.1f} min of the {budget_s / 60:.0f} min "
                              "budget left)", file=sys.stderr, flush=True)
                if not extra:
                    break
                rounds += 1
                cells += extra
                added |= {c.id for c in extra}
                write_cells(out, grid, cells, added)
                points = len({json.dumps(c.point, default=str) for c in extra})
                print(f"sweep {grid.name}: round {rounds}: {points} undecided point"
                      f"{'s' if points != 1 else ''} get one more seed", file=sys.stderr, flush=True)
                todo = [c for c in extra if cell_state(out, c, retry_failed) == "run"]
                counts["todo"] += len(todo)
                _run_cells(out, grid, todo, jobs, executor, scheduler, progress, counts)
                tables = aggregate(out, grid, cells)
        except KeyboardInterrupt:
            interrupted = True  # the executor has stopped its cells; record what finished
            with _uninterruptible():
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


def _run_cells(out: Path, grid: Grid, todo: list[Cell], jobs: int, executor: str,
               scheduler: str | None, progress: bool | None, counts: dict) -> None:
    """Run cells on the executor, longest first; record each outcome and count
    it in counts["ran"] and counts["failed"]."""
    from tqdm import tqdm

    todo = sorted(todo, key=lambda c: c.predicted_bytes, reverse=True)  # stable
    tasks = [executors.Task(c, cell_dir(out, c), out / "logs" / f"{c.id}.stderr",
                            grid.timeout_s) for c in todo]
    if not tasks:
        return
    bar = tqdm(total=len(tasks), unit="cell", disable=None if progress is None else not progress,
               desc=f"sweep {grid.name}", file=sys.stderr)

    def done(outcome: executors.Outcome) -> None:
        if outcome.error is None:
            clear_failure(out, outcome.cell)
        else:
            counts["failed"] += 1
            record_failure(out, outcome.cell, outcome.error, outcome.detail)
        counts["ran"] += 1
        bar.set_postfix_str(f"{counts['failed']} failed", refresh=False)
        bar.update(1)

    try:
        if executor == "local":
            executors.run_local(tasks, jobs, done)
        else:
            executors.run_dask(tasks, jobs, scheduler, done)
    finally:
        bar.close()
