"""Running a boundary search (a grid with [search]): a sweep whose points
are chosen as it goes.

For each point of the grid's other axes and each threshold, a search
(harness.sweeps.boundary.next_probe) asks for probes: one value of the searched
field. A probe's cells are the point with that value, per seed and arm,
made and named like a sweep's (harness.sweeps.grid.make_cell: the digest of the
resolved scenario), so searches that probe the same value share its cells,
and a resumed search finds them done. A probe is judged with its first k
seeds (the grid's seed axis, then one more at a time) until its slowdown
interval is on one side of the threshold or it has search.max_seeds: the
judgement at k seeds uses exactly those seeds, whichever search ran more,
so the decisions do not depend on the order cells end in (-j) and a re-run
re-derives them.

The cells run on the sweep's executors through harness.sweeps.sweeping's cell
runner: as each ends, the searches waiting on it move on and their next
cells run at once. The sweep directory is a sweep's (harness.sweeps.sweepdir:
sweep.json lists every cell run, --resume), plus boundary.parquet (one row
per point and threshold), probes.parquet (every probe in the order each
search made it) and the figure its caller draws (harness.usecases.boundary:
boundary.png), before the directory's lock is let go.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from harness.analysis import stats
from harness.sweeps import boundary
from harness.sweeps.aggregate import _run_tables, aggregate
from harness.sweeps.boundary import UNDECIDED, Crossing, Observation, Range
from harness.analysis.summary import point_value
from harness.sweeps.cells import Cell
from harness.config.scenario import ConfigError
from harness.sweeps.grid import Grid, arm_names, make_cell
from harness.analysis.run_changes import iteration_change
from harness.sweeps.sweepdir import (SweepError, cell_dir, cell_state, is_done, locked, prepare_dir,
                              write_atomic, write_cells)
from harness.analysis.tables import SEED_AXIS

BOUNDARY_TABLE, PROBES_TABLE, FIGURE_STEM = "boundary.parquet", "probes.parquet", "boundary"


@dataclass
class _Search:
    """One point's search for one threshold, and where it stands."""

    point: tuple[tuple[str, Any], ...]   # the other axes' fields and values
    threshold: float
    history: list[Observation] = field(default_factory=list)
    seeds_used: list[int] = field(default_factory=list)   # per probe, as judged
    waiting: tuple[float, int] | None = None   # the probe (value, seeds) it waits on
    crossing: Crossing | None = None


@dataclass(frozen=True)
class BoundaryReport:
    out: Path
    table: pd.DataFrame        # boundary.parquet
    probes: pd.DataFrame       # probes.parquet
    cells: int                 # cells the searches used
    ran: int                   # cells run now
    failed: int                # of the cells used, failed (now or before)
    cpu_s: float               # simulation CPU seconds of every cell used
    wall_s: float


def search_points(grid: Grid) -> list[tuple[tuple[str, Any], ...]]:
    """The points searched: every combination of the axes but the seed."""
    import itertools

    axes = [(f, v) for f, v in grid.axes if f != SEED_AXIS]
    return [tuple(zip([f for f, _ in axes], values))
            for values in itertools.product(*(v for _, v in axes))]


def span(grid: Grid) -> Range:
    s = grid.search
    return Range(s.lo, s.hi, s.tolerance, s.integral, s.spacing == "log", s.max_undecided)


def _value(spec, value: float) -> float | int:
    """A probe's value as its cells' scenario takes it: an integer field's
    an int, another's rounded (boundary.canonical), so that two values equal
    but for floating-point rounding name the same cells."""
    return int(value) if spec.integral else boundary.canonical(value)


def probe_seeds(first: list[int], k: int) -> list[int]:
    """A probe's first k seeds: the seed axis's, then one more at a time."""
    extra = [max(first) + i for i in range(1, k - len(first) + 1)]
    return (first + extra)[:k]


def probe_values(grid: Grid) -> list[float | int]:
    """Values a search's probes take, as their cells take them (_value): the
    range's ends and, between them, its quartiles (geometric with log
    spacing; whole numbers, as bisection makes them, for an integer field).
    What check_search checks before anything runs."""
    s = span(grid)
    if s.log:
        inner = [s.lo * (s.hi / s.lo) ** q for q in (0.25, 0.5, 0.75)]
    else:
        inner = [s.lo + (s.hi - s.lo) * q for q in (0.25, 0.5, 0.75)]
    if s.integral:
        inner = [math.floor(v) for v in inner]
    values = [_value(grid.search, v) for v in (s.lo, *inner, s.hi)]
    return list(dict.fromkeys(values))


