"""`harness compare A B`: each metric's change of B against A, with its 95 %
interval and verdict (harness.analysis.stats), for two run directories or two
sweep directories matched point by point. Tables only, no ns-3.

Pairing: two runs are paired when they replay the same background flows
(the same flow ids with the same hosts, sizes and start times: equal
background settings and seed) and ran from the same seed; then the
statistics are the sweeps' paired ones (flow i of A against flow i of B, the
iterations of A against B's in the same time blocks). Otherwise each side is
resampled on its own (stats.unpaired_change). Two sweeps are matched by
their axis values (every axis but the seed) and arm; within a matched point
the seeds both have, with the same flows, are paired, else the point's runs
are compared unpaired. A service's requests pair where both runs sent the
same ones (harness.analysis.service_changes). Every bootstrap is seeded
from the compared cells' ids (stats.cells_key): the same directories give
the same table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from harness.analysis import run_changes, stats
from harness.analysis.tables import (RUN_FILES, SEED_AXIS, SWEEP_REQUIRED, Run, read_run,
                                     read_sweep_record)
from harness.config.errors import ConfigError

RUN, SWEEP = "run", "sweep"
#: the flows' columns that make two runs' backgrounds the same flows
FLOW_IDENTITY = ("id", "src", "dst", "size", "start_s")
#: compare's table: the point's fields and arm first (sweeps), then these
COLUMNS = ["metric", "change", "change_low", "change_high", "samples", "seeds", "paired",
           "verdict", "decided"]
#: what -o may be: the table as CSV or Parquet, by its suffix
OUTPUT_SUFFIXES = (".csv", ".parquet")


@dataclass
class Comparison:
    """compare's result: one row per (point, arm,) metric (COLUMNS)."""
    kind: str                               # RUN or SWEEP
    table: pd.DataFrame
    keys: list[str] = field(default_factory=list)   # the point's fields and "arm" (sweeps)
    unmatched: int = 0                      # points of either sweep without a partner


def directory_kind(path: str | Path, field_name: str) -> str:
    """RUN or SWEEP; a ConfigError naming `field_name` for anything else."""
    d = Path(path)
    if not d.is_dir():
        raise ConfigError(field_name, f"{d} is not a directory (give a run directory or a "
                          "sweep directory)")
    if all((d / name).is_file() for name in SWEEP_REQUIRED):
        return SWEEP
    if all((d / name).is_file() for name in RUN_FILES):
        return RUN
    raise ConfigError(field_name, f"{d} is neither a run directory ({', '.join(RUN_FILES)}) "
                      f"nor a sweep directory ({', '.join(SWEEP_REQUIRED)})")


def check_output(path: str | Path | None) -> Path | None:
    """compare's -o, before anything is computed: a new file ending in .csv or
    .parquet (an existing file is never written over)."""
    if path is None:
        return None
    from harness.io import outdir

    out = Path(path)
    if out.suffix not in OUTPUT_SUFFIXES:
        raise ConfigError("-o", f"{out}: the table is written as CSV or Parquet: a file name "
                          f"ending in {' or '.join(OUTPUT_SUFFIXES)}")
    return outdir.check_new_file(out, "-o", lambda _: False, 1_000_000)


def same_flows(a: Run, b: Run) -> bool:
    """Whether two runs replayed the same background flows and seed."""
    if a.manifest.get("seed") != b.manifest.get("seed"):
        return False
    fa, fb = a.flows, b.flows
    if fa is None or fb is None or len(fa) != len(fb):
        return False
    cols = [c for c in FLOW_IDENTITY if c in fa and c in fb]
    left = fa[cols].sort_values("id").reset_index(drop=True)
    right = fb[cols].sort_values("id").reset_index(drop=True)
    return bool(left.equals(right))


def _read(d: Path) -> Run:
    return read_run(d, ("flows", "iterations", "services", "streams", "pfc"))


def _cell_id(run: Run) -> str:
    return str(run.manifest.get("digest") or run.dir)


