"""The data behind a sweep's figures (pure: DataFrames in, DataFrames out, no
drawing): the operating-boundary map's table, the per-ratio lines, the
comparison bars, the FCT CDFs of chosen cells and the utilisation per
application. Each is read from the sweep's tables only (summary,
deltas_mean, the cells' flows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from harness.analysis import stats
from harness.analysis.tables import POINT_LABEL, SEED_AXIS as SEED_FIELD, read_table, rows_at
from harness.outputs.plots.run_figures import fct_cdf_frame
from harness.outputs.plots.sweep_axes import (boundary_axes, compared_arms, point_fields,
                                              point_label)
from harness.analysis.summary import FAILED, MEASURED, STALLED, UNFINISHED, with_status_reasons

# operating-boundary classes of the training slowdown (iteration-time change,
# low vs same; docs/model/metrics.md): green <= stats.GREEN_MAX, yellow <=
# stats.YELLOW_MAX, red above; the verdicts are harness.analysis.stats'
BOUNDARY_CLASSES = (*stats.TRAINING_CLASSES, stats.NOT_APPLICABLE)
# (deltas metric, boundary_table column prefix, panel title)
BOUNDARY_PANELS = (
    ("iteration_time", "iteration", "training iteration time"),
    ("fct_small_mean", "small_fct", "small-flow mean FCT"),
    ("fct_large_mean", "large_fct", "large-flow mean FCT"),
)
_MEASURED = ("u_training", "u_background", "offered_load", "iterations")
_NO_POINT = "_point"   # stands in for the point when a sweep has no axis but the seed
_INTERVAL_COLUMNS = ("change", "change_low", "change_high", "seeds", "verdict", "decided")


def _with_point(df: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """Group keys for points; a constant column when no axis but the seed
    varies, so groupby/merge keep one point instead of failing on []."""
    if keys:
        return df, keys
    return df.assign(**{_NO_POINT: 0}), [_NO_POINT]


def _sorted_points(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame[keys].drop_duplicates().sort_values(keys).reset_index(drop=True)


# --------------------------------------------------------------------------
# the operating-boundary map and the per-ratio lines


def metric_panels(metric: str) -> tuple[tuple[str, str, str], ...]:
    """The map of one deltas metric (`harness plot --metric`): one panel,
    as BOUNDARY_PANELS' entries are (metric, column prefix, title)."""
    from harness.analysis.metrics import delta_metric_words

    return ((metric, "iteration" if metric == "iteration_time" else "metric",
             delta_metric_words(metric)),)


