"""What locating every crossing of a boundary search within one map step
costs at the least, against what the search spends: both measured on a model
of the slowdown curve built from cells that maps and searches have run.

    PYTHONPATH=. python -m bench.boundary_oracle MAP_DIR [MORE_DIRS ...]
        [--grid boundary-quick] [--power 0.5 0.8] [--samples 1000] [-o report.json]

MAP_DIR is the map whose simulation CPU the search is held to (`quick` for
`boundary-quick`); all directories given (the map, searches over it, copies
with other first seeds) pool their cells: one cell per (point, searched
value, seed, arm), a cell that two directories ran counted once (cells are
deterministic). The grid file gives the axis, the searched field, the arms,
the range, the thresholds, the tolerance (a map step) and the seeds a probe.

The curve. Per point and searched value with >= 2 seeds pooled: the
training slowdown of the arm against the reference
(harness.analysis.run_changes.iteration_change over every seed), the spread of its
paired iteration changes, the iterations a seed, and the simulation CPU of a
seed (both arms); between the values, each interpolated linearly over
log(value).

The oracle knows the curve. Per point it picks for every threshold a
bracket [a, tolerance x a] around the crossing (or the range's end beyond
which it lies), the cheapest set of probes over the thresholds (brackets may
share an end), and gives each end the seeds with which its 95 % interval
(the harness's Student t over paired iterations) clears the threshold with
probability `power`. It makes no probe to find the crossing and none that
stays undecided: no search costs less. Run "seed by seed", each of its
probes adds a seed (its iterations' changes drawn normal with the curve's
slowdown and spread) until it is decided, as a search's probe does; the
report gives how often every end is decided within the map's CPU.

The search: the harness's own boundary.search, its probes drawn from the
same curve in the same way (a seed at a time up to the grid's max_seeds,
each (value, seed) drawn once per point and shared by its thresholds, as
the runner shares cells), many times over: its mean CPU and how often it
locates every crossing within a step, and within the map's CPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

from harness.analysis import run_changes, stats
from harness.analysis.tables import read_run, read_sweep_record
from harness.sweeps import boundary, searching
from harness.sweeps.grid import load_grid, resolve_grid_file

# the bracket ends the oracle tries: a grid over log2(value) fine enough that
# tolerance x a lands on it again for a tolerance of 2 (24 points an octave)
POINTS_PER_OCTAVE = 24
# seeds a probe of the oracle takes at most, run seed by seed
MOST_SEEDS = 40


@dataclass(frozen=True)
class CurvePoint:
    """The pooled cells of one searched value at one point."""

    value: float
    slowdown: float
    sd: float           # of one paired iteration change
    per_seed: float     # paired iterations a seed
    cpu_s: float        # simulation CPU of a seed, both arms
    seeds: int


class Curve:
    """A point's measured values, interpolated over log(value)."""

    def __init__(self, points: list[CurvePoint]) -> None:
        self.points = sorted(points, key=lambda p: p.value)
        self._x = np.log([p.value for p in self.points])

    @property
    def lo(self) -> float:
        return self.points[0].value

    @property
    def hi(self) -> float:
        return self.points[-1].value

    def at(self, value: float) -> CurvePoint:
        def interp(name: str) -> float:
            return float(np.interp(math.log(value), self._x,
                                   [getattr(p, name) for p in self.points]))
        return CurvePoint(value, interp("slowdown"), interp("sd"), interp("per_seed"),
                          interp("cpu_s"), 0)

    def draw_seed(self, value: float, rng: np.random.Generator) -> np.ndarray:
        """One seed's paired iteration changes at `value`."""
        p = self.at(value)
        return rng.normal(p.slowdown, p.sd, max(1, round(p.per_seed)))


def pooled_cells(dirs: list[Path], axis: str, field: str) -> dict:
    """(axis value, field value, seed, arm) -> cell directory, over all dirs.
    Values are pooled to 6 significant digits: searches before the harness
    rounded probe values one way ran some twice a rounding error apart
    (54.7035275 and 54.7035273), and one such cell a seed is enough."""
    cells = {}
    for d in dirs:
        for c in read_sweep_record(d)["cells"]:
            p = c["point"]
            key = (p[axis], float(f"{float(p[field]):.6g}"), p["seed"], c["arm"])
            cells.setdefault(key, d / "cells" / c["id"])
    return cells