def _point_text(point: tuple) -> str:
    return ", ".join(f"{f} = {v}" for f, v in point)


def check_search(grid: Grid) -> None:
    """ConfigError, before anything runs, unless every cell a search of
    `grid` may ask for is valid, as `harness check` judges a grid's cells
    (make_cell): at every point of the axes, for the reference and the
    searched arm, the probes' values (probe_values) with the first seed, and
    the seeds a probe may add up to max_seeds; each with a training job (the
    slowdown is the training's), and the range's ends different simulations
    (a field the scenario does not use, such as the background's load with
    the background off, would search nothing)."""
    from harness.config.scenario import apply_values, scenario_from_dict

    spec = grid.search
    first = list(dict(grid.axes)[SEED_AXIS])
    seeds = probe_seeds(first, max(spec.max_seeds, len(first)))
    for seed in seeds:   # the seed's own range first: a bad one fails every cell
        try:
            scenario_from_dict(apply_values(grid.base, [(["seed"], seed)]))
        except ConfigError as e:
            if e.field == SEED_AXIS:
                _seed_error(grid, first, seed, str(e))
    values = probe_values(grid)
    arms = [grid.reference, spec.arm]
    cells = {(p, a): [make_cell(grid, (*p, (spec.field, v), (SEED_AXIS, first[0])), a)
                      for v in values]
             for p in search_points(grid) for a in arms}
    for (point, arm), row in cells.items():
        _check_values(grid, point, arm, values, row, cells)
    point = search_points(grid)[0]
    for seed in seeds[1:]:
        for arm in arms:
            cell = make_cell(grid, (*point, (spec.field, values[0]), (SEED_AXIS, seed)), arm)
            if cell.scenario is None:
                _seed_error(grid, first, seed, cell.error)


def _seed_error(grid: Grid, first: list[int], seed: int, error: str) -> None:
    """A seed a probe takes makes an invalid cell: the seed axis's, or one a
    probe adds up to max_seeds."""
    added = seed not in first
    raise ConfigError("search.max_seeds" if added else "axes.seed", f"seed {seed}, which a "
                      "probe " + (f"reaches with max_seeds = {grid.search.max_seeds} (the seeds "
                                  f"after the seed axis's largest, {max(first)})" if added
                                  else "starts with") + f", makes an invalid cell: {error}")


def _check_values(grid: Grid, point: tuple, arm: str, values: list, row: list[Cell],
                  cells: dict) -> None:
    """One point and arm of check_search: which input an invalid cell is
    blamed on (the range's end, a value between, the field, the axes or the
    arm), the training job, the ends' digests."""
    spec = grid.search
    at = f" at {_point_text(point)}" if point else ""
    bad = [(v, c) for v, c in zip(values, row) if c.scenario is None]
    if bad:
        if len(bad) < len(row):   # some values: an end of the range, or one between
            ends = {values[0]: "search.lo", values[-1]: "search.hi"}
            value, cell = next(((v, c) for v, c in bad if v in ends), bad[0])
            where, what = ends.get(value, "search"), "a value the search probes"
        else:   # every value: the field itself, this arm or this point
            value, cell = bad[0]
            valid = {k for k, r in cells.items() if any(c.scenario is not None for c in r)}
            where = ("search.field" if not valid else f"arms.{arm}"
                     if (point, _other_arm(grid, arm)) in valid else "axes")
            what = "as at every value the search probes"
        raise ConfigError(where, f"{spec.field} = {value:g}{at} ({what}; arm {arm!r}) makes "
                          f"an invalid cell, which `harness check` lists: {cell.error}")
    if _simulated(row[0]) == _simulated(row[-1]):
        raise ConfigError("search.field", f"{spec.field} changes nothing simulated{at} (arm "
                          f"{arm!r}): ns-3 would build the same scenario at {values[0]:g} and "
                          f"{values[-1]:g} (the scenario does not use it), so the search "
                          "would measure nothing; allowed: a field the scenario uses")
    for value, cell in zip(values, row):
        if not any(job.enabled for job in cell.scenario.jobs):
            raise ConfigError("axes" if point else "search.field",
                              f"arm {arm!r} has no training job{at}, {spec.field} = {value:g} "
                              "(training.enabled is false there): a search measures the "
                              "training slowdown at every point it probes; allowed: axes and "
                              "a range that keep training on")


def _simulated(cell: Cell) -> list[str]:
    """What ns-3 is told to build for a cell: its recipe (harness.engine.recipe)
    but for the comment naming the scenario's digest."""
    from harness.engine import recipe
    from harness.engine.planning import plan

    return [line for line in recipe.text(plan(cell.scenario)).splitlines()
            if not line.startswith("#")]


