"""Operating-boundary sweeps: a grid file -> cells -> runs -> tidy tables.

A grid file (TOML) names a base scenario, fields fixed for every cell, axes
(Cartesian product) and paired arms:

    name = "quick"
    scenario = "thesis"              # a scenario name or path
    timeout = "2h"                   # wall-clock limit per cell
    [set]                            # every cell
    "run.duration" = 4.0
    [axes]                           # any scenario field; "seed" is the seed
    "training.ratio" = [4, 2]
    "background.rate" = [46, 184]
    seed = [1, 2]
    [arms]                           # every axes point runs each arm
    reference = "same"               # deltas: every other arm vs this one
    same = { "training.priority" = "same" }
    low = { "training.priority" = "low" }
    [adaptive]                       # optional: more seeds where undecided
    max_seeds = 4
    budget = "20min"                 # optional: the added rounds end by then

`points` (optional) lists explicit combinations of fields, each crossed with
the [axes] product: `points = [{ "training.ratio" = 16, "background.rate" = 23 },
...]` runs those combinations only, not their whole product.

A point may also carry three reserved keys:

    [[points]]
    label = "tictac"                    # names the point in the tables and figures
    "training.pull_barrier" = true      # the point's fields, as above
    reference = "random"                # its own reference arm ...
    arms.random = { "training.policy" = "random" }   # ... and its own arms,
    arms.tictac = { "training.policy" = "tictac" }   # in place of [arms]

so that points compare different things (each system against its own
baseline, say). `label` is a column of the tables like a field; if one point
has a label (or its own arms), every point needs one, and labels are unique. A point with its
own `arms` needs a `reference` among them (or has exactly one arm); a point
without them runs the grid's [arms]. Its arm fields may not repeat the
point's fields or the axes.

With [adaptive] (or `harness sweep --max-seeds N`), after the grid's seeds
have run, every point whose training verdict is undecided at 95 % (its
slowdown interval spans two colour classes; harness.stats) gets one more
seed, round after round, until every point is decided or has max_seeds.
With a `budget` (wall-clock time from the sweep's start; or `harness sweep
--budget`), a round adds a seed only to the points whose seed fits in what is
left of it, each point's cost being its cells' measured wall time so far: the
grid's own cells always run, the added rounds end in time. Points nearest a
verdict go first: from each undecided interval, stats.seeds_to_decide projects
the seeds that would decide it (`seeds_to_decide` in deltas_mean); points
projected to be decided within max_seeds come cheapest-to-decide first and
keep room for their later seeds, the others share what is left.

Arms of one point differ only in their arm fields, so they share the
background schedule (it depends on the seed and the traffic parameters only:
common random numbers) and compare flow by flow.

A cell is identified by the digest of its resolved scenario. The sweep
directory holds the grid file, sweep.json (the cells), cells/<id>/ (complete
run directories, each renamed into place), failed/<id>.json, logs/, and the
tables summary.parquet, deltas.parquet and deltas_mean.parquet.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from harness import executors, metrics, outdir, stats
from harness.cells import (MEASURED, NOT_RUN_REASON, STALLED, UNFINISHED, Cell,
                           cell_status, point_value, stall_reason)
from harness.config import (SWEEPS_DIR, ConfigError, ConfigTypeError, alternative_field,
                            apply_values, builtin_names, check_alternatives, parse_time,
                            parse_toml, read_scenario_dict, read_text, scenario_from_dict)
from harness.errors import UnknownKeyError
from harness.run import output_bytes, plan
from harness.tables import POINT_LABEL, SEED_AXIS, read_table

GRIDS_DIR = SWEEPS_DIR
_GRID_KEYS = ("name", "scenario", "timeout", "set", "points", "axes", "arms", "adaptive")
#: Reserved keys of a point: its label (a column, not a scenario field), and
#: its own arms and reference arm in place of the grid's.
POINT_ARMS, POINT_REFERENCE = "arms", "reference"  # (POINT_LABEL: harness.tables)


class SweepError(RuntimeError):
    """A sweep directory that cannot be (re)used as asked."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C: running cells were stopped (they are unfinished, not failed) and
    the tables of the finished ones written; `report` says what finished."""

    def __init__(self, report: "SweepReport | None"):
        super().__init__()
        self.report = report


@dataclass(frozen=True)
class Grid:
    name: str
    path: Path
    text: str                                         # the grid file as given
    base: dict                                        # the base scenario, raw
    fixed: tuple[tuple[str, Any], ...]                # field -> value, every cell
    axes: tuple[tuple[str, tuple[Any, ...]], ...]     # field -> values, in file order
    arms: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]  # arm -> its fields
    reference: str | None
    timeout_s: float
    # explicit combinations of point fields, each crossed with the axes
    points: tuple[tuple[tuple[str, Any], ...], ...] = ()
    max_seeds: int = 0                                # adaptive: seeds per point at most
    budget_s: float | None = None                     # adaptive: wall time, whole sweep
    # per explicit point: (its arms, its reference), or None for the grid's
    point_arms: tuple[tuple[tuple, str | None] | None, ...] = ()

    def arms_of(self, point: tuple[tuple[str, Any], ...]) -> tuple[tuple, str | None]:
        """(arms, reference) of a cell's point: its explicit point's own, or the grid's."""
        fields = dict(point)
        for explicit, own in zip(self.points, self.point_arms):
            if own is not None and all(fields.get(f) == v for f, v in explicit):
                return own
        return self.arms, self.reference

    @property
    def per_point_arms(self) -> bool:
        return any(own is not None for own in self.point_arms)

    def shape(self) -> str:
        """The grid's points as a product, "5 x 2 x 3" (explicit points, then
        each axis's values), for messages."""
        sizes = ([str(len(self.points))] if self.points else []) + \
            [str(len(v)) for _, v in self.axes]
        return " x ".join(sizes) or "1"

    @property
    def axis_fields(self) -> list[str]:
        """Every field that varies between points: the `points` fields, then the axes."""
        fields = list(dict.fromkeys(f for point in self.points for f, _ in point))
        return fields + [f for f, _ in self.axes if f not in fields]


