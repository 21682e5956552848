"""Grid files: a grid file (TOML) -> Grid -> its cells (expand).

A grid file names a base scenario, fields fixed for every cell, axes
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

Arms of one point differ only in their arm fields, so they share the
background schedule (it depends on the seed and the traffic parameters only:
common random numbers) and compare flow by flow.

A cell is identified by the digest of its resolved scenario (make_cell); an
invalid one keeps its error, and the sweep records it failed without running
it. [adaptive] is read here; what it does is harness.sweeps.adaptive's.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.sweeps.boundary import finest_tolerance
from harness.sweeps.cells import Cell
from harness.config.scenario import (SWEEPS_DIR, ConfigError, ConfigTypeError, alternative_field,
                            apply_values, builtin_names, check_alternatives, parse_toml,
                            read_scenario_dict, read_text, scenario_from_dict)
from harness.sweeps.cost import predicted_bytes
from harness.config.errors import UnknownKeyError
from harness.engine.planning import output_bytes, plan, short_window
from harness.config.schema.grid import read_grid
from harness.analysis.tables import POINT_LABEL, SEED_AXIS

GRIDS_DIR = SWEEPS_DIR
#: Reserved keys of a point: its label (a column, not a scenario field), and
#: its own arms and reference arm in place of the grid's.
POINT_ARMS, POINT_REFERENCE = "arms", "reference"  # (POINT_LABEL: harness.analysis.tables)


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
    search: "SearchSpec | None" = None               # [search]: a boundary search

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


@dataclass(frozen=True)
class SearchSpec:
    """[search], checked against the grid: the field searched over [lo, hi]
    at each point of the other axes, per threshold (harness.sweeps.boundary)."""

    field: str
    lo: float
    hi: float
    tolerance: float
    thresholds: tuple[float, ...]
    max_seeds: int
    max_undecided: int           # undecided probes a search goes on after
    arm: str                     # compared with the grid's reference arm
    integral: bool = False       # the field takes integers: probes are whole numbers
    spacing: str = "linear"      # "log": bisect at sqrt(a b), tolerance a factor


# --------------------------------------------------------------------------
# grid files


def resolve_grid_file(name: str | Path) -> Path:
    for c in (Path(name), GRIDS_DIR / name, GRIDS_DIR / f"{name}.toml"):
        if c.is_file():
            return c
    raise ConfigError("grid", f"grid file not found: {name} (built-in: "
                      f"{', '.join(builtin_names(GRIDS_DIR, '.toml'))})")


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
    top = read_grid(parse_toml(text, path, "grid"))   # its keys, kinds and ranges
    name = path.stem if top.name is None else top.name
    base = read_scenario_dict(top.scenario)
    fixed = _flatten(top.set, "set")
    for field, value in fixed.items():
        _check_field(base, field, value, f"set.{field}")
    check_alternatives(fixed, "set.")
    base = apply_values(base, [(f.split("."), v) for f, v in fixed.items()])

    axes = []
    for field, values in _flatten(top.axes, "axes").items():
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
    for i, raw_point in enumerate(top.points):
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

    arms_raw = dict(top.arms)
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
    own_references = [own[1] for own in point_arms if own is not None]
    if top.adaptive.max_seeds is not None:
        check_adaptive(dict(axes), reference if not own_references else own_references[0],
                       "adaptive.max_seeds")
    search = None
    if top.search is not None:
        search = _search(base, top, fixed, dict(axes), arms, reference)
    return Grid(name, path.resolve(), text, base, tuple(fixed.items()), tuple(axes),
                tuple(arms), reference, top.timeout, tuple(points),
                top.adaptive.max_seeds or 0, top.adaptive.budget, tuple(point_arms), search)


def _search(base: dict, top: Any, fixed: dict, axes: dict, arms: list,
            reference: str | None) -> SearchSpec:
    """[search] checked against the rest of the grid: a numeric scenario
    field that no other table sets, one arm compared with the reference, a
    seed axis; probes come from the search, so no [[points]] or [adaptive]."""
    s = top.search
    field = s.field
    if top.points:
        raise ConfigError("points", "a search grid's points are its axes' values (and the "
                          "searched field's probes); remove [[points]]")
    if top.adaptive.model_fields_set:
        raise ConfigError("adaptive", "a search grid adds seeds per probe up to "
                          "search.max_seeds; remove [adaptive]")
    if field == SEED_AXIS:
        raise ConfigError("search.field", "the seed is not searched; allowed: a numeric "
                          "scenario field such as background.rate or background.load")
    clashes = [(axes, "an axis"), (fixed, "set in [set]"),
               *((dict(fields), f"a field of arm {arm!r}") for arm, fields in arms)]
    for others, what in clashes:
        try:
            _check_clash("search", field, others, what)
        except ConfigError as e:   # the search's values would be overridden, or set twice
            raise ConfigError("search.field", f"{field} {str(e).split(': ', 1)[1]}; "
                              "allowed: a field only the search sets") from None
    check_adaptive(axes, reference, "search")
    integral = False
    try:
        _check_field(base, field, s.lo, "search.field")
    except ConfigError as e:
        if "unknown scenario field" in str(e):
            raise
        try:   # an integer field refuses 23.0 (and 2.5) but takes 23 (and 2)
            _check_field(base, field, math.floor(s.lo), "search.field")
        except ConfigError:
            raise ConfigError("search.field", f"{field} does not take a number; allowed: a "
                              "numeric scenario field such as background.rate or "
                              "background.load") from None
        integral = True
        for end, value in (("lo", s.lo), ("hi", s.hi)):
            if not float(value).is_integer():
                raise ConfigError(f"search.{end}", f"{field} takes integers (its probes are "
                                  f"whole numbers), got {value:g}; allowed: a whole number "
                                  f"such as {math.floor(value)} or {math.ceil(value)}")
    finest = finest_tolerance(s.lo, s.hi, integral, s.spacing == "log")
    if s.tolerance < finest:
        raise ConfigError("search.tolerance", f"{s.tolerance:g} is finer than a search over "
                          f"[{s.lo:g}, {s.hi:g}] resolves (it would stop at its own slack and "
                          f"call a wider bracket bracketed); allowed: at least {finest:.9g}"
                          + (" (an integer field's probes are whole numbers)"
                             if integral else ""))
    compared = [a for a, _ in arms if a != reference]
    if s.arm is None and len(compared) != 1:
        raise ConfigError("search.arm", "missing: name the arm compared with the reference; "
                          f"arms: {', '.join(compared)}")
    arm = s.arm if s.arm is not None else compared[0]
    if arm not in compared:
        raise ConfigError("search.arm", f"{arm!r} is not an arm compared with the reference "
                          f"{reference!r}; allowed: {', '.join(compared)}")
    unused = [a for a, _ in arms if a not in (reference, arm)]
    if unused:   # each probe would simulate them, and nothing reads them
        raise ConfigError("arms", f"a search compares {arm!r} with the reference "
                          f"{reference!r} only; {', '.join(map(repr, unused))} would run at "
                          "every probe unused: remove "
                          f"{'it' if len(unused) == 1 else 'them'} (search each arm in a "
                          "grid of its own)")
    _check_training(base, axes, dict(arms), (reference, arm))
    return SearchSpec(field, s.lo, s.hi, s.tolerance, tuple(s.thresholds), s.max_seeds,
                      s.max_undecided, arm, integral, s.spacing)


def _check_training(base: dict, axes: dict, arms: dict, compared: tuple[str, str]) -> None:
    """A search measures the training slowdown: the compared arms need a
    training job. Checked at the axes' first values (an axis or an arm may
    enable it); a first value only out of range leaves it to the cells."""
    first = [(f.split("."), values[0]) for f, values in axes.items() if f != SEED_AXIS]
    for name in compared:
        fields = [(f.split("."), v) for f, v in arms[name]]
        try:
            scenario = scenario_from_dict(apply_values(base, first + fields))
        except ConfigError:
            continue
        if not any(job.enabled for job in scenario.jobs):
            raise ConfigError("search", f"arm {name!r} has no training job (training.enabled "
                              "is false in its scenario): a search measures the training "
                              "slowdown; allowed: a scenario with training (such as thesis), "
                              'or "training.enabled" = true in [set]')


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


def check_adaptive(axes: dict, reference: str | None, where: str) -> None:
    """Adding seeds needs a seed axis (the first seeds) and a reference arm
    (the verdicts compare arms)."""
    if SEED_AXIS not in axes:
        raise ConfigError(where, "adding seeds needs a seed axis: [axes] seed = [1]")
    if reference is None:
        raise ConfigError(where, "adding seeds needs arms with a reference (the verdicts "
                          "compare each arm with it)")


def expand(grid: Grid, planned: bool = True) -> list[Cell]:
    """Every (point, arm) of the grid, validated as a scenario (planned: and
    planned, make_cell's). A cell whose scenario is invalid is kept, with its
    error, so the sweep records it failed."""
    fields = [f for f, _ in grid.axes]
    cells: list[Cell] = []
    seen: dict[str, Cell] = {}
    for explicit in grid.points or ((),):
        for values in itertools.product(*(v for _, v in grid.axes)):
            point = (*explicit, *zip(fields, values))
            for arm in arm_names(grid, point):
                cell = make_cell(grid, point, arm, planned)
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


def make_cell(grid: Grid, point: tuple[tuple[str, Any], ...], arm: str | None,
              planned: bool = True) -> Cell:
    """The cell of one point and arm, planned (every check a run makes before
    ns-3); an invalid one carries its error. planned False: its scenario and
    digest only (no plan, no cost: what `harness findings list` compares)."""
    arms, reference = grid.arms_of(point)
    arm_fields = dict(arms).get(arm, ()) if arm is not None else ()
    fields = [(f, v) for f, v in (*point, *arm_fields) if f != POINT_LABEL]
    raw = apply_values(grid.base, [(f.split("."), v) for f, v in fields])
    try:
        scenario = scenario_from_dict(raw)
        if not planned:
            return Cell(scenario.digest(), arm, tuple(point), scenario, reference=reference)
        planned = plan(scenario)
        short = short_window(planned)
        return Cell(scenario.digest(), arm, tuple(point), scenario,
                    predicted_bytes=predicted_bytes(planned), reference=reference,
                    output_bytes=output_bytes(planned), short=str(short) if short else None)
    except Exception as e:  # noqa: BLE001 - one cell's problem fails that cell only
        message = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
        blob = json.dumps(raw, sort_keys=True, default=str).encode()
        return Cell("x" + hashlib.sha256(blob).hexdigest()[:15], arm, tuple(point), None,
                    message, reference=reference)