def _other_arm(grid: Grid, arm: str) -> str:
    """The other of the two arms a search compares."""
    return grid.search.arm if arm == grid.reference else grid.reference


def check_resume(out: Path, grid: Grid, resume: bool) -> None:
    """--resume continues a search only with the [search] it started with
    (the tables would be replaced by another search's while grid.toml shows
    the old one): a changed field is named, like a changed grid."""
    from harness.config.scenario import parse_toml
    from harness.config.schema.grid import Search

    stored = out / "grid.toml"
    if not resume or not (out / "sweep.json").is_file() or not stored.is_file():
        return
    try:
        old = parse_toml(stored.read_text(encoding="utf-8"), stored, "grid").get("search")
        old = None if old is None else Search.model_validate(old)
    except (OSError, UnicodeDecodeError, ValueError, ConfigError) as e:
        raise SweepError(f"{stored} cannot be read ({' '.join(str(e).split())[:120]}); start "
                         "the search in a new directory") from None
    new = Search.model_validate(parse_toml(grid.text, grid.path, "grid")["search"])
    if old is None:
        raise SweepError(f"search: {out} holds a sweep, not a search (its grid.toml has no "
                         "[search]); start the search in a new directory")
    for key in Search.model_fields:
        was, now = getattr(old, key), getattr(new, key)
        if was != now:
            raise SweepError(f"search.{key}: changed since {out} was started (was {was!r}, "
                             f"now {now!r}); resume with the [search] it started with, or "
                             "start it in a new directory")


class Searches:
    """Every search of a grid, moved on as cells end: start() and ended()
    return the cells to run next (harness.sweeps.sweeping._run_cells' seeding)."""

    def __init__(self, out: Path, grid: Grid, retry_failed: bool, counts: dict) -> None:
        self.out, self.grid, self.spec = out, grid, grid.search
        self.retry_failed, self.counts = retry_failed, counts
        self.span = span(grid)
        self.first_seeds = list(dict(grid.axes)[SEED_AXIS])
        self.most_seeds = max(self.spec.max_seeds, len(self.first_seeds))
        self.arms = arm_names(grid)
        self.searches = [_Search(p, t) for p in search_points(grid)
                         for t in self.spec.thresholds]
        self.cells: dict[tuple, Cell] = {}    # (point, value, seed, arm) -> its cell
        self.ended_ids: set[str] = set()      # done, failed or invalid
        self.running: set[str] = set()

    def seeds(self, k: int) -> list[int]:
        return probe_seeds(self.first_seeds, k)

    def _cell(self, point: tuple, value: float, seed: int, arm: str | None) -> Cell:
        value = _value(self.spec, value)     # two searches' equal values share cells
        key = (point, value, seed, arm)
        if key not in self.cells:
            full = (*point, (self.spec.field, value), (SEED_AXIS, seed))
            cell = make_cell(self.grid, full, arm)
            self.cells[key] = cell
            # done before (--resume), invalid or failed before: it has ended already
            if cell_state(self.out, cell, self.retry_failed) != "run":
                self.ended_ids.add(cell.id)
        return self.cells[key]

    def probe_cells(self, point: tuple, value: float, k: int) -> list[Cell]:
        return [self._cell(point, value, s, a) for s in self.seeds(k) for a in self.arms]

    def start(self, todo: list[Cell]) -> list[Cell]:
        more: list[Cell] = []
        for search in self.searches:
            more += self._advance(search)
        return more

    def ended(self, cell: Cell) -> list[Cell]:
        self.ended_ids.add(cell.id)
        self.running.discard(cell.id)
        more: list[Cell] = []
        for search in self.searches:
            if search.waiting is not None:
                value, k = search.waiting
                if cell.id in {c.id for c in self.probe_cells(search.point, value, k)}:
                    more += self._advance(search)
        return more

    def _advance(self, search: _Search) -> list[Cell]:
        """Move a search on until it waits for cells to run, or ends; the
        cells to run that are not running yet."""
        while search.crossing is None:
            if search.waiting is None:
                step = boundary.next_probe(self.span, search.threshold, search.history)
                if isinstance(step, Crossing):
                    search.crossing = step
                    self._say(search, f"{self._status(step)}")
                    return []
                search.waiting = (step, len(self.first_seeds))
            value, k = search.waiting
            cells = self.probe_cells(search.point, value, k)
            pending = [c for c in cells if c.id not in self.ended_ids]
            if pending:
                new = [c for c in pending if c.id not in self.running]
                self.running |= {c.id for c in new}
                self.counts["todo"] += len(new)
                return new
            seen = self.judge(search.point, value, k, search.threshold)
            # too few pairs or straddling: one more seed; no measurement at all
            # (failed cells) would fail again: the probe stays undecided
            if (seen.side == UNDECIDED and k < self.most_seeds
                    and math.isfinite(seen.change)):
                search.waiting = (value, k + 1)
                continue
            search.history.append(seen)
            search.seeds_used.append(k)
            search.waiting = None
            self._say(search, f"{self.spec.field}={value:g}: {seen.side} "
                      f"({_interval_text(seen)}, {k} seed{'s' if k != 1 else ''})")
        return []

    def judge(self, point: tuple, value: float, k: int, threshold: float) -> Observation:
        """A probe with its first k seeds: the compared arm's paired
        iteration-time change against the reference (harness.analysis.stats) and its
        side of the threshold."""
        reference, arm = self.grid.reference, self.spec.arm
        ref_runs, arm_runs = [], []
        for seed in self.seeds(k):
            r, a = self._cell(point, value, seed, reference), self._cell(point, value, seed, arm)
            if is_done(self.out, r) and is_done(self.out, a):
                ref_runs.append(_run_tables(self.out, r))
                arm_runs.append(_run_tables(self.out, a))
        iv = iteration_change(ref_runs, arm_runs, (*point, value, arm))
        return Observation(value, boundary.side(iv.low, iv.high, threshold), iv.change,
                           iv.low, iv.high, len(ref_runs))

    def _say(self, search: _Search, what: str) -> None:
        where = ", ".join(f"{f.rsplit('.', 1)[-1]}={v}" for f, v in search.point)
        print(f"boundary {self.grid.name}: {where + ', ' if where else ''}"
              f"{100 * search.threshold:g} %: {what}", file=sys.stderr, flush=True)

    def _status(self, c: Crossing) -> str:
        if c.status == boundary.BRACKETED:
            return f"crossing ~{c.estimate:g} in [{c.low:g}, {c.high:g}]"
        if c.status == boundary.UNDECIDED_BETWEEN:
            return f"undecided {_between(c.low, c.high)}"
        if c.status == boundary.BELOW_RANGE:
            return f"below the range: above the threshold already at {self.spec.lo:g}"
        return f"above the range: below the threshold still at {self.spec.hi:g}"

    def used(self) -> list[Cell]:
        """The cells the searches asked for, in a fixed order (point, value,
        seed, arm), whatever order they ran in: sweep.json and the tables."""
        order = {p: i for i, p in enumerate(search_points(self.grid))}
        arm_order = {a: i for i, a in enumerate(self.arms)}
        keys = sorted(self.cells, key=lambda k: (order[k[0]], k[1], k[2], arm_order[k[3]]))
        return [self.cells[k] for k in keys]