def changes(a_runs: list[Run], b_runs: list[Run]) -> tuple[dict[str, stats.Interval], bool]:
    """Each metric's change of b against a (runs by seed, in the same order
    when paired) and whether it is paired: the runs of equal seeds with the
    same flows pair; with none, every run of each side, unpaired."""
    pairs = [(a, b) for a in a_runs for b in b_runs
             if a.manifest.get("seed") == b.manifest.get("seed") and same_flows(a, b)]
    if pairs:
        ref, arm = [a for a, _ in pairs], [b for _, b in pairs]
        key = stats.cells_key(list(map(_cell_id, ref)), list(map(_cell_id, arm)))
        return run_changes.paired_changes(ref, arm, key), True
    key = stats.cells_key(list(map(_cell_id, a_runs)), list(map(_cell_id, b_runs)))
    return run_changes.unpaired_changes(a_runs, b_runs, (*key, "unpaired")), False


def _rows(intervals: dict[str, stats.Interval], paired: bool, labels: dict) -> list[dict]:
    rows = []
    for metric, iv in intervals.items():
        verdict, decided = stats.judge(metric, iv)
        rows.append({**labels, "metric": metric, "change": iv.change, "change_low": iv.low,
                     "change_high": iv.high, "samples": iv.samples, "seeds": iv.seeds,
                     "paired": paired, "verdict": verdict, "decided": decided})
    return rows


def _sweep_points(d: Path) -> tuple[list[str], dict[tuple, list[tuple]]]:
    """A sweep's point fields (its axes but the seed) and, per (axis values...,
    arm), its measured cells as (seed, cell id)."""
    from harness.analysis.summary import MEASURED, none_if_na, point_value
    from harness.analysis.tables import read_sweep_summary

    record = read_sweep_record(d)
    fields = [f for f in record.get("axes", []) if f != SEED_AXIS]
    summary = read_sweep_summary(d, record)
    points: dict[tuple, list[tuple]] = {}
    for r in summary.to_dict("records"):
        if r.get("status") not in MEASURED:
            continue
        key = (*(point_value(none_if_na(r.get(f))) for f in fields), none_if_na(r.get("arm")))
        points.setdefault(key, []).append((none_if_na(r.get(SEED_AXIS)), r["cell"]))
    return fields, points


_UNSET = object()


def _setting(d: Path, field_name: str, load_grid: Callable[[Path], Any]):
    """The value a sweep gives a field it does not vary: its grid's [set], else
    its base scenario's (grid.toml as the sweep kept it); _UNSET if unknown."""
    from harness.analysis.summary import point_value

    try:
        grid = load_grid(d / "grid.toml")
    except (ConfigError, OSError):
        return _UNSET
    fixed = dict(grid.fixed)
    if field_name in fixed:
        return point_value(fixed[field_name])
    value = grid.base
    for part in field_name.split("."):
        if not isinstance(value, dict) or part not in value:
            return _UNSET
        value = value[part]
    return point_value(value)


def _rekeyed(d: Path, name: str, fields: list[str], points: dict, union: list[str],
             load_grid: Callable[[Path], Any]) -> dict:
    """points keyed by the values of every field of `union` (and the arm):
    a field the sweep does not vary takes the value it sets (_setting)."""
    settings = {}
    for f in union:
        if f not in fields:
            settings[f] = _setting(d, f, load_grid)
            if settings[f] is _UNSET:
                raise ConfigError(name, f"{d} neither varies nor sets {f}, an axis of the "
                                  "other sweep: points are matched by their values of "
                                  f"{', '.join(union)} and their arm")
    out = {}
    for key, cells in points.items():
        values = dict(zip(fields, key[:-1]))
        out[(*(values[f] if f in values else settings[f] for f in union), key[-1])] = cells
    return out


