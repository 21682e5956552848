"""A sweep's tables, from its cells' run directories (tables only, no ns-3):
summary.parquet (one row per cell), deltas.parquet (per seed, each arm vs
its reference), deltas_mean.parquet (per point: the mean over seeds, and the
pooled change with its bootstrap interval and verdict, harness.analysis.stats),
causes.parquet, training_causes.parquet and service_causes.parquet (per
point and compared arm, what the background's FCT change, training's
iteration-time change and each service's latency change are made of:
harness.analysis.cause_changes) and, for a grid with a scale
axis, scale_check.parquet."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from harness.analysis import cause_changes, lossless, metrics, run_changes, services, stats
from harness.sweeps.adaptive import DECIDING_METRICS
from harness.analysis.summary import (MEASURED, NOT_RUN_REASON, STALLED, UNFINISHED, cell_status,
                                      none_if_na, point_value, stall_reason)
from harness.sweeps.cells import Cell
from harness.sweeps.grid import Grid
from harness.sweeps.sweepdir import cell_dir, is_done, write_atomic
from harness.analysis.tables import (POINT_LABEL, SEED_AXIS, Run, optional_table, read_record,
                                     read_table)

#: A cell's timing columns (they differ between two runs of the same cell), each
#: from its manifest's key
TIMING_COLUMNS = {"wall_s": "run_wall_s", "startup_s": "startup_s",
                  "peak_rss_mib": "peak_rss_mib", "events_per_s": "events_per_s",
                  "sim_s_per_wall_s": "sim_s_per_wall_s"}


def cell_row(cell: Cell, run_dir: Path | None, error: str | None) -> dict[str, Any]:
    """One tidy summary row: the cell's labels, status, reason and metrics.
    status (harness.analysis.summary): ok (run_dir), stalled (run_dir, but its training
    completed no iteration in the window: its other metrics stand), failed
    (error) or unfinished (neither: not run yet, or stopped by Ctrl-C;
    --resume runs it); reason: why a cell is not ok (failed: its error)."""
    status = cell_status(run_dir is not None, error)
    reason = error if error else NOT_RUN_REASON if status == UNFINISHED else None
    row: dict[str, Any] = {**cell.labels(), "status": status, "error": error, "reason": reason}
    if run_dir is None or error:
        return row
    # the harness's own records, read as every one is (a damaged one named)
    summary, manifest, config = (read_record(run_dir / f"{name}.json", what=f"the cell's {name}")
                                 for name in ("summary", "manifest", "config"))
    row.update(metrics.flat_summary(summary))
    row["status"] = cell_status(True, None, row["training_stalled"])
    if row["status"] == STALLED:
        row["reason"] = stall_reason(config.get("run", {}))   # the run as simulated
    if "lossless" in summary:   # the fabric's pause share, from its ports' table
        row["mean_pause_share"] = lossless.mean_pause_share(optional_table(run_dir, "pfc"),
                                                            summary)
    row.update(offered_load=config["background"]["offered_load"],
               compute_ms=config["training"]["compute_ms"],
               events=manifest["events"],
               **{column: manifest.get(key) for column, key in TIMING_COLUMNS.items()})
    return row


def aggregate(out: Path, grid: Grid, cells: list[Cell]) -> dict[str, pd.DataFrame]:
    """summary.parquet (one row per cell), deltas.parquet (per seed, each arm vs
    the reference) and deltas_mean.parquet (per point: the mean over seeds
    with its Student-t interval, and the pooled change with its bootstrap
    interval and verdict, harness.analysis.stats)."""
    tables = compare(out, grid, cells)
    if "deltas_mean" in tables and stats.SCALE_FIELD in grid.axis_fields:
        # the same cells at several scales
        point_keys = [k for k in grid.axis_fields if k != SEED_AXIS]
        tables["scale_check"] = stats.compare_scales(tables["deltas_mean"], point_keys)
    for name, df in tables.items():
        write_atomic(out / f"{name}.parquet", df.to_parquet(index=False))
    return tables


def compare(out: Path, grid: Grid, cells: list[Cell]) -> dict[str, pd.DataFrame]:
    """aggregate's summary, deltas and deltas_mean, written nowhere. Every row
    of deltas and deltas_mean is computed from its own point's cells alone, in
    their order: an adaptive sweep judges a point from its cells only
    (harness.sweeps.sweeping) and gets the rows of the whole grid's tables."""
    rows = []
    for cell in cells:
        failed = out / "failed" / f"{cell.id}.json"
        if is_done(out, cell):
            rows.append(cell_row(cell, cell_dir(out, cell), None))
        elif failed.is_file():
            rows.append(cell_row(cell, None, str(read_record(
                failed, {"error": str}, "the cell's failure record")["error"])))
        else:
            rows.append(cell_row(cell, None, None))
    summary = pd.DataFrame(rows)
    keys = grid.axis_fields
    # a grid's `points` may set fields others do not: some cells (a point
    # judged alone by adaptive seeding) lack those columns, which the whole
    # grid's table has empty for them
    summary = summary.reindex(columns=[*summary.columns,
                                       *(k for k in keys if k not in summary.columns)])
    tables = {"summary": summary}
    if grid.reference is not None or grid.per_point_arms:
        ok = summary[summary["status"].isin(MEASURED)]  # a stall is +inf
        if grid.per_point_arms:
            deltas = _per_point_deltas(ok, cells, keys)
        else:
            deltas = metrics.paired_deltas(ok, keys, "arm", grid.reference,
                                           _delta_metrics(summary))
        tables["deltas"] = deltas
        point_keys = [k for k in keys if k != SEED_AXIS]
        means = metrics.delta_means(deltas, point_keys, "arm")
        intervals, attributions = point_tables(out, grid, cells)
        tables["deltas_mean"] = _with_intervals(
            means, intervals, point_keys, [k for k in dict(grid.axes) if k != SEED_AXIS])
        # cells run before the causes were counted have none
        tables.update({name: table for name, table in attributions.items() if len(table)})
    return tables