def _between(a: float, b: float) -> str:
    """Where an undecided crossing lies, from the decided probes around it."""
    if math.isfinite(a) and math.isfinite(b):
        return f"between {a:g} and {b:g}"
    if math.isfinite(a):
        return f"above {a:g}"
    if math.isfinite(b):
        return f"below {b:g}"
    return "anywhere (no probe decided)"


def _interval_text(o: Observation) -> str:
    if o.change == math.inf:
        return "stalled"
    if not math.isfinite(o.change):
        return "no measurement"
    if math.isnan(o.low):
        return f"{100 * o.change:+.1f} %, {stats.TOO_FEW}"
    return f"{100 * o.change:+.1f} % [{100 * o.low:+.1f}, {100 * o.high:+.1f}]"


def _cpu_s(out: Path, cell: Cell) -> float:
    """A finished cell's simulation CPU seconds (its manifest); 0 otherwise."""
    try:
        manifest = json.loads((cell_dir(out, cell) / "manifest.json").read_text())
        return float(manifest.get("simulation_cpu_s") or 0.0)
    except (OSError, ValueError, TypeError):
        return 0.0


def tables(searches: Searches) -> tuple[pd.DataFrame, pd.DataFrame]:
    """boundary.parquet: per point and threshold, how its search ended, the
    crossing estimate, the bracket, the band of undecided probes in it, its
    probes, seeds and the simulation CPU seconds of their cells;
    probes.parquet: every probe of every search."""
    spec, out = searches.spec, searches.out
    rows, probe_rows = [], []
    # the cells in their fixed order (used()), so a run and its replay sum
    # each search's CPU to the same float
    ordered = searches.used()

    def shown(value: float) -> float | int:     # as its cells take it; NaN: none
        return _value(spec, value) if math.isfinite(value) else value

    for s in searches.searches:
        labels = {f: point_value(v) for f, v in s.point}
        c = s.crossing
        used: set[str] = set()
        for step, (o, k) in enumerate(zip(s.history, s.seeds_used), 1):
            used |= {cell.id for cell in searches.probe_cells(s.point, o.value, k)}
            probe_rows.append({**labels, "threshold": s.threshold, "probe": step,
                               spec.field: shown(o.value), "seeds": k, "change": o.change,
                               "change_low": o.low, "change_high": o.high, "side": o.side})
        cpu = sum(_cpu_s(out, cell) for cell in ordered if cell.id in used)
        low, high = (c.low, c.high) if c else (math.nan, math.nan)
        band_low, band_high = map(shown, boundary.band(s.history, low, high))
        low, high = shown(low), shown(high)
        rows.append({**labels, "threshold": s.threshold, "field": spec.field,
                     "status": c.status if c else "unfinished",
                     "crossing": c.estimate if c else math.nan, "low": low, "high": high,
                     "band_low": band_low, "band_high": band_high,
                     "probes": len(s.history), "seeds": sum(s.seeds_used), "cpu_s": cpu})
    fields = [f for f, _ in searches.grid.axes if f != SEED_AXIS]
    table = pd.DataFrame(rows, columns=[*fields, "threshold", "field", "status", "crossing",
                                        "low", "high", "band_low", "band_high", "probes",
                                        "seeds", "cpu_s"])
    probes = pd.DataFrame(probe_rows, columns=[*fields, "threshold", "probe", spec.field,
                                               "seeds", "change", "change_low", "change_high",
                                               "side"])
    return table, probes


