"""Adaptive seeding: more seeds where a verdict is undecided, within a budget.

With [adaptive] (or `harness sweep --max-seeds N`), after the grid's seeds
have run, every point whose training verdict is undecided at 95 % (its
slowdown interval spans two colour classes; harness.analysis.stats) gets one more
seed, until every point is decided or has max_seeds (more_seeds;
harness.sweeps.sweeping judges each point as soon as its cells have ended, and runs
its next seed at once: no round waits for its slowest cell).
With a `budget` (wall-clock time from the sweep's start; or `harness sweep
--budget`), a seed is added only where it fits in what is left of it (after
the cells already running or waiting, harness.sweeps.sweeping), each point's cost
being its cells' measured wall time so far: the grid's own cells always run,
the added seeds end in time (within_budget). From each undecided interval,
stats.seeds_to_decide projects the seeds that would decide it
(`seeds_to_decide` in deltas_mean); a point projected to be decided within
max_seeds keeps room for its later seeds. Given several points at once (the
round-by-round rule, as tests/test_async_seeding.py replays it), within_budget takes those
cheapest-to-decide first, the others sharing what is left.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from harness.analysis.summary import none_if_na, point_value
from harness.sweeps.cells import Cell
from harness.sweeps.grid import Grid, arm_names, make_cell
from harness.sweeps.sweepdir import cell_dir
from harness.analysis.tables import SEED_AXIS

from harness.sweeps.adaptive_text import BUDGET_MEANING, SEED_ORDER  # noqa: E402,F401

#: The verdict an adaptive sweep decides: the training slowdown class (the
#: map's colour). The background's changes are reported as significant or
#: not; their heavy tails would take far more seeds to pin down.
DECIDING_METRICS = ("iteration_time",)


def _point_keys(grid: Grid) -> list[str]:
    """The fields that name a point apart from its seed."""
    return [k for k in grid.axis_fields if k != SEED_AXIS]


def _point_of(cell: Cell, keys: list[str]) -> tuple:
    """A cell's point (the `keys` of _point_keys), as a key."""
    point = dict(cell.point)
    return tuple(point_value(point.get(k)) for k in keys)


def undecided_points(grid: Grid, deltas_mean: pd.DataFrame) -> dict[tuple, float]:
    """The points whose training verdict is undecided (harness.analysis.stats), each
    with its projected seeds to decide (the largest over its arms; inf where
    unknown)."""
    keys = _point_keys(grid)
    undecided: dict[tuple, float] = {}
    judged = deltas_mean[deltas_mean["metric"].isin(DECIDING_METRICS)]
    for row in judged.to_dict("records"):
        if not row.get("decided") and row.get("verdict") not in (None, "n/a"):
            key = tuple(none_if_na(row.get(k)) for k in keys)
            projected = row.get("seeds_to_decide")
            projected = math.inf if projected is None or projected != projected else projected
            undecided[key] = max(undecided.get(key, 0.0), float(projected))
    return undecided


def more_seeds(grid: Grid, cells: list[Cell], deltas_mean: pd.DataFrame,
               max_seeds: int) -> list[Cell]:
    """Adaptive sweeps: one more seed (the point's highest + 1), every arm, for
    each point whose training verdict is undecided (harness.analysis.stats) and has
    fewer than max_seeds."""
    keys = _point_keys(grid)
    undecided = undecided_points(grid, deltas_mean)
    seeds: dict[tuple, set] = {}
    template: dict[tuple, tuple] = {}
    for cell in cells:
        key = _point_of(cell, keys)
        seeds.setdefault(key, set()).add(dict(cell.point)[SEED_AXIS])
        template[key] = cell.point
    extra = []
    for key in sorted(undecided, key=str):
        if key not in seeds or len(seeds[key]) >= max_seeds:
            continue
        seed = max(seeds[key]) + 1
        point = tuple((f, seed if f == SEED_AXIS else v) for f, v in template[key])
        extra += [make_cell(grid, point, arm) for arm in arm_names(grid, point)]
    return extra


#: A cell's process start-up and writing, beyond its run's own wall time.
CELL_OVERHEAD_S = 3.0


def _cell_wall_s(out: Path, cell: Cell) -> float | None:
    """A finished cell's wall time (its run's, plus CELL_OVERHEAD_S)."""
    try:
        manifest = json.loads((cell_dir(out, cell) / "manifest.json").read_text())
        return float(manifest["run_wall_s"]) + CELL_OVERHEAD_S
    except (OSError, ValueError, KeyError, TypeError):
        return None


def within_budget(out: Path, grid: Grid, cells: list[Cell], extra: list[Cell], left_s: float,
                  jobs: int, to_decide: dict[tuple, float] | None = None,
                  max_seeds: int | None = None) -> tuple[list[Cell], int]:
    """The added cells (more_seeds) of the points whose new seed fits in
    `left_s` seconds of wall time on `jobs` cores, and how many points were
    left out. A point's cost per seed is the mean over its seeds so far of its
    cells' measured wall time. Points nearest a verdict come first: those
    projected to be decided within max_seeds (`to_decide`: seeds to decide,
    stats.seeds_to_decide), cheapest to decide first, each keeping room for
    the seeds it will still need after this one; then the others, cheapest
    seed first, in what is left."""
    keys = _point_keys(grid)
    per_seed: dict[tuple, dict] = {}
    longest: dict[tuple, float] = {}
    for cell in cells:
        wall = _cell_wall_s(out, cell)
        if wall is not None:
            key = _point_of(cell, keys)
            seeds = per_seed.setdefault(key, {})
            seed = dict(cell.point)[SEED_AXIS]
            seeds[seed] = seeds.get(seed, 0.0) + wall
            longest[key] = max(longest.get(key, 0.0), wall)
    added: dict[tuple, list[Cell]] = {}
    for cell in extra:
        added.setdefault(_point_of(cell, keys), []).append(cell)
    cost = {p: (sum(per_seed[p].values()) / len(per_seed[p]) if p in per_seed else math.inf)
            for p in added}
    # seeds each point still needs after this round's, where it is projected to be decided
    later: dict[tuple, float] = {}
    for p in added:
        projected = (to_decide or {}).get(p, math.inf)
        have = len(per_seed.get(p, {})) + 1
        if (math.isfinite(projected) and math.isfinite(cost[p])
                and (not max_seeds or projected <= max_seeds)):
            later[p] = max(0.0, projected - have)
    order = sorted(added, key=lambda p: (p not in later,
                                         (later[p] + 1) * cost[p] if p in later else cost[p],
                                         str(p)))
    chosen: list[Cell] = []
    used = reserved = slowest = 0.0
    points = 0
    for p in order:
        keep = later.get(p, 0.0) * cost[p]
        # the round takes its cells' total over the cores, or its slowest cell
        if max((used + reserved + cost[p] + keep) / max(1, jobs), slowest,
               longest.get(p, 0.0)) > left_s:
            continue
        used += cost[p]
        reserved += keep
        slowest = max(slowest, longest.get(p, 0.0))
        chosen += added[p]
        points += 1
    return chosen, len(added) - points