def compare(a: str | Path, b: str | Path, load_grid: Callable[[Path], Any]) -> Comparison:
    """B's change against A: two run directories, or two sweep directories
    matched by their settings: the values of every axis of either sweep (a
    field one sweep does not vary takes the value it sets) and the arm
    (ConfigError when the kinds differ or no point matches). `load_grid`
    reads the grid.toml a sweep kept, for the values it sets
    (harness.sweeps.grid.load_grid: grid files are the sweeps' to read)."""
    kind_a, kind_b = directory_kind(a, "A"), directory_kind(b, "B")
    if kind_a != kind_b:
        raise ConfigError("B", f"A is a {kind_a} directory and B a {kind_b} directory: "
                          "compare two runs or two sweeps")
    a, b = Path(a), Path(b)
    if kind_a == RUN:
        intervals, paired = changes([_read(a)], [_read(b)])
        return Comparison(RUN, pd.DataFrame(_rows(intervals, paired, {}), columns=COLUMNS))
    fields_a, points_a = _sweep_points(a)
    fields_b, points_b = _sweep_points(b)
    union = list(dict.fromkeys([*fields_a, *fields_b]))
    keyed_a = _rekeyed(a, "A", fields_a, points_a, union, load_grid)
    keyed_b = _rekeyed(b, "B", fields_b, points_b, union, load_grid)
    matched = [k for k in keyed_a if k in keyed_b]
    if not matched:
        raise ConfigError("B", f"no point of {b} matches one of {a}: points are matched by "
                          f"their values of {', '.join(union) or 'no axis'} and their arm")
    rows = []
    keys = [*union, "arm"]
    for key in matched:
        side_a = sorted(keyed_a[key], key=lambda sc: str(sc[0]))
        side_b = sorted(keyed_b[key], key=lambda sc: str(sc[0]))
        runs_a = [_read(a / "cells" / cell) for _, cell in side_a]
        runs_b = [_read(b / "cells" / cell) for _, cell in side_b]
        intervals, paired = changes(runs_a, runs_b)
        rows += _rows(intervals, paired, dict(zip(keys, key)))
    unmatched = len(set(keyed_a) - set(matched)) + len(set(keyed_b) - set(matched))
    return Comparison(SWEEP, pd.DataFrame(rows, columns=[*keys, *COLUMNS]), keys, unmatched)


def write(comparison: Comparison, out: Path) -> Path:
    """The table into `out` (checked by check_output), as CSV or Parquet by
    its suffix, atomically."""
    from harness.io import outdir

    table = comparison.table
    if out.suffix == ".csv":
        return outdir.write_from(out, lambda tmp: table.to_csv(tmp, index=False))
    return outdir.write_from(out, lambda tmp: table.to_parquet(tmp, index=False))


def lines(comparison: Comparison, a: str, b: str) -> list[str]:
    """The table as the console prints it: per point, each metric's change of
    B vs A [95 % interval] verdict, and whether it is paired."""
    from harness.analysis.metrics import delta_metric_words, in_points

    def pct(v: float) -> str:
        return "stalled" if v == float("inf") else f"{100 * v:+.1f}"

    def unit(metric: str) -> str:   # a fraction's difference is in points
        return "pp" if in_points(metric) else "%"

    out = [f"change of B ({b}) against A ({a}) [95 % interval] verdict:"]
    groups = (comparison.table.groupby(comparison.keys, sort=False, dropna=False)
              if comparison.keys else [((), comparison.table)])
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        paired = bool(group["paired"].iloc[0]) if len(group) else False
        how = ("paired: same background flows and seed" if paired else
               "unpaired: the runs share no background flows and seed")
        label = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in zip(comparison.keys, key))
        out.append(f"{label + ' ' if label else ''}({how}):")
        width = max(len(delta_metric_words(m)) for m in group["metric"])
        for r in group.to_dict("records"):
            change = r["change"]
            if change != change:
                text = "n/a (nothing to compare)"
            elif r["change_low"] != r["change_low"]:
                text = (f"{pct(change)} {unit(r['metric'])} "
                        f"({stats.too_few_words(r['metric'], r['samples'])})")
            else:
                text = (f"{pct(change)} {unit(r['metric'])} [{pct(r['change_low'])}, "
                        f"{pct(r['change_high'])}] {r['verdict']}")
            out.append(f"  {delta_metric_words(r['metric']):<{width}}  {text}")
    if comparison.unmatched:
        out.append(f"({comparison.unmatched} point(s) of one sweep have no partner in the "
                   "other: left out)")
    return out