def as_sweep(grid: Grid, cells: list[Cell]) -> Grid:
    """The grid as the sweep it became: the searched field an axis of the
    values probed (before the seed), for the sweep's own tables."""
    values = tuple(sorted({dict(c.point)[grid.search.field] for c in cells}))
    axes = [(f, v) for f, v in grid.axes if f != SEED_AXIS]
    seeds = tuple(sorted({dict(c.point)[SEED_AXIS] for c in cells})) or \
        dict(grid.axes)[SEED_AXIS]
    return replace(grid, axes=(*axes, *([(grid.search.field, values)] if values else []),
                               (SEED_AXIS, seeds)))


def run_boundary(grid: Grid, out: Path, jobs: int = 1, executor: str = "local",
                 scheduler: str | None = None, resume: bool = False,
                 retry_failed: bool = False, progress: bool | None = None,
                 draw: Callable[[Path, Grid, pd.DataFrame, pd.DataFrame], None] | None = None,
                 checked: bool = False) -> BoundaryReport:
    """Run every search of a [search] grid to its end in the sweep directory
    `out`; write the sweep's tables, boundary.parquet and probes.parquet, then
    call draw(out, grid, table, probes) (the figure: harness.usecases.boundary)
    while the directory is still locked. Ctrl-C (KeyboardInterrupt) stops the
    running cells (unfinished: --resume runs them), keeps sweep.json and
    re-raises. The cells a search may ask for are checked first (check_search;
    checked: the caller did), and a resumed directory's [search] (check_resume)."""
    import time

    from harness.sweeps.sweeping import _run_cells

    if grid.search is None:
        raise ConfigError("grid", f"{grid.name} has no [search] table; `harness sweep` runs it")
    if not checked:
        check_search(grid)
    started = time.monotonic()
    with locked(out):
        # --resume: sweep.json's cells must be this grid's (check_dir), and
        # its [search] this one's; the searches make the cells again as they
        # ask for them, and find them done
        check_resume(out, grid, resume)
        prepare_dir(out, grid, [], resume)
        counts = {"ran": 0, "failed": 0, "todo": 0}
        searches = Searches(out, grid, retry_failed, counts)
        try:
            _run_cells(out, grid, [], jobs, executor, scheduler, progress, counts, searches)
        finally:
            cells = searches.used()
            # the searched field an axis: `harness plot` and `report` read it as a sweep
            write_cells(out, as_sweep(grid, cells), cells, {c.id for c in cells})
        aggregate(out, as_sweep(grid, cells), cells)
        table, probes = tables(searches)
        write_atomic(out / BOUNDARY_TABLE, table.to_parquet(index=False))
        write_atomic(out / PROBES_TABLE, probes.to_parquet(index=False))
        if draw is not None:
            draw(out, grid, table, probes)
    failed = sum((out / "failed" / f"{c.id}.json").is_file() for c in cells)
    return BoundaryReport(out, table, probes, len(cells), counts["ran"], failed,
                          sum(_cpu_s(out, c) for c in cells), time.monotonic() - started)