def sweep_cpu(d: Path) -> float:
    """The simulation CPU of every cell a sweep directory lists."""
    return sum(json.loads((d / "cells" / c["id"] / "manifest.json").read_text())
               ["simulation_cpu_s"] for c in read_sweep_record(d)["cells"])


def measured_curves(cells: dict, reference: str, arm: str) -> dict[object, Curve]:
    """axis value -> its Curve, from the values with >= 2 seeds both arms ran."""
    seeds = defaultdict(list)
    for (a, f, seed, name) in cells:
        if name == arm and (a, f, seed, reference) in cells:
            seeds[a, f].append(seed)
    points = defaultdict(list)
    for (a, f), ss in sorted(seeds.items()):
        if len(ss) < 2:
            continue
        refs = [read_run(cells[a, f, s, reference], tables=("iterations",)) for s in ss]
        arms = [read_run(cells[a, f, s, arm], tables=("iterations",)) for s in ss]
        iv = run_changes.iteration_change(refs, arms)
        if not np.isfinite(iv.low):
            continue
        cpu = np.mean([r.manifest["simulation_cpu_s"] + x.manifest["simulation_cpu_s"]
                       for r, x in zip(refs, arms)])
        points[a].append(CurvePoint(f, iv.change, stats.paired_spread(iv.low, iv.high, iv.samples),
                                    iv.samples / len(ss), float(cpu), len(ss)))
    return {a: Curve(p) for a, p in points.items() if len(p) >= 2}


def seeds_to_clear(p: CurvePoint, threshold: float, power: float) -> int:
    """The fewest seeds with which a probe of this true slowdown and spread is
    decided on its side of the threshold with probability `power`: |threshold
    - slowdown| >= (t + z(power)) x sd / sqrt(m), m = seeds x iterations a seed
    (the estimate's own spread besides the interval's half-width)."""
    z = sps.norm.ppf(power)
    for n in range(1, MOST_SEEDS + 1):
        m = n * p.per_seed
        if m < stats.MIN_ITERATION_PAIRS:
            continue
        t = sps.t.ppf(0.5 + stats.CONFIDENCE / 2, m - 1)
        if abs(threshold - p.slowdown) >= (t + z) * p.sd / math.sqrt(m):
            return n
    return MOST_SEEDS


@dataclass
class OracleProbe:
    value: float
    seeds: int                          # with probability `power` enough
    must: list[tuple[float, str]]       # (threshold, side) for each bracket it ends


def _same(x: float, y: float) -> bool:
    return abs(x - y) <= 1e-9 * x


def oracle(curve: Curve, thresholds: list[float], step: float,
           power: float) -> tuple[float, list[tuple], list[OracleProbe]]:
    """The cheapest probes that bracket every threshold's crossing within a
    factor `step` (or beyond the range's end), each end decided with
    probability `power`: (CPU s, each threshold's bracket (a, b), a or b
    None beyond an end, the probes)."""
    lo, hi = curve.lo, curve.hi
    ends = [v for v in lo * 2.0 ** (np.arange(64 * POINTS_PER_OCTAVE) / POINTS_PER_OCTAVE)
            if v * step <= hi * (1 + 1e-9)]
    options = []   # per threshold: [((a, b), {value: seeds})]
    for th in thresholds:
        need = lambda x: seeds_to_clear(curve.at(x), th, power)  # noqa: E731
        opts = [((a, a * step), {a: need(a), a * step: need(a * step)}) for a in ends
                if curve.at(a).slowdown <= th < curve.at(a * step).slowdown]
        if curve.at(lo).slowdown > th:
            opts.append(((None, lo), {lo: need(lo)}))
        if curve.at(hi).slowdown < th:
            opts.append(((hi, None), {hi: need(hi)}))
        options.append(opts or [((None, None), {})])
    best = None
    for choice in np.ndindex(*(len(o) for o in options)):
        probes: dict[float, int] = {}
        for opts, i in zip(options, choice):
            for x, n in opts[i][1].items():
                key = next((y for y in probes if _same(y, x)), x)
                probes[key] = max(probes.get(key, 0), n)
        cost = sum(n * curve.at(x).cpu_s for x, n in probes.items())
        if best is None or cost < best[0]:
            best = (cost, [opts[i][0] for opts, i in zip(options, choice)], probes)
    cost, brackets, probes = best
    plan = [OracleProbe(x, n, []) for x, n in sorted(probes.items())]
    for th, (a, b) in zip(thresholds, brackets):
        for x, side in ((a, stats.BELOW), (b, stats.ABOVE)):
            if x is not None:
                next(p for p in plan if _same(p.value, x)).must.append((th, side))
    return cost, brackets, plan