# --------------------------------------------------------------------------
# grid files


def resolve_grid_file(name: str | Path) -> Path:
    for c in (Path(name), GRIDS_DIR / name, GRIDS_DIR / f"{name}.toml"):
        if c.is_file():
            return c
    raise ConfigError("grid", f"grid file not found: {name} (built-in: "
                      f"{', '.join(builtin_names(GRIDS_DIR, '.toml'))})")


def _table(data: dict, key: str, example: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a table ({example}), got {value!r}")
    return value


def _flatten(table: dict, where: str, prefix: str = "") -> dict[str, Any]:
    """{"training": {"ratio": [..]}} and {"training.ratio": [..]} alike -> dotted keys."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and not path.startswith("training.layer_classes"):
            out.update(_flatten(value, where, f"{path}."))
        else:
            out[path] = value
    return out


def _check_field(base: dict, field: str, value: Any, where: str) -> None:
    """Unknown fields and values of the wrong kind are grid errors, found before
    anything runs (a value that is only out of range fails its own cell)."""
    try:
        scenario_from_dict(apply_values(base, [(field.split("."), value)]))
    except ConfigTypeError as e:
        raise ConfigError(where, f"{value!r} is the wrong kind of value for {field}: {e}") \
            from None
    except UnknownKeyError as e:
        raise ConfigError(where, f"unknown scenario field {field!r}: {e}") from None
    except ConfigError:
        pass  # a value only out of range: its own cell fails, not the grid


def load_grid(path: str | Path) -> Grid:
    path = resolve_grid_file(path)
    text = read_text(path, "grid")
    data = parse_toml(text, path, "grid")
    for key in data:
        if key not in _GRID_KEYS:
            raise UnknownKeyError(key, f"unknown grid key; allowed: {', '.join(_GRID_KEYS)}")
    if "scenario" not in data:
        raise ConfigError("scenario", "a grid names its base scenario (scenario = \"...\")")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("name", f"expected a non-empty string, got {name!r}")
    base = read_scenario_dict(data["scenario"])
    fixed = _flatten(_table(data, "set", '"run.duration" = 2.0, ...'), "set")
    for field, value in fixed.items():
        _check_field(base, field, value, f"set.{field}")
    check_alternatives(fixed, "set.")
    base = apply_values(base, [(f.split("."), v) for f, v in fixed.items()])

    axes = []
    for field, values in _flatten(_table(data, "axes", '"training.ratio" = [16, 8], ...'),
                                  "axes").items():
        where = f"axes.{field}"
        if not isinstance(values, list) or not values:
            raise ConfigError(where, f"an axis is a non-empty list of values, got {values!r}")
        if len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            raise ConfigError(where, f"lists a value twice: {values!r}")
        for v in values:
            _check_field(base, field, v, where)
        axes.append((field, tuple(values)))
    check_alternatives(dict(axes), "axes.")

    points = []
    point_arms = []
    raw_points = data.get("points", [])
    if not isinstance(raw_points, list) or not all(isinstance(q, dict) and q for q in raw_points):
        raise ConfigError("points", "expected a list of tables of scenario fields, e.g. "
                          '[{ "training.ratio" = 16, "background.rate" = 23 }]')
    for i, raw_point in enumerate(raw_points):
        raw_point = dict(raw_point)
        label = raw_point.pop(POINT_LABEL, None)
        own_arms = raw_point.pop(POINT_ARMS, None)
        own_reference = raw_point.pop(POINT_REFERENCE, None)
        flat = _flatten(raw_point, f"points[{i}]")
        check_alternatives(flat, f"points[{i}].")
        for field, value in flat.items():
            _check_field(base, field, value, f"points[{i}].{field}")
            _check_clash(f"points[{i}]", field, dict(axes), "an axis")
        if label is not None:
            if not isinstance(label, str) or not label:
                raise ConfigError(f"points[{i}].{POINT_LABEL}", f"expected a non-empty "
                                  f"string, got {label!r}")
            flat = {POINT_LABEL: label, **flat}
        points.append(tuple(flat.items()))
        point_arms.append(_point_arms(base, i, own_arms, own_reference, flat, dict(axes)))
    labels = [dict(q).get(POINT_LABEL) for q in points]
    if any(own is not None for own in point_arms) and not all(labels):
        raise ConfigError(f"points[{labels.index(None)}].{POINT_LABEL}", "missing: points "
                          "with their own arms are told apart by their labels; give every "
                          "point one")
    if any(labels) and not all(labels):
        raise ConfigError(f"points[{labels.index(None)}].{POINT_LABEL}",
                          "missing: when one point has a label, every point needs one")
    if any(labels) and len(set(labels)) != len(labels):
        raise ConfigError(f"points[{len(set(labels))}].{POINT_LABEL}", "labels must be "
                          f"unique, got {labels}")
    if len({json.dumps(q, sort_keys=True, default=str) for q in points}) != len(points):
        raise ConfigError("points", "lists a point twice")

    arms_raw = dict(_table(data, "arms", 'reference = "same", same = { "training.priority" = '
                           '"same" }, ...'))
    reference = arms_raw.pop("reference", None)
    if reference is not None and not isinstance(reference, str):
        raise ConfigError("arms.reference", f"expected an arm's name, got {reference!r}")
    arms = _arms(base, arms_raw, "arms", dict(axes),
                 {f: None for point in points for f, _ in point})
    if reference is not None and reference not in dict(arms):
        raise ConfigError("arms.reference", f"{reference!r} is not an arm; arms: "
                          f"{', '.join(a for a, _ in arms)}")
    if reference is None and len(arms) > 1:
        reference = arms[0][0]
    timeout = parse_time(data.get("timeout", "6h"), "timeout")
    own_references = [own[1] for own in point_arms if own is not None]
    max_seeds, budget_s = _adaptive(data.get("adaptive", {}), dict(axes),
                                    reference if not own_references else own_references[0])
    return Grid(name, path.resolve(), text, base, tuple(fixed.items()), tuple(axes),
                tuple(arms), reference, timeout, tuple(points), max_seeds, budget_s,
                tuple(point_arms))


def _arms(base: dict, table: dict, where: str, axes: dict,
          point_fields: dict | None = None) -> list[tuple[str, tuple]]:
    """Arms of [arms] or of a point: name -> table of scenario fields."""
    arms = []
    for arm, fields in table.items():
        if not isinstance(fields, dict) or not fields:
            raise ConfigError(f"{where}.{arm}", "an arm is a table of scenario fields, e.g. "
                              '{ "training.priority" = "low" }')
        flat = _flatten(fields, f"{where}.{arm}")
        check_alternatives(flat, f"{where}.{arm}.")
        for field, value in flat.items():
            _check_field(base, field, value, f"{where}.{arm}.{field}")
            _check_clash(f"{where}.{arm}", field, axes, "an axis")
            _check_clash(f"{where}.{arm}", field, point_fields or {}, "a field of the point")
        arms.append((arm, tuple(flat.items())))
    return arms


def _check_clash(where: str, field: str, others: dict, what: str) -> None:
    """A point's or arm's field may not be one of `others` (the axes, the
    point's fields), nor the other way of giving its quantity (background.rate
    where background.load is an axis): a cell would set both."""
    if field in others:
        raise ConfigError(f"{where}.{field}", f"is also {what}")
    other = alternative_field(field)
    if other is not None and other in others:
        raise ConfigError(f"{where}.{field}", f"gives the quantity of {other} ({what}) "
                          "another way; give one of them: rate (flows/s per host) or load "
                          "(offered load per host link)")


def _point_arms(base: dict, i: int, own_arms: Any, own_reference: Any, fields: dict,
                axes: dict) -> tuple[tuple, str | None] | None:
    """A point's own (arms, reference), checked; None when it has none."""
    where = f"points[{i}]"
    if own_arms is None:
        if own_reference is not None:
            raise ConfigError(f"{where}.{POINT_REFERENCE}", "a point's reference needs the "
                              f"point's own arms ({where}.{POINT_ARMS})")
        return None
    if not isinstance(own_arms, dict) or not own_arms:
        raise ConfigError(f"{where}.{POINT_ARMS}", "expected a table of arms, e.g. arms.low "
                          '= { "training.priority" = "low" }')
    base_point = apply_values(base, [(f.split("."), v) for f, v in fields.items()
                                     if f != POINT_LABEL])
    arms = _arms(base_point, own_arms, f"{where}.{POINT_ARMS}", axes, fields)
    if own_reference is None and len(arms) > 1:
        raise ConfigError(f"{where}.{POINT_REFERENCE}", "missing: a point with several arms "
                          f"names its reference arm; arms: {', '.join(a for a, _ in arms)}")
    if own_reference is not None and own_reference not in dict(arms):
        raise ConfigError(f"{where}.{POINT_REFERENCE}", f"{own_reference!r} is not an arm of "
                          f"the point; arms: {', '.join(a for a, _ in arms)}")
    return tuple(arms), own_reference


def _adaptive(table: Any, axes: dict, reference: str | None) -> tuple[int, float | None]:
    """[adaptive] max_seeds = N, budget = "20min": (0, None) when the grid has
    no [adaptive] table."""
    if not isinstance(table, dict):
        raise ConfigError("adaptive", f"expected a table (max_seeds = N), got {table!r}")
    for key in table:
        if key not in ("max_seeds", "budget"):
            raise UnknownKeyError(f"adaptive.{key}", "unknown key; allowed: max_seeds, budget")
    if not table:
        return 0, None
    value = table.get("max_seeds")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError("adaptive.max_seeds", f"expected an integer >= 1, got {value!r}")
    check_adaptive(axes, reference, "adaptive.max_seeds")
    budget = table.get("budget")
    return value, None if budget is None else parse_time(budget, "adaptive.budget")


def check_adaptive(axes: dict, reference: str | None, where: str) -> None:
    """Adding seeds needs a seed axis (the first seeds) and a reference arm
    (the verdicts compare arms)."""
    if SEED_AXIS not in axes:
        raise ConfigError(where, "adding seeds needs a seed axis: [axes] seed = [1]")
    if reference is None:
        raise ConfigError(where, "adding seeds needs arms with a reference (the verdicts "
                          "compare each arm with it)")


def expand(grid: Grid) -> list[Cell]:
    """Every (point, arm) of the grid, validated as a scenario. A cell whose
    scenario is invalid is kept, with its error, so the sweep records it failed."""
    fields = [f for f, _ in grid.axes]
    cells: list[Cell] = []
    seen: dict[str, Cell] = {}
    for explicit in grid.points or ((),):
        for values in itertools.product(*(v for _, v in grid.axes)):
            point = (*explicit, *zip(fields, values))
            for arm in arm_names(grid, point):
                cell = make_cell(grid, point, arm)
                if cell.id in seen:
                    raise ConfigError("grid", f"cells {seen[cell.id].labels()} and "
                                      f"{cell.labels()} are the same scenario")
                seen[cell.id] = cell
                cells.append(cell)
    return cells


def arm_names(grid: Grid, point: tuple[tuple[str, Any], ...] = ()) -> list[str | None]:
    """The arms a point runs: its own, or the grid's."""
    arms, _ = grid.arms_of(point)
    return [a for a, _ in arms] or [None]


def make_cell(grid: Grid, point: tuple[tuple[str, Any], ...], arm: str | None) -> Cell:
    """The cell of one point and arm, planned (every check a run makes before
    ns-3); an invalid one carries its error."""
    arms, reference = grid.arms_of(point)
    arm_fields = dict(arms).get(arm, ()) if arm is not None else ()
    fields = [(f, v) for f, v in (*point, *arm_fields) if f != POINT_LABEL]
    raw = apply_values(grid.base, [(f.split("."), v) for f, v in fields])
    try:
        scenario = scenario_from_dict(raw)
        planned = plan(scenario)
        return Cell(scenario.digest(), arm, tuple(point), scenario,
                    predicted_bytes=predicted_bytes(planned), reference=reference,
                    output_bytes=output_bytes(planned))
    except Exception as e:  # noqa: BLE001 - one cell's problem fails that cell only
        message = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
        blob = json.dumps(raw, sort_keys=True, default=str).encode()
        return Cell("x" + hashlib.sha256(blob).hexdigest()[:15], arm, tuple(point), None,
                    message, reference=reference)


def _point_keys(grid: Grid) -> list[str]:
    """The fields that name a point apart from its seed."""
    return [k for k in grid.axis_fields if k != SEED_AXIS]


def _point_of(cell: Cell, keys: list[str]) -> tuple:
    """A cell's point (the `keys` of _point_keys), as a key."""
    point = dict(cell.point)
    return tuple(point_value(point.get(k)) for k in keys)


def undecided_points(grid: Grid, deltas_mean: pd.DataFrame) -> dict[tuple, float]:
    """The points whose training verdict is undecided (harness.stats), each
    with its projected seeds to decide (the largest over its arms; inf where
    unknown)."""
    keys = _point_keys(grid)
    undecided: dict[tuple, float] = {}
    judged = deltas_mean[deltas_mean["metric"].isin(DECIDING_METRICS)]
    for row in judged.to_dict("records"):
        if not row.get("decided") and row.get("verdict") not in (None, "n/a"):
            key = tuple(_none_if_na(row.get(k)) for k in keys)
            projected = row.get("seeds_to_decide")
            projected = math.inf if projected is None or projected != projected else projected
            undecided[key] = max(undecided.get(key, 0.0), float(projected))
    return undecided


def more_seeds(grid: Grid, cells: list[Cell], deltas_mean: pd.DataFrame,
               max_seeds: int) -> list[Cell]:
    """Adaptive sweeps: one more seed (the point's highest + 1), every arm, for
    each point whose training verdict is undecided (harness.stats) and has
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


def _none_if_na(value: Any) -> Any:
    """A table's missing value (NaN: a field this point does not set) as None,
    the value a cell's point gives for it."""
    return None if isinstance(value, float) and value != value else value


#: The verdict an adaptive sweep decides: the training slowdown class (the
#: map's colour). The background's changes are reported as significant or
#: not; their heavy tails would take far more seeds to pin down.
DECIDING_METRICS = ("iteration_time",)


# --------------------------------------------------------------------------
# the sweep directory


def default_dir(grid: Grid) -> Path:
    """results/sweeps/<name> under $DDNN_HARNESS_RESULTS or the current directory."""
    return outdir.default_sweep_dir(grid.name)


write_atomic = outdir.write_file  # every file of the sweep directory: temporary name, rename


def _cells_record(grid: Grid, cells: list[Cell], added: set[str]) -> dict:
    arms = [a for a, _ in grid.arms]
    for own in grid.point_arms:
        arms += [a for a, _ in own[0] if a not in arms] if own is not None else []
    return {"grid": grid.name, "grid_file": str(grid.path),
            "axes": grid.axis_fields, "arms": arms,
            "reference": grid.reference,
            "cells": [{"id": c.id, "arm": c.arm, "point": dict(c.point),
                       **({"reference": c.reference} if grid.per_point_arms else {}),
                       **({"added": True} if c.id in added else {})} for c in cells]}


def check_dir(out: Path, grid: Grid, cells: list[Cell], resume: bool) -> list[Cell]:
    """SweepError unless `out` is new or empty, or holds this grid's sweep and
    `resume` is set (same cells, by resolved-config digest). Returns the seeds
    an adaptive sweep added there before (from sweep.json), as cells."""
    stored = out / "sweep.json"
    if stored.exists():
        if not resume:
            raise SweepError(f"{out} already holds a sweep: --resume to continue it, or "
                             "-o another directory")
        try:
            old = json.loads(stored.read_text())["cells"]
            old_ids = {c["id"] for c in old}
        except (ValueError, KeyError, TypeError, OSError) as e:
            raise SweepError(f"{stored} cannot be read ({e}); start the sweep in a new "
                             "directory") from None
        new_ids = {c.id for c in cells}
        added = [make_cell(grid, tuple(c["point"].items()), c["arm"])
                 for c in old if c["id"] not in new_ids and c.get("added")]
        if old_ids != new_ids | {c.id for c in added}:
            raise SweepError(
                f"the grid changed since {out} was started: {len(new_ids - old_ids)} new and "
                f"{len(old_ids - new_ids)} missing cells (by resolved-config digest); "
                "start it in a new directory")
        return added
    if outdir.is_half_made_sweep(out):  # stopped before sweep.json: nothing ran
        outdir.clear_half_made_sweep(out)
    elif out.exists() and any(e.name != outdir.LOCK_NAME for e in out.iterdir()):
        raise SweepError(f"{out} exists and is not a sweep directory")
    return []


def prepare_dir(out: Path, grid: Grid, cells: list[Cell], resume: bool) -> list[Cell]:
    """Create a new sweep directory, or check that `--resume` continues the
    same grid (check_dir), and clear what killed writers left behind. Returns
    the cells, with the seeds an adaptive sweep added before."""
    stored = out / "sweep.json"
    cells = cells + check_dir(out, grid, cells, resume)
    if not stored.exists():  # first, so that a sweep stopped from here on is resumable
        write_atomic(out / "grid.toml", grid.text)
        write_cells(out, grid, cells, set())
    for sub in ("cells", "failed", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    # what writers killed mid-write left: cell directories, replaced cell
    # directories, failure records, tables
    for directory in (out, out / "cells", out / "failed"):
        outdir.remove_leftovers(directory)
    return cells


def write_cells(out: Path, grid: Grid, cells: list[Cell], added: set[str]) -> None:
    """sweep.json: the grid's cells; `added`: ids of seeds an adaptive sweep added."""
    record = _cells_record(grid, cells, added)
    write_atomic(out / "sweep.json", json.dumps(record, indent=2, default=str) + "\n")


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / "cells" / cell.id


def is_done(out: Path, cell: Cell) -> bool:
    return (cell_dir(out, cell) / "summary.json").is_file()


def is_failed(out: Path, cell: Cell) -> bool:
    return (out / "failed" / f"{cell.id}.json").is_file()


def record_failure(out: Path, cell: Cell, error: str, detail: str | None = None) -> None:
    """failed/<id>.json: the error's own message (one line, what the summary
    shows) and, if any, the detail behind it (a traceback, ns-3's last output)."""
    record = {**cell.labels(), "error": error}
    if detail:
        record["detail"] = detail
    write_atomic(out / "failed" / f"{cell.id}.json",
                 json.dumps(record, indent=2, default=str) + "\n")


def clear_failure(out: Path, cell: Cell) -> None:
    (out / "failed" / f"{cell.id}.json").unlink(missing_ok=True)


# --------------------------------------------------------------------------
# aggregation (tables only)

TIMING_COLUMNS = ("wall_s", "startup_s", "events_per_s", "sim_s_per_wall_s", "peak_rss_mib")


def cell_row(cell: Cell, run_dir: Path | None, error: str | None) -> dict[str, Any]:
    """One tidy summary row: the cell's labels, status, reason and metrics.
    status (harness.cells): ok (run_dir), stalled (run_dir, but its training
    completed no iteration in the window: its other metrics stand), failed
    (error) or unfinished (neither: not run yet, or stopped by Ctrl-C;
    --resume runs it); reason: why a cell is not ok (failed: its error)."""
    status = cell_status(run_dir is not None, error)
    reason = error if error else NOT_RUN_REASON if status == UNFINISHED else None
    row: dict[str, Any] = {**cell.labels(), "status": status, "error": error, "reason": reason}
    if run_dir is None or error:
        return row
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    config = json.loads((run_dir / "config.json").read_text())
    row.update(metrics.flat_summary(summary))
    row["status"] = cell_status(True, None, row["training_stalled"])
    if row["status"] == STALLED:
        row["reason"] = stall_reason(config.get("run", {}))   # the run as simulated
    row.update(offered_load=config["background"]["offered_load"],
               compute_ms=config["training"]["compute_ms"],
               events=manifest["events"], wall_s=manifest.get("run_wall_s"),
               startup_s=manifest.get("startup_s"), peak_rss_mib=manifest.get("peak_rss_mib"),
               events_per_s=manifest.get("events_per_s"),
               sim_s_per_wall_s=manifest.get("sim_s_per_wall_s"))
    return row


def predicted_bytes(p) -> float:
    """Payload bytes a planned cell will send: its background flows, and its
    training job's iterations at max(compute, communication at line rate)
    each. The simulation cost grows with the bytes
    (docs/performance/sweep-cost.md), so a sweep starts the cells with the most bytes first, to
    end less often on one long cell running alone. A proxy only: ns-3's TCP
    send buffer costs more per segment as the congestion window grows, so
    cells of equal bytes can differ several-fold in wall time."""
    expected = p.expected_duration
    flows = p.flows[p.flows["start_ns"] < expected * 1e9] if len(p.flows) else p.flows
    total = float(flows["size"].sum()) if len(flows) else 0.0
    from harness import training
    for job in p.all_jobs:  # every job of [[training]]
        per_iteration = training.architecture(job.config.architecture).bytes_per_iteration(job)
        iteration_ms = max(job.profile.compute_ms, job.network_ms)
        total += per_iteration * expected * 1e3 / iteration_ms
    return total


def output_bytes_left(out: Path, cells: list[Cell]) -> int:
    """A rough size of what the sweep still writes into `out`: the run
    directories of its valid cells not done yet (Cell.output_bytes) and its
    tables, for the free-space check made before any cell runs
    (harness.outdir.check_space)."""
    todo = [c for c in cells if c.scenario is not None and not is_done(out, c)]
    return sum(c.output_bytes for c in todo) + 256 * 1024 + 4096 * len(cells)


# Calibrated on the `quick` preset with its adaptive seeds (86 cells,
# docs/performance/sweep-cost.md): 1,011 M events for 124 GB of predicted
# bytes (6,200-13,300 per MB over cells), and one core simulated 218-373
# thousand events per second with the TCP fast path (245 k on the 10 Gbit/s
# thesis cell of `python -m bench --only speed`).
EVENTS_PER_MB = 8_000
EVENTS_PER_CORE_S = (350_000, 200_000)   # fast, slow
SWEEP_START_S = 3.0  # loading ns-3 and warming up, once per sweep (local executor)


@dataclass(frozen=True)
class Cost:
    """A rough cost from the bytes a run sends (predicted_bytes)."""
    bytes: float

    @property
    def events(self) -> float:
        return self.bytes / 1e6 * EVENTS_PER_MB

    @property
    def core_s(self) -> tuple[float, float]:
        return tuple(self.events / rate for rate in EVENTS_PER_CORE_S)

    def describe(self, jobs: int = 1) -> str:
        low, high = (t / jobs for t in self.core_s)
        on = "" if jobs == 1 else f" on {jobs} cores"
        return (f"~{self.bytes / 1e6:,.0f} MB to send, ~{self.events / 1e6:,.1f} M events, "
                f"~{_duration(low)} to {_duration(high)}{on}")


#: A run whose slow estimate (Cost.core_s) is at least this many seconds is
#: announced with its cost before it starts (long_run_note): no upper bound on
#: run.duration (long runs are legitimate), but no surprise either.
LONG_RUN_S = 300.0


def long_run_note(p) -> str | None:
    """For a planned run estimated at LONG_RUN_S or more of wall time: what it
    simulates and its rough cost (None for a shorter one)."""
    cost = Cost(predicted_bytes(p))
    if cost.core_s[1] < LONG_RUN_S:
        return None
    return (f"a long run: {p.expected_duration:g} s simulated, {cost.describe()} of wall time "
            "(rough: docs/performance/sweep-cost.md); run.duration sets the simulated time")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def aggregate(out: Path, grid: Grid, cells: list[Cell]) -> dict[str, pd.DataFrame]:
    """summary.parquet (one row per cell), deltas.parquet (per seed, each arm vs
    the reference) and deltas_mean.parquet (per point: the mean over seeds
    with its Student-t interval, and the pooled change with its bootstrap
    interval and verdict, harness.stats)."""
    rows = []
    for cell in cells:
        failed = out / "failed" / f"{cell.id}.json"
        if is_done(out, cell):
            rows.append(cell_row(cell, cell_dir(out, cell), None))
        elif failed.is_file():
            rows.append(cell_row(cell, None, json.loads(failed.read_text())["error"]))
        else:
            rows.append(cell_row(cell, None, None))
    summary = pd.DataFrame(rows)
    tables = {"summary": summary}
    if grid.reference is not None or grid.per_point_arms:
        keys = grid.axis_fields
        ok = summary[summary["status"].isin(MEASURED)]  # a stall is +inf
        if grid.per_point_arms:
            deltas = _per_point_deltas(ok, cells, keys)
        else:
            deltas = metrics.paired_deltas(ok, keys, "arm", grid.reference,
                                           metrics.DELTA_METRICS)
        tables["deltas"] = deltas
        point_keys = [k for k in keys if k != SEED_AXIS]
        means = metrics.delta_means(deltas, point_keys, "arm")
        tables["deltas_mean"] = _with_intervals(
            means, interval_table(out, grid, cells), point_keys,
            [k for k in dict(grid.axes) if k != SEED_AXIS])
        if stats.SCALE_FIELD in point_keys:   # the same cells at several scales
            tables["scale_check"] = stats.compare_scales(tables["deltas_mean"], point_keys)
    for name, df in tables.items():
        write_atomic(out / f"{name}.parquet", df.to_parquet(index=False))
    return tables


def _per_point_deltas(ok: pd.DataFrame, cells: list[Cell], keys: list[str]) -> pd.DataFrame:
    """metrics.paired_deltas point by point, each against its own reference
    arm; within a point only the seed varies (and fields a point does not set
    are missing, which must not become keys)."""
    reference = {c.id: c.reference for c in cells}
    point_keys = [k for k in keys if k != SEED_AXIS]
    seed_keys = [SEED_AXIS] if SEED_AXIS in keys else []
    parts = []
    labelled = ok.assign(_point=[json.dumps([_none_if_na(r[k]) for k in point_keys],
                                            default=str) for _, r in ok.iterrows()])
    for _, group in labelled.groupby("_point", sort=False):
        ref = reference[group["cell"].iloc[0]]
        if ref is None:
            continue
        # "_point" keeps the keys a MultiIndex even when the seed is the only axis
        part = metrics.paired_deltas(group, ["_point", *seed_keys], "arm", ref,
                                     metrics.DELTA_METRICS).drop(columns="_point")
        first = group.iloc[0]
        for k in reversed(point_keys):
            part.insert(0, k, [first[k]] * len(part))
        parts.append(part)
    columns = [*keys, "arm", "metric", "reference", "value", "change"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def interval_table(out: Path, grid: Grid, cells: list[Cell]) -> pd.DataFrame:
    """Per axes point (seeds pooled) and non-reference arm, each change of the
    map against the reference arm with its bootstrap interval and verdict:
    columns point fields, arm, metric, change, change_low, change_high,
    samples, seeds, verdict, decided, seeds_to_decide (training verdicts:
    stats.seeds_to_decide)."""
    point_keys = [k for k in grid.axis_fields if k != SEED_AXIS]
    by_point: dict[tuple, dict[str, dict]] = {}
    point_reference: dict[tuple, str | None] = {}
    for cell in cells:
        if not is_done(out, cell):
            continue
        point = dict(cell.point)
        key = tuple(point_value(point.get(k)) for k in point_keys)
        by_point.setdefault(key, {}).setdefault(cell.arm, {})[point.get(SEED_AXIS)] = cell
        point_reference[key] = cell.reference if grid.per_point_arms else grid.reference
    rows = []
    for key, arms in by_point.items():
        if point_reference[key] is None:
            continue
        reference = arms.get(point_reference[key], {})
        for arm, seeds in arms.items():
            if arm == point_reference[key]:
                continue
            shared = sorted(s for s in seeds if s in reference)
            ref_runs = [_run_tables(out, reference[s]) for s in shared]
            arm_runs = [_run_tables(out, seeds[s]) for s in shared]
            label = (*key, arm)
            changes = {"iteration_time": stats.iteration_change(ref_runs, arm_runs, label),
                       "end_spread": stats.end_spread_change(ref_runs, arm_runs, label),
                       **stats.fct_changes(ref_runs, arm_runs, label)}
            for metric, iv in changes.items():
                verdict, decided = stats.judge(metric, iv)
                to_decide = (stats.seeds_to_decide(iv.change, iv.low, iv.high, iv.samples,
                                                   iv.seeds)
                             if metric in DECIDING_METRICS else math.nan)
                rows.append({**dict(zip(point_keys, key)), "arm": arm, "metric": metric,
                             "change": iv.change, "change_low": iv.low,
                             "change_high": iv.high, "samples": iv.samples,
                             "seeds": iv.seeds, "verdict": verdict, "decided": decided,
                             "seeds_to_decide": to_decide})
    columns = [*point_keys, "arm", "metric", "change", "change_low", "change_high", "samples",
               "seeds", "verdict", "decided", "seeds_to_decide"]
    return pd.DataFrame(rows, columns=columns)


def _run_tables(out: Path, cell: Cell) -> stats.RunTables:
    d = cell_dir(out, cell)
    iterations = d / "iterations.parquet"
    return stats.RunTables(read_table(d / "flows.parquet"),
                           read_table(iterations) if iterations.is_file() else None)


def _with_intervals(means: pd.DataFrame, intervals: pd.DataFrame,
                    point_keys: list[str], axis_keys: list[str]) -> pd.DataFrame:
    """deltas_mean: the mean over seeds (n, mean, ci95_low, ci95_high) and the
    pooled change with its bootstrap interval, side by side. axis_keys: the
    grid's axes but the seed (every point has a value of each)."""
    on = [*point_keys, "arm", "metric"]
    if POINT_LABEL in point_keys:
        # a label names a point of `points`, which the axes multiply: label and
        # axes together are unique; the points' own fields, missing where a
        # point does not set them, would not match across the tables' dtypes
        on = [POINT_LABEL, *axis_keys, "arm", "metric"]
        intervals = intervals.drop(columns=[k for k in point_keys
                                            if k != POINT_LABEL and k not in axis_keys])
    if means.empty:
        return means.reindex(columns=[*means.columns, *(c for c in intervals.columns
                                                         if c not in on)])
    if intervals.empty:
        return means.reindex(columns=[*means.columns, *(c for c in intervals.columns
                                                         if c not in on)])
    return means.merge(intervals, on=on, how="left")


# --------------------------------------------------------------------------
# running


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
    from harness import reference as reference_results   # it builds on this module

    from_reference = (reference_results.check(reference, grid, base)
                      if reference is not None else [])
    with _owned(out):  # one sweep at a time in a directory
        cells = prepare_dir(out, grid, base, resume)
        reference_results.install(reference, out, from_reference)
        added = {c.id for c in cells} - {c.id for c in base}
        first = {c.id: _state(out, c, retry_failed) for c in cells}
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
                todo = [c for c in extra if _state(out, c, retry_failed) == "run"]
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


@contextlib.contextmanager
def _owned(out: Path):
    """Hold `out`'s lock (outdir.DirectoryLock) while the sweep writes it: a
    second sweep or --resume on a running sweep is refused at once. A
    directory this call had to create is removed again if nothing was
    written in it (a refused grid leaves no trace)."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    lock = outdir.DirectoryLock(out).acquire()
    try:
        yield
    except BaseException:
        if created and {e.name for e in out.iterdir()} <= {outdir.LOCK_NAME}:
            (out / outdir.LOCK_NAME).unlink(missing_ok=True)
            out.rmdir()
        raise
    finally:
        lock.release()


def _readable(out: Path, cell: Cell) -> str | None:
    """None if every table of a finished cell opens; else why one does not
    (a disk that filled up, or a copy cut short, after the cell finished)."""
    import pyarrow.parquet as pq

    for table in sorted(cell_dir(out, cell).glob("*.parquet")):
        try:
            pq.read_metadata(table)  # the footer: what a cut-short file lacks
        except (OSError, ValueError) as e:
            return f"{table.name} cannot be read ({' '.join(str(e).split())[:120]})"
    return None


def _set_aside(out: Path, cell: Cell, why: str) -> None:
    """Move a corrupt finished cell to corrupt/<id>-<n> (kept, not deleted), so
    that it runs again, and say so."""
    aside = out / "corrupt" / cell.id
    n = 1
    while aside.exists():
        n += 1
        aside = out / "corrupt" / f"{cell.id}-{n}"
    aside.parent.mkdir(exist_ok=True)
    os.replace(cell_dir(out, cell), aside)
    print(f"sweep: cell {cell.id}: {why}; moved to {aside.relative_to(out)} and run again",
          file=sys.stderr, flush=True)


def _state(out: Path, cell: Cell, retry_failed: bool) -> str:
    """done, invalid (recorded failed without running), failed-before (not
    retried) or run; a finished cell's old failure record is cleared, and a
    finished cell whose tables cannot be read is set aside and runs again."""
    if is_done(out, cell):
        why = _readable(out, cell)
        if why is None:
            clear_failure(out, cell)
            return "done"
        _set_aside(out, cell, why)
    if cell.scenario is None:
        record_failure(out, cell, cell.error)   # invalid scenario: fails without running
        return "invalid"
    if is_failed(out, cell) and not retry_failed:
        return "failed-before"
    return "run"


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