def _delta_metrics(summary: pd.DataFrame) -> tuple:
    """The deltas' (summary column, metric) pairs: metrics.DELTA_METRICS,
    each service's changed statistics where the cells have services, and
    the pause share where they ran PFC."""
    fabric = ((("mean_pause_share", lossless.PAUSE_SHARE),)
              if "mean_pause_share" in summary.columns else ())
    return (*metrics.DELTA_METRICS, *services.delta_pairs(summary.columns), *fabric)


def _per_point_deltas(ok: pd.DataFrame, cells: list[Cell], keys: list[str]) -> pd.DataFrame:
    """metrics.paired_deltas point by point, each against its own reference
    arm; within a point only the seed varies (and fields a point does not set
    are missing, which must not become keys)."""
    reference = {c.id: c.reference for c in cells}
    point_keys = [k for k in keys if k != SEED_AXIS]
    seed_keys = [SEED_AXIS] if SEED_AXIS in keys else []
    parts = []
    labelled = ok.assign(_point=[json.dumps([none_if_na(r[k]) for k in point_keys],
                                            default=str) for _, r in ok.iterrows()])
    for _, group in labelled.groupby("_point", sort=False):
        ref = reference[group["cell"].iloc[0]]
        if ref is None:
            continue
        # "_point" keeps the keys a MultiIndex even when the seed is the only axis
        part = metrics.paired_deltas(group, ["_point", *seed_keys], "arm", ref,
                                     _delta_metrics(ok)).drop(columns="_point")
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
    return point_tables(out, grid, cells)[0]


def _training_causes(reference: list[Run], arm: list[Run]) -> list[dict]:
    row = cause_changes.iteration_causes(reference, arm)
    return [] if row is None else [row]


#: the attribution tables (harness.analysis.cause_changes), by name: per
#: point, compared arm and size class what the background's FCT change is
#: made of; per point and arm what training's iteration-time change is;
#: per point, arm and service what its request latency's change is
ATTRIBUTIONS = {"causes": cause_changes.fct_causes, "training_causes": _training_causes,
                "service_causes": cause_changes.service_causes}


def point_tables(out: Path, grid: Grid, cells: list[Cell]
                 ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """(interval_table's table, the ATTRIBUTIONS' tables): the same pairs of
    runs read once for all; each attribution's columns are the point
    fields, arm, reference, then its rows' own."""
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
    rows: list[dict] = []
    attributed: dict[str, list[dict]] = {name: [] for name in ATTRIBUTIONS}
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
            # seeded from the cells read, not the point: the same cells give
            # the same intervals in any grid (stats.cells_key)
            label = stats.cells_key([reference[s].id for s in shared],
                                    [seeds[s].id for s in shared])
            changes = run_changes.paired_changes(ref_runs, arm_runs, label)
            at = {**dict(zip(point_keys, key)), "arm": arm, "reference": point_reference[key]}
            for name, attribute in ATTRIBUTIONS.items():
                attributed[name] += [{**at, **row} for row in attribute(ref_runs, arm_runs)]
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
    return (pd.DataFrame(rows, columns=columns),
            {name: pd.DataFrame(table) for name, table in attributed.items()})


def _run_tables(out: Path, cell: Cell) -> Run:
    """What the paired statistics read of a cell's run: its flows and
    iterations, its services' requests and stream packets with their
    deadlines and SLOs (summary.json), and its PFC ports."""
    d = cell_dir(out, cell)
    return Run(flows=read_table(d / "flows.parquet"), iterations=optional_table(d, "iterations"),
               services=optional_table(d, "services"), streams=optional_table(d, "streams"),
               pfc=optional_table(d, "pfc"),
               summary=read_record(d / "summary.json", what="the cell's summary"), dir=d)


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