def oracle_seed_by_seed(curve: Curve, plan: list[OracleProbe],
                        rng: np.random.Generator) -> tuple[float, bool]:
    """The oracle's probes run as a search runs a probe: a seed at a time
    until the interval is on the side the probe must show for every bracket
    it ends. (CPU s, every end decided within MOST_SEEDS)."""
    total, decided = 0.0, True
    for p in plan:
        changes = np.empty(0)
        for n in range(1, MOST_SEEDS + 1):
            changes = np.concatenate([changes, curve.draw_seed(p.value, rng)])
            iv = stats.paired_t_change(changes, n)
            if all(stats.threshold_side(iv.low, iv.high, th) == side for th, side in p.must):
                break
        else:
            decided = False
        total += n * curve.at(p.value).cpu_s
    return total, decided


class ModelCells:
    """One point's probes drawn from its curve as the runner makes them
    (harness.sweeps.searching): the first seeds, then a seed at a time while
    undecided, up to max_seeds; each (value, seed) drawn once and shared by
    the point's searches, as the runner shares cells."""

    def __init__(self, curve: Curve, first: int, max_seeds: int,
                 rng: np.random.Generator) -> None:
        self.curve, self.first, self.max_seeds, self.rng = curve, first, max_seeds, rng
        self.draws: dict[float, list[np.ndarray]] = {}

    def probe(self, value: float, threshold: float) -> boundary.Observation:
        seeds = self.draws.setdefault(boundary.canonical(value), [])
        for k in range(min(self.first, self.max_seeds), self.max_seeds + 1):
            while len(seeds) < k:
                seeds.append(self.curve.draw_seed(value, self.rng))
            iv = stats.paired_t_change(np.concatenate(seeds[:k]), k)
            side = stats.threshold_side(iv.low, iv.high, threshold)
            if side != stats.UNDECIDED:
                break
        return boundary.Observation(value, side, iv.change, iv.low, iv.high, k)

    def cpu_s(self) -> float:
        return sum(len(s) * self.curve.at(v).cpu_s for v, s in self.draws.items())


def within_step(c: boundary.Crossing, step: float) -> bool:
    """A crossing located within one map step: a bracket at most `step` wide
    (whatever its status), or beyond an end of the range decided there."""
    if c.status in (boundary.BELOW_RANGE, boundary.ABOVE_RANGE):
        return True
    return math.isfinite(c.low) and math.isfinite(c.high) and c.high / c.low <= step * (1 + 1e-9)


def search_sample(curves: dict, span: boundary.Range, thresholds: list[float], first: int,
                  max_seeds: int, rng: np.random.Generator) -> tuple[float, int]:
    """Every search of the grid once against the curves, each probe starting
    with `first` seeds: (CPU s, crossings located within a step)."""
    cost, located = 0.0, 0
    for curve in curves.values():
        cells = ModelCells(curve, first, max_seeds, rng)
        for th in thresholds:
            crossing, _ = boundary.search(span, th, lambda v: cells.probe(v, th))  # noqa: B023
            located += within_step(crossing, span.tolerance)
        cost += cells.cpu_s()
    return cost, located


