"""What a boundary search would do, for `harness check` and the free-space
check before it runs: the cells of the range's ends, the probes per search
at most, and the cost's bounds (harness.sweeps.searching runs it)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.tables import SEED_AXIS
from harness.sweeps import boundary
from harness.sweeps.cells import Cell
from harness.sweeps.grid import Grid, arm_names, make_cell
from harness.sweeps.searching import _value, search_points, span


@dataclass(frozen=True)
class SearchPlan:
    """What a search grid would do, for `harness check`: the cells of the
    range's ends with their first seeds (every search probes the low end
    first, the high end when its bracket reaches it), the probes per search
    at most, and the cost's bounds in bytes sent (harness.sweeps.cost)."""

    end_cells: list[Cell]
    most_probes: int
    least_bytes: float      # the low end only, first seeds
    most_bytes: float       # every search all its probes, max_seeds each, none shared


def plan_search(grid: Grid) -> SearchPlan:
    spec = grid.search
    first = list(dict(grid.axes)[SEED_AXIS])
    ends = [make_cell(grid, (*p, (spec.field, _value(spec, v)), (SEED_AXIS, s)), a)
            for p in search_points(grid) for v in (spec.lo, spec.hi) for s in first
            for a in arm_names(grid)]
    low_end = _value(spec, spec.lo)
    least = sum(c.predicted_bytes for c in ends if dict(c.point)[spec.field] == low_end)
    probes = boundary.most_probes(span(grid))
    # the ends are shared by the thresholds; the halvings may not be
    per_seed = sum(c.predicted_bytes for c in ends) / max(1, len(first)) / 2   # the ends' mean
    most = (2 + len(spec.thresholds) * (probes - 2)) * len(search_points(grid)) * \
        max(spec.max_seeds, len(first)) * per_seed / max(1, len(search_points(grid)))
    return SearchPlan(ends, probes, least, most)