def boundary_table(deltas_mean: pd.DataFrame, summary: pd.DataFrame, grid: dict,
                   panels: tuple = BOUNDARY_PANELS) -> pd.DataFrame:
    """One row per map cell: (compared arm, point) with the point's axis
    values, measured u_training / u_background of the reference arm (mean
    over its measured seeds), offered_load, seeds (seed values of the point),
    failed (cells of the pair over seeds that failed or did not run), stalled
    (those that ran and stalled), and for each panel (iteration, small_fct,
    large_fct; or `panels`' own): {p}_change, {p}_low, {p}_high (the pooled change and its 95 %
    bootstrap interval, fractions; +inf: stalled), {p}_seeds (seeds behind
    it), {p}_verdict and {p}_decided (harness.analysis.stats), {p}_reason (why there
    is no change, "" where there is one); color: the training verdict's class
    (green / yellow / red / n/a).

    Points come from the summary, so a point whose cells all failed still
    gets its (n/a) row."""
    keys = point_fields(grid)
    reference = grid.get("reference")
    summary = with_status_reasons(summary)
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, *_MEASURED])))
    summary, gkeys = _with_point(summary, keys)
    deltas_mean, _ = _with_point(deltas_mean.reindex(columns=list(dict.fromkeys(
        [*deltas_mean.columns, *_INTERVAL_COLUMNS]))), keys)
    ok = summary[summary["status"].isin(MEASURED)]
    # training/background utilisation of the reference arm: what "same" sees
    ref = ok[ok["arm"] == reference] if reference in set(ok["arm"]) else ok
    measured = ref.groupby(gkeys, dropna=False)[["u_training", "u_background"]].mean()
    offered = ok.groupby(gkeys, dropna=False)["offered_load"].mean()
    points = _sorted_points(summary, gkeys)
    seeds = (summary.groupby(gkeys, dropna=False)[SEED_FIELD].nunique()
             if SEED_FIELD in summary else pd.Series(1, index=points.set_index(gkeys).index))

    rows = []
    for arm in compared_arms(grid):
        pair = summary[summary["arm"].isin([arm, reference])]
        failed = pair[~pair["status"].isin(MEASURED)].groupby(gkeys, dropna=False).size()
        stalled = pair[pair["status"] == STALLED].groupby(gkeys, dropna=False).size()
        mine = deltas_mean[deltas_mean["arm"] == arm].set_index([*gkeys, "metric"])
        for point in points.itertuples(index=False):
            key = tuple(point)
            index = key if len(key) > 1 else key[0]
            row: dict = {"arm": arm, **dict(zip(gkeys, key))}
            row["u_training"] = measured["u_training"].get(index, np.nan)
            row["u_background"] = measured["u_background"].get(index, np.nan)
            row["offered_load"] = offered.get(index, np.nan)
            row["seeds"] = int(seeds.get(index, 1))
            row["failed"] = int(failed.get(index, 0))
            row["stalled"] = int(stalled.get(index, 0))
            for metric, prefix, _ in panels:
                found = mine.loc[(*key, metric)] if (*key, metric) in mine.index else None
                get = (lambda c: found[c] if found is not None and pd.notna(found[c])
                       else np.nan)
                row[f"{prefix}_change"] = float(get("change"))
                row[f"{prefix}_low"] = float(get("change_low"))
                row[f"{prefix}_high"] = float(get("change_high"))
                row[f"{prefix}_seeds"] = int(get("seeds")) if pd.notna(get("seeds")) else 0
                verdict = get("verdict")
                row[f"{prefix}_verdict"] = verdict if isinstance(verdict, str) else "n/a"
                row[f"{prefix}_decided"] = bool(get("decided")) if pd.notna(get("decided")) \
                    else False
                row[f"{prefix}_reason"] = "" if pd.notna(get("change")) else _no_change_reason(
                    rows_at(pair, gkeys, key), arm, reference, metric)
            row["color"] = (_verdict_color(row["iteration_verdict"], row["iteration_change"])
                            if "iteration_verdict" in row else stats.NOT_APPLICABLE)
            rows.append(row)
    columns = ["arm", *gkeys, "u_training", "u_background", "offered_load", "seeds", "failed",
               "stalled",
               *(f"{p}_{c}" for _, p, _ in panels
                 for c in ("change", "low", "high", "seeds", "verdict", "decided", "reason")),
               "color"]
    table = pd.DataFrame(rows, columns=columns)
    return table.drop(columns=[_NO_POINT], errors="ignore")


def _no_change_reason(pair: pd.DataFrame, arm: str, reference: str, metric: str) -> str:
    """Why a map cell has no change, in a few words: the summary rows of its
    point's two arms (all seeds) say whether no seed has both arms measured
    (cells failed or not run), the reference stalled, or, both having run,
    there was nothing to compare (no flow of the panel's size class)."""
    seeds = (lambda rows: set(rows[SEED_FIELD]) if SEED_FIELD in rows else {None})
    measured = pair[pair["status"].isin(MEASURED)]
    mine, ref = measured[measured["arm"] == arm], measured[measured["arm"] == reference]
    both = seeds(mine) & seeds(ref)
    if not both:
        failed = int((pair["status"] == FAILED).sum())
        if failed:
            return f"{failed} cell{'s' if failed > 1 else ''} failed"
        return "not run yet" if (pair["status"] == UNFINISHED).any() else "no cells"
    if metric.startswith(("iteration_time", "end_spread")):
        in_both = (lambda rows: rows[rows[SEED_FIELD].isin(both)] if SEED_FIELD in rows
                   else rows)
        if (in_both(ref)["status"] == STALLED).all():
            return ("both arms stalled" if (in_both(mine)["status"] == STALLED).all()
                    else "reference stalled")
        return "no iteration pairs"
    size = metric.split("_")[1] if metric.startswith("fct_") else ""
    return f"no {size} flow in both arms" if size != "all" else "no flow in both arms"