def _bracket_text(a, b) -> str:
    return f"< {b:.0f}" if a is None else f"> {a:.0f}" if b is None else f"[{a:.0f}, {b:.0f}]"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.boundary_oracle",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", type=Path, help="the map first, then any other sweeps")
    p.add_argument("--grid", default="boundary-quick", help="the search's grid file or preset")
    p.add_argument("--power", type=float, nargs="+", default=[0.5, 0.8])
    p.add_argument("--samples", type=int, default=1000, help="samples of each model run")
    p.add_argument("--max-seeds", type=int, help="the search's, instead of the grid's")
    p.add_argument("--max-undecided", type=int, help="the search's, instead of the grid's")
    p.add_argument("-o", "--output", type=Path)
    a = p.parse_args(argv)
    for d in a.dirs:
        if not (d / "sweep.json").is_file():
            p.error(f"{d}: not a sweep directory (no sweep.json)")
        try:
            read_sweep_record(d)
        except ValueError as e:   # CorruptRecordError: a damaged sweep.json, named
            p.error(str(e))
    grid = load_grid(resolve_grid_file(a.grid))
    s, span = grid.search, searching.span(grid)
    max_seeds = s.max_seeds if a.max_seeds is None else a.max_seeds
    if a.max_undecided is not None:
        span = dataclasses.replace(span, max_undecided=a.max_undecided)
    if not span.log:
        p.error(f"{a.grid}: the oracle's brackets are factors: needs spacing = \"log\"")
    axes = [f for f, _ in grid.axes if f != searching.SEED_AXIS]
    if len(axes) != 1:
        p.error(f"{a.grid}: needs exactly one axis besides the seed, has {axes}")
    arm = s.arm or next(n for n in grid.arms if n != grid.reference)
    curves = measured_curves(pooled_cells(a.dirs, axes[0], s.field), grid.reference, arm)
    budget = sweep_cpu(a.dirs[0])
    report = {"map_dir": str(a.dirs[0]), "map_cpu_s": budget, "grid": a.grid,
              "curve": {str(k): [vars(p) for p in c.points] for k, c in curves.items()},
              "oracle": {}}
    print(f"slowdown of {arm} against {grid.reference}, pooled (seeds; CPU s a seed):")
    for k, c in sorted(curves.items(), reverse=True):
        print(f"  {axes[0]} = {k}: " + ", ".join(
            f"{p.value:g}: {p.slowdown:+.2%} ({p.seeds}; {p.cpu_s:.0f})" for p in c.points))
    print(f"\nthe map ({a.dirs[0]}): {budget:,.0f} s")
    rng = np.random.default_rng(1)
    for power in a.power:
        total, plans = 0.0, {}
        print(f"\noracle, each bracket end decided with probability {power:g}:")
        for k, c in sorted(curves.items(), reverse=True):
            cost, brackets, plan = oracle(c, s.thresholds, span.tolerance, power)
            total, plans[k] = total + cost, plan
            seeds = ", ".join(f"{x.value:.0f}: {x.seeds}" for x in plan)
            print(f"  {axes[0]} = {k}: {', '.join(_bracket_text(*b) for b in brackets)}; "
                  f"seeds {seeds}; {cost:,.0f} s")
        runs = [[oracle_seed_by_seed(curves[k], plan, rng) for k, plan in plans.items()]
                for _ in range(a.samples)]
        cost = np.array([sum(c for c, _ in r) for r in runs])
        met = np.array([all(d for _, d in r) for r in runs]) & (cost <= budget)
        report["oracle"][str(power)] = {"cpu_s": total, "seed_by_seed_mean_cpu_s": cost.mean(),
                                        "seed_by_seed_target": met.mean()}
        print(f"  total {total:,.0f} s ({total / budget:.2f}x the map); seed by seed "
              f"({a.samples} samples): mean {cost.mean():,.0f} s ({cost.mean() / budget:.2f}x), "
              f"every end decided within the map's CPU in {met.mean():.0%}")
    first = len(dict(grid.axes)[searching.SEED_AXIS])
    runs = [search_sample(curves, span, s.thresholds, first, max_seeds, rng) for _ in range(a.samples)]
    cost = np.array([c for c, _ in runs])
    located = np.array([n for _, n in runs])
    every = len(curves) * len(s.thresholds)
    report["search"] = {"mean_cpu_s": cost.mean(), "mean_located": located.mean(),
                        "p_every_located": (located == every).mean(),
                        "p_target": ((located == every) & (cost <= budget)).mean()}
    print(f"\nthe search ({a.grid}, max_seeds {max_seeds}, max_undecided {span.max_undecided}, "
          f"{a.samples} samples): mean {cost.mean():,.0f} s "
          f"({cost.mean() / budget:.2f}x the map), {located.mean():.1f} of {every} crossings "
          f"within a step on average; all {every} in {(located == every).mean():.0%}, "
          f"all {every} within the map's CPU in {report['search']['p_target']:.0%}")
    if a.output:
        a.output.write_text(json.dumps(report, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