def _verdict_color(verdict: str, change: float) -> str:
    """The colour class of a training verdict; when undecided ("green/yellow",
    drawn hatched) the class of the estimate itself, the best guess: an
    undecided +32 % [-26, +90] is red, not green."""
    if "/" in verdict and change == change:
        verdict = stats.slowdown_class(change)
    return verdict if verdict in BOUNDARY_CLASSES else stats.NOT_APPLICABLE


def per_ratio_frame(deltas_mean: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """The per-ratio lines: deltas_mean rows of the three boundary metrics
    for the compared arms (point fields, arm, metric, seeds, change and its
    bootstrap interval change_low/change_high)."""
    metrics = [m for m, _, _ in BOUNDARY_PANELS]
    deltas_mean = deltas_mean.reindex(columns=list(dict.fromkeys(
        [*deltas_mean.columns, *_INTERVAL_COLUMNS])))
    rows = deltas_mean[deltas_mean["metric"].isin(metrics)
                       & deltas_mean["arm"].isin(compared_arms(grid))]
    return rows[[*point_fields(grid), "arm", "metric", "seeds", "change", "change_low",
                 "change_high"]].reset_index(drop=True)


# --------------------------------------------------------------------------
# the comparison of a grid without the map's axes


# (summary column, panel title) of the comparison figure; values in ms
COMPARISON_PANELS = (
    ("mean_iteration_s", "training iteration time (ms)"),
    ("fct_small_mean_s", "small-flow mean FCT (ms)"),
    ("fct_large_mean_s", "large-flow mean FCT (ms)"),
)


def comparison_frame(summary: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """Long table for the comparison figure: one row per ok cell and panel
    (point label, arm, metric, value in ms); empty when the grid varies R or
    the background (the map answers those) or nothing but the seed. Labelled
    points (harness.analysis.tables.POINT_LABEL) are named by their label and always compared;
    where they bring their own arms, each bar is "label: arm" and the hue is
    its role, the point's reference arm or not."""
    labelled = POINT_LABEL in point_fields(grid)
    if (any(boundary_axes(grid)) and not labelled) or not point_fields(grid):
        return pd.DataFrame(columns=["point", "arm", "metric", "value_ms"])
    keys = [POINT_LABEL] if labelled else point_fields(grid)
    own_reference = {c["id"]: c["reference"] for c in grid.get("cells", []) if "reference" in c}
    ok = summary[summary["status"].isin(MEASURED)]
    rows = []
    for record in ok.to_dict("records"):
        label = ", ".join(str(record[k]) for k in keys)
        arm = record.get("arm") or ""
        if record.get("cell") in own_reference:
            label = f"{label}: {arm}"
            arm = "reference" if arm == own_reference[record["cell"]] else "compared"
        for column, title in COMPARISON_PANELS:
            value = record.get(column)
            if value is not None and np.isfinite(value):
                rows.append((label, arm, title, float(value) * 1e3))
    return pd.DataFrame(rows, columns=["point", "arm", "metric", "value_ms"])


# --------------------------------------------------------------------------
# FCT CDFs of chosen cells


def default_cdf_cells(summary: pd.DataFrame, grid: dict) -> list[str]:
    """Cells of the point hardest on the background: highest background load
    (rate), then lowest R, then the lowest value of every other axis (seed
    included); one measured cell (ok or stalled: its flows stand) per arm, in
    the grid's arm order."""
    ok = summary[summary["status"].isin(MEASURED)]
    if ok.empty:
        return []
    y, x = boundary_axes(grid)
    axes = list(grid.get("axes", []))
    order = [f for f in (x, y) if f is not None] + [f for f in axes if f not in (x, y)]
    if order:
        first = ok.sort_values(order, ascending=[f != x for f in order]).iloc[0]
        ok = ok[(ok[axes] == first[axes]).all(axis=1)]
    arm_order = {a: i for i, a in enumerate(grid.get("arms", []))}
    ok = ok.sort_values("arm", key=lambda s: s.map(arm_order))
    return list(ok.drop_duplicates("arm")["cell"])


class UnknownCellError(ValueError):
    """A cell id (or prefix) that names no single cell of the sweep."""


def resolve_cells(summary: pd.DataFrame, wanted: list[str]) -> list[str]:
    """Full cell ids for ids or unique id prefixes; UnknownCellError names a wrong one."""
    ids = list(summary["cell"])
    out = []
    for w in wanted:
        hits = [c for c in ids if c == w] or [c for c in ids if c.startswith(w)]
        if len(hits) != 1:
            what = "no" if not hits else f"{len(hits)}"
            raise UnknownCellError(f"{what} cells match {w!r} (cell ids are in "
                                   "summary.parquet)")
        out.append(hits[0])
    return out


def cells_cdf_frame(sweep_dir: Path, summary: pd.DataFrame, cells: list[str],
                    axes: list[str]) -> pd.DataFrame:
    """FCT CDFs per size class for each cell (cell, label, size_class,
    fct_ms, cdf); the label names the arm and the axis values that differ
    between the chosen cells. Cells without flows.parquet are left out."""
    rows = summary.set_index("cell").loc[cells]
    varying = [f for f in axes if rows[f].nunique(dropna=False) > 1]
    parts = []
    for cell, r in rows.iterrows():
        path = Path(sweep_dir) / "cells" / cell / "flows.parquet"
        if not path.is_file():
            continue
        differ = point_label({f: r[f] for f in varying})
        label = ", ".join(str(v) for v in (r["arm"], differ) if pd.notna(v) and v) \
            or f"cell {cell}"
        cdf = fct_cdf_frame(read_table(path))
        parts.append(cdf.assign(cell=cell, label=label))
    if not parts:
        return pd.DataFrame(columns=["size_class", "fct_ms", "cdf", "cell", "label"])
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------
# utilisation per application


def utilization_frame(summary: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """Mean host-uplink utilisation per application for each (point, arm),
    over its measured seeds (point fields, arm, n = measured cells,
    u_training, u_background, offered_load, missing: why a (point, arm) has
    none, "" where it has); a (point, arm) whose cells all failed keeps its
    row, with n 0 and NaN values, so the figure can say n/a and why."""
    keys = point_fields(grid)
    values = ["u_training", "u_background", "offered_load"]
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, *_MEASURED])))
    frame, gkeys = _with_point(summary, keys)
    ok = frame["status"].isin(MEASURED)
    frame = frame.assign(ok=ok, **{v: frame[v].where(ok) for v in values})
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "arm", "n", *values, "missing"])
    out = frame.groupby([*gkeys, "arm"], dropna=False, sort=False).agg(
        n=("ok", "sum"), **{v: (v, "mean") for v in values},
        missing=("status", _missing_reason)).reset_index()
    arm_order = {a: i for i, a in enumerate(grid.get("arms", []))}
    out = out.sort_values([*gkeys, "arm"], key=lambda s: s.map(arm_order) if s.name == "arm"
                          else s).reset_index(drop=True)
    return out.drop(columns=[_NO_POINT], errors="ignore")


def _missing_reason(statuses: pd.Series) -> str:
    """Why a group of cells has no measured one: "failed" or "not run yet"
    ("" when one was measured)."""
    if statuses.isin(MEASURED).any():
        return ""
    return "failed" if (statuses == FAILED).any() else "not run yet"
