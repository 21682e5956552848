"""Figures of a sweep directory, from sweep.json and the sweep's tables only.

plot_sweep(sweep_dir) writes:
- operating-boundary: the reference study's map over U_background (x) and
  U_training ~ 1/R (y), three panels per compared arm: (a) the training
  verdict (iteration-time change, green <= 1 % / yellow <= 30 % / red, hatched
  where the 95 % interval spans two classes, coloured then by the estimate's
  class), (b) and (c) the small- and
  large-flow mean FCT change on a diverging scale centred at 0 (green: the
  background is faster), hatched where the change is not significant at
  95 % (its interval contains 0); every cell prints its change and interval
  (harness.analysis.stats);
- per-ratio: one panel per R, the same changes over the background axis
  with their 95 % CIs;
- fct-cdf-cells: FCT CDFs per size class of chosen cells (default: both
  arms of the highest-load, lowest-R point);
- utilization-apps: mean host-uplink utilisation of training and background
  per point and arm;
- comparison: for a grid over something other than R and the background
  (e.g. training.policy), the absolute iteration time and small/large-flow
  mean FCT per point and arm, with 95 % CIs over seeds. Such a grid has no
  map (one cell each); this is its answer.
"""

from __future__ import annotations


from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from harness.analysis import stats
from harness.sweeps.cells import FAILED, MEASURED, STALLED, UNFINISHED, with_status_reasons
from harness.analysis.metrics import SIZE_CLASSES
from harness.outputs.plots.run_figures import fct_cdf_frame
from harness.outputs.plots.style import PALETTE, fit_in_data_width, new_figure, save_figure
from harness.analysis.tables import POINT_LABEL, SEED_AXIS as SEED_FIELD, read_record, read_table
from harness.analysis.tables import Sweep as SweepTables, load_sweep  # noqa: F401 (plots' names)



RATIO_FIELD = "training.ratio"
BACKGROUND_FIELDS = ("background.load", "background.rate")

# operating-boundary classes of the training slowdown (iteration-time change,
# low vs same; docs/model/metrics.md): green <= stats.GREEN_MAX, yellow <=
# stats.YELLOW_MAX, red above; the verdicts are harness.analysis.stats'
BOUNDARY_CLASSES = (*stats.TRAINING_CLASSES, stats.NOT_APPLICABLE)
# light tones so the black cell text stays legible on every class
BOUNDARY_COLORS = {"green": "#9ed89e", "yellow": "#f7dc6f", "red": "#ef8a80", "n/a": "#d3d3d3"}
BOUNDARY_LEGEND = {
    **stats.CLASS_MEANING,
    stats.NOT_APPLICABLE: f"{stats.NOT_APPLICABLE}: no change measured (the cell says why)",
}
# (deltas metric, boundary_table column prefix, panel title)
BOUNDARY_PANELS = (
    ("iteration_time", "iteration", "training iteration time"),
    ("fct_small_mean", "small_fct", "small-flow mean FCT"),
    ("fct_large_mean", "large_fct", "large-flow mean FCT"),
)
# the map's caption, one line per statement (fit_text breaks them further)
BOUNDARY_CAPTION = (
    "(a) training slowdown class, hatched where the 95 % interval spans two classes "
    "(coloured by the estimate's class)",
    "(b), (c) hatched where the change is not significant (the interval contains 0)",
    "Each cell: change [95 % interval]; n/a: no change measured, and why",
)
_MEASURED = ("u_training", "u_background", "offered_load", "iterations")
_NO_POINT = "_point"   # stands in for the point when a sweep has no axis but the seed


# --------------------------------------------------------------------------
# sweep structure (pure)


def point_fields(grid: dict) -> list[str]:
    """Axis fields that define a point: every axis but the seed (seeds repeat it)."""
    return [f for f in grid.get("axes", []) if f != SEED_FIELD]


def boundary_axes(grid: dict) -> tuple[str | None, str | None]:
    """(y field, x field) of the map: training.ratio and the background
    rate/load axis, each None when the grid does not vary it."""
    axes = grid.get("axes", [])
    y = RATIO_FIELD if RATIO_FIELD in axes else None
    x = next((f for f in BACKGROUND_FIELDS if f in axes), None)
    return y, x


def facet_fields(grid: dict) -> list[str]:
    """Point fields the map's two axes do not show: each value combination
    (and each compared arm) gets its own row of panels."""
    shown = set(boundary_axes(grid))
    return [f for f in point_fields(grid) if f not in shown]


def compared_arms(grid: dict) -> list[str]:
    """Arms that have deltas: every arm but the reference."""
    reference = grid.get("reference")
    return [a for a in grid.get("arms", []) if a != reference] if reference else []


def _with_point(df: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """Group keys for points; a constant column when no axis but the seed
    varies, so groupby/merge keep one point instead of failing on []."""
    if keys:
        return df, keys
    return df.assign(**{_NO_POINT: 0}), [_NO_POINT]


def _sorted_points(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame[keys].drop_duplicates().sort_values(keys).reset_index(drop=True)


# --------------------------------------------------------------------------
# data behind the sweep figures (pure)


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
                    _rows_at(pair, gkeys, key), arm, reference, metric)
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


_INTERVAL_COLUMNS = ("change", "change_low", "change_high", "seeds", "verdict", "decided")


def _rows_at(frame: pd.DataFrame, keys: list[str], key: tuple) -> pd.DataFrame:
    """frame's rows at one point (a missing value matches a missing value)."""
    mask = np.ones(len(frame), dtype=bool)
    for k, v in zip(keys, key):
        mask &= (frame[k].isna() if pd.isna(v) else frame[k] == v).to_numpy()
    return frame[mask]


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
    return verdict if verdict in BOUNDARY_COLORS else stats.NOT_APPLICABLE


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


def point_label(point: dict, offered_load: float | None = None) -> str:
    """Short label of a point: "R=2, load 10 %", "λ=46 (≈23 %)", "seed 1"."""
    parts = []
    for field, value in point.items():
        if field == RATIO_FIELD:
            parts.append(f"R={value:g}")
        elif field == "background.load":
            parts.append(f"load {_pct(float(value))} %")
        elif field == "background.rate":
            extra = f" (≈{_pct(offered_load)} %)" if offered_load is not None and \
                np.isfinite(offered_load) else ""
            parts.append(f"λ={value:g}{extra}")
        elif field == SEED_FIELD:
            parts.append(f"seed {value}")
        else:
            parts.append(f"{field.rsplit('.', 1)[-1]}={value}")
    return ", ".join(parts)


def _pct(fraction: float) -> str:
    """A fraction as a short percentage number: 0.25 -> '25', 0.0625 -> '6.2'."""
    v = 100 * fraction
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"


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


def ratio_label(ratio: float) -> str:
    """y tick of a ratio: 'R=4 (≈25 %)', the training load being about 1/R."""
    return f"R={ratio:g} (≈{_pct(1 / ratio)} %)" if ratio else f"R={ratio:g}"


def background_labels(summary: pd.DataFrame, grid: dict) -> dict:
    """x tick per background axis value, as the offered load per host link in %
    (a rate axis shows λ too); {None: label} when no background axis varies."""
    _, x = boundary_axes(grid)
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, "offered_load"])))
    if x is None:
        offered = summary["offered_load"].mean()
        return {None: f"{_pct(offered)} %" if np.isfinite(offered) else "background"}
    offered = summary.groupby(x)["offered_load"].mean()
    labels = {}
    for value, load in offered.items():
        if x == "background.load":
            labels[value] = f"{_pct(float(value))} %"
        else:
            labels[value] = f"λ={value:g}" + (f" (≈{_pct(load)} %)" if np.isfinite(load) else "")
    return labels


# --------------------------------------------------------------------------
# drawing the sweep figures


def _facets(frame: pd.DataFrame, grid: dict) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per compared arm and value combination of the facet fields."""
    by = ["arm", *facet_fields(grid)]
    out = []
    for key, rows in frame.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        extra = point_label(dict(zip(by[1:], key[1:])))
        out.append((f"{key[0]} vs {grid.get('reference')}" + (f", {extra}" if extra else ""),
                    rows))
    return out


def _y_order(table: pd.DataFrame, y: str | None) -> list:
    """Map rows bottom to top by training load: descending R."""
    return sorted(table[y].unique(), reverse=True) if y else [None]


def _x_order(table: pd.DataFrame, x: str | None) -> list:
    return sorted(table[x].unique()) if x else [None]


def _map_cell(rows: pd.DataFrame, y: str | None, yv, x: str | None, xv) -> pd.Series | None:
    """The boundary_table row at (yv, xv) of one facet; None if it has none."""
    mask = np.ones(len(rows), dtype=bool)
    if y:
        mask &= (rows[y] == yv).to_numpy()
    if x:
        mask &= (rows[x] == xv).to_numpy()
    hit = rows[mask]
    return hit.iloc[0] if len(hit) else None


def _pct_text(v: float) -> str:
    # two decimals below the green limit (1 %), where 0.4 vs 0.04 matters
    return f"{100 * v:+.2f}" if abs(100 * v) < 100 * stats.GREEN_MAX else f"{100 * v:+.1f}"


def _cell_text(change: float, low: float, high: float, seeds: int, all_seeds: int,
               reason: str = "") -> str:
    """'+12.3 %' over '[+8.1, +17.0]' (the 95 % interval), then 'n=1/2 seeds'
    when some seeds gave no pair; 'too few samples' for an estimate without
    an interval (harness.analysis.stats); 'stalled' or 'n/a' over its reason without a
    value."""
    if change == np.inf:
        return "stalled"  # no iteration completed in the window where the reference did
    if not np.isfinite(change):
        return f"n/a\n{reason}" if reason else "n/a"
    text = f"{_pct_text(change)} %"
    if np.isfinite(low) and np.isfinite(high):
        text += f"\n[{_pct_text(low)}, {_pct_text(high)}]"
    elif high == np.inf:
        text += f"\n[{_pct_text(low)}, stalled]"
    elif np.isnan(low):
        text += f"\n{stats.TOO_FEW}"   # stats.MIN_ITERATION_PAIRS / MIN_FLOW_PAIRS
    if seeds < all_seeds:
        text += f"\nn={seeds}/{all_seeds} seeds"
    return text


def _fct_colors(table: pd.DataFrame, prefix: str):
    """A diverging colour scale centred at 0 for one FCT panel (over every
    facet of `table`): green where the background is faster (negative
    change), red where slower; its limit is the panel's largest |change| (at
    least 10 %, at most 100 %)."""
    from matplotlib import colormaps
    from matplotlib.colors import TwoSlopeNorm

    values = table[f"{prefix}_change"].to_numpy(dtype=float)
    finite = np.abs(values[np.isfinite(values)])
    limit = float(np.clip(finite.max() if len(finite) else 0.1, 0.1, 1.0))
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit)
    return colormaps["RdYlGn_r"], norm


# a map cell's size (inches) and its text's size relative to it: the
# cell's height over MAP_TEXT_LINES lines (fit_in_data_width narrows a
# line wider than the cell); the report sizes the image from it
MAP_CELL_WIDTH_IN, MAP_CELL_HEIGHT_IN = 1.3, 0.95
MAP_TEXT_LINES = 6
MAP_TEXT_PT = 72 * MAP_CELL_HEIGHT_IN / MAP_TEXT_LINES


def draw_boundary(table: pd.DataFrame, grid: dict, x_labels: dict, title: str,
                  panels: tuple = BOUNDARY_PANELS) -> Figure:
    """Per facet row (compared arm, other axes), three maps: (a) the training
    verdict, (b) small-flow and (c) large-flow mean FCT change, each with its
    own colours; hatched cells are undecided at 95 %. `panels`: other
    metrics instead (metric_panels: one, for `harness plot --metric`); the
    training classes colour the mean iteration time's panel, a diverging
    scale centred at 0 every other."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.patches import Patch, Rectangle

    y, x = boundary_axes(grid)
    facets = _facets(table, grid)
    ys, xs = _y_order(table, y), _x_order(table, x)
    width = len(panels) * max(3.6, MAP_CELL_WIDTH_IN * len(xs) + 1.4) + 2.0
    fig, axes = new_figure(width, len(facets) * max(2.8, MAP_CELL_HEIGHT_IN * len(ys) + 1.8)
                           + 1.0, nrows=len(facets), ncols=len(panels))
    size = MAP_TEXT_PT   # relative to the cell, whatever the grid's size
    trained = [m == "iteration_time" for m, _, _ in panels]
    for row, (facet, rows) in enumerate(facets):
        for col, (metric, prefix, name) in enumerate(panels):
            ax = axes[row, col]
            # one scale per panel for every facet: colours compare across rows
            cmap, norm = _fct_colors(table, prefix) if not trained[col] else (None, None)
            for i, yv in enumerate(ys):
                for j, xv in enumerate(xs):
                    r = _map_cell(rows, y, yv, x, xv)
                    # no row: the grid's [[points]] leave this combination out
                    face, hatch, text = BOUNDARY_COLORS["n/a"], None, "n/a\nnot a point"
                    if r is not None:
                        change = r[f"{prefix}_change"]
                        text = _cell_text(change, r[f"{prefix}_low"], r[f"{prefix}_high"],
                                          int(r[f"{prefix}_seeds"]), int(r["seeds"]),
                                          r.get(f"{prefix}_reason", ""))
                        if trained[col]:
                            face = BOUNDARY_COLORS[r["color"]]
                        elif np.isfinite(change):
                            face = cmap(norm(float(np.clip(change, norm.vmin, norm.vmax))))
                        if not r[f"{prefix}_decided"] and r[f"{prefix}_verdict"] != "n/a":
                            hatch = "///"
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, edgecolor="white",
                                           linewidth=2, facecolor=face))
                    if hatch:
                        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch=hatch, edgecolor="#555555", linewidth=0))
                    fit_in_data_width(ax.text(
                        j, i, text, ha="center", va="center", fontsize=size,
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                              "alpha": 0.6, "linewidth": 0} if hatch else None), 1.0)
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_ylim(-0.5, len(ys) - 0.5)
            ax.set_xticks(range(len(xs)), [x_labels.get(v, str(v)) for v in xs])
            if col == 0:
                ax.set_yticks(range(len(ys)), [ratio_label(v) if y else _training_label(rows)
                                               for v in ys])
                ax.set_ylabel("U_training ≈ 1/R")
            else:
                ax.set_yticks(range(len(ys)), [""] * len(ys))
            if not trained[col]:
                bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8,
                                   format=FuncFormatter(lambda v, _: f"{100 * v:+.0f} %"))
                bar.set_label("change; green: background faster" if metric.startswith("fct_")
                              else "change; green: smaller", fontsize="small")
            ax.grid(False)
            ax.set_xlabel("U_background (offered load per host link)")
            letter = f"({'abcdefgh'[col]}) " if len(panels) > 1 else ""
            what = ("verdict: iteration-time change" if trained[col] else
                    "mean FCT change" if panels is BOUNDARY_PANELS else "change vs the reference")
            # a line each: fit_text breaks them further to the panel's width
            ax.set_title(f"{letter}{name}\n{what}\n{facet}", fontsize="medium")
    # two rows of entries: the legend stays within three panels of the narrowest map
    # the training classes where a panel is coloured by them, n/a always
    shown = BOUNDARY_CLASSES if any(trained) else (stats.NOT_APPLICABLE,)
    fig.legend(handles=[*(Patch(facecolor=BOUNDARY_COLORS[c], label=BOUNDARY_LEGEND[c])
                          for c in shown),
                        Patch(facecolor="white", edgecolor="#555555", hatch="///",
                              label="undecided at 95 %")],
               loc="outside lower center", ncols=3, fontsize="small",
               title="\n".join(BOUNDARY_CAPTION if panels is BOUNDARY_PANELS
                               else _metric_caption(panels)), title_fontsize="small")
    fig.suptitle(title)
    return fig


def _metric_caption(panels: tuple) -> tuple[str, ...]:
    """The legend's title of a map of other metrics than the three."""
    trained = any(m == "iteration_time" for m, _, _ in panels)
    return (("Training slowdown class, hatched where the 95 % interval spans two classes"
             if trained else
             "Change against the reference arm; hatched where it is not significant "
             "(the 95 % interval contains 0)"),
            f"Each cell: change [95 % interval]; {stats.TOO_FEW}: too few pairs for an "
            "interval; n/a: no change measured, and why")


def _training_label(rows: pd.DataFrame) -> str:
    """The single map row when R is not an axis: the measured training load."""
    u = rows["u_training"].mean()
    return f"U_training ≈ {_pct(u)} %" if np.isfinite(u) else "training"


PER_RATIO_STYLE = {"iteration_time": PALETTE[0], "fct_small_mean": PALETTE[1],
                   "fct_large_mean": PALETTE[4]}


def draw_per_ratio(frame: pd.DataFrame, grid: dict, x_labels: dict, title: str) -> Figure:
    """One panel per R (columns, descending R = rising training load) and per
    facet (rows): the change in % over the background axis, with its 95 %
    bootstrap interval."""
    y, x = boundary_axes(grid)
    facets = _facets(frame, grid)
    ratios = _y_order(frame, y)
    xs = _x_order(frame, x)
    # more than three R: wrap onto rows, so the figure stays page-shaped
    ncols = len(ratios) if len(ratios) <= 3 else -(-len(ratios) // 2)
    per_facet = -(-len(ratios) // ncols)
    fig, axes = new_figure(max(4.0, 0.9 * len(xs) + 1.6) * ncols + 0.6,
                            3.4 * len(facets) * per_facet + 0.8, nrows=len(facets) * per_facet,
                            ncols=ncols, sharey=True)
    for ax in axes.flat[len(facets) * len(ratios):]:
        ax.set_visible(False)
    names = {m: name for m, _, name in BOUNDARY_PANELS}
    for f, (facet, rows) in enumerate(facets):
        for k_ratio, ratio in enumerate(ratios):
            row, col = f * per_facet + k_ratio // ncols, k_ratio % ncols
            ax = axes[row, col]
            here = rows[rows[y] == ratio] if y else rows
            for k, metric in enumerate(PER_RATIO_STYLE):
                m = here[here["metric"] == metric]
                if x:
                    m = m.set_index(x).reindex(xs)
                pos = np.arange(len(m)) + (k - 1) * 0.08   # apart, so the CI bars do not hide
                mean = m["change"].to_numpy(dtype=float) * 100
                err = np.vstack([mean - m["change_low"].to_numpy(dtype=float) * 100,
                                 m["change_high"].to_numpy(dtype=float) * 100 - mean])
                ax.errorbar(pos, mean, yerr=np.nan_to_num(err, posinf=0.0),
                            color=PER_RATIO_STYLE[metric],
                            marker="o", capsize=3, label=names[metric])
            ax.axhline(0, color="black", linewidth=0.8)
            # linear within the green limit, logarithmic beyond: iteration changes
            # of a fraction of a per cent stay visible next to FCT changes and
            # CIs of hundreds of per cent
            ax.set_yscale("symlog", linthresh=100 * stats.GREEN_MAX)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            for limit in (stats.GREEN_MAX, stats.YELLOW_MAX):
                ax.axhline(100 * limit, color="0.45", linestyle=":", linewidth=1)
            ax.set_xticks(range(len(xs)), [x_labels.get(v, str(v)).replace(" (", "\n(")
                                           for v in xs])
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_xlabel("background load per host link" if x != "background.rate"
                          else "background rate λ (offered load)")
            head = f"R={ratio:g} (U_training ≈ {_pct(1 / ratio)} %)" if y else "all points"
            ax.set_title(head + (f"\n{facet}" if len(facets) > 1 else ""), fontsize="medium")
            if col == 0:
                ax.set_ylabel(f"change vs {grid.get('reference')} (%, symlog)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    from matplotlib.lines import Line2D
    handles.append(Line2D([], [], color="0.45", linestyle=":"))
    labels.append(f"slowdown class limits ({100 * stats.GREEN_MAX:g} %, "
                  f"{100 * stats.YELLOW_MAX:g} %)")
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize="small")
    fig.suptitle(title)
    return fig


def draw_cdf_cells(frame: pd.DataFrame, title: str) -> Figure:
    """One panel per size class, one CDF step line per chosen cell."""
    fig, axes = new_figure(13, 4, ncols=len(SIZE_CLASSES), sharey=True)
    labels = list(dict.fromkeys(frame["label"]))
    for ax, name in zip(axes[0], SIZE_CLASSES):
        here = frame[frame["size_class"] == name]
        for k, label in enumerate(labels):
            rows = here[here["label"] == label]
            if len(rows):
                ax.step(np.r_[rows["fct_ms"].iloc[0], rows["fct_ms"]], np.r_[0.0, rows["cdf"]],
                        where="post", color=PALETTE[k % len(PALETTE)],
                        label=f"{label} (n={len(rows)})")
        if len(here):
            ax.set_xscale("log")
            # plain numbers, major ticks only: 2x10^-1, 3x10^-1 ... overlap
            ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.legend(fontsize="small", loc="lower right")
        else:
            ax.text(0.5, 0.5, "no measured flows", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_xticks([])   # an empty panel has no FCT scale to show
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{name} flows")
        ax.set_xlabel("flow completion time (ms)")
    axes[0, 0].set_ylabel("fraction of flows")
    fig.suptitle(title)
    return fig


APP_COLOR = {"training": PALETTE[0], "background": PALETTE[1]}
_ARM_HATCH = ("", "//", "..", "xx", "\\\\", "oo")


def draw_utilization_apps(frame: pd.DataFrame, grid: dict, title: str) -> Figure:
    """One panel per R (all points in one panel without a ratio axis); bars
    grouped by the rest of the point, per arm (hatch) one bar per application
    (colour), the offered background load marked over each background bar."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    y, _ = boundary_axes(grid)
    keys = [f for f in point_fields(grid) if f != y]
    # a sweep without arms (arm None): one unlabelled bar pair per point
    frame = frame.assign(arm=frame["arm"].astype(object).where(frame["arm"].notna(), ""))
    arms = list(dict.fromkeys(frame["arm"]))
    hatch = {a: _ARM_HATCH[i % len(_ARM_HATCH)] for i, a in enumerate(arms)}
    panels = _y_order(frame, y)
    width = 0.8 / (2 * len(arms))
    n_groups = len(frame[keys].drop_duplicates()) if keys else 1
    fig, axes = new_figure(max(7.0, 0.32 * 2 * len(arms) * n_groups + 3.5),
                            2.6 * len(panels) + 1.0, nrows=len(panels), sharey=True)
    for ax, ratio in zip(axes[:, 0], panels):
        here = frame[frame[y] == ratio] if y else frame
        groups = here[keys].drop_duplicates().reset_index(drop=True) if keys \
            else pd.DataFrame([{}])
        labels = []
        for i, point in enumerate(groups.to_dict("records")):
            rows = here[(here[keys] == pd.Series(point)).all(axis=1)] if keys else here
            offered = rows["offered_load"].mean()
            labels.append(point_label(point, offered))
            for a, arm in enumerate(arms):
                r = rows[rows["arm"] == arm]
                for k, app in enumerate(("training", "background")):
                    pos = i - 0.4 + width * (2 * a + k + 0.5)
                    value = float(r[f"u_{app}"].iloc[0]) * 100 if len(r) else np.nan
                    if not np.isfinite(value):   # no seed of this cell was measured
                        why = r["missing"].iloc[0] if len(r) and "missing" in r else ""
                        ax.text(pos, 0, f"n/a: {why}" if why else "n/a", rotation=90,
                                ha="center", va="bottom", fontsize="x-small")
                        continue
                    ax.bar(pos, value, width, color=APP_COLOR[app], hatch=hatch[arm],
                           edgecolor="white", linewidth=0.5)
                    if app == "background" and np.isfinite(offered):
                        ax.hlines(100 * offered, pos - width / 2, pos + width / 2,
                                  color="black", linewidth=1.5)
        ax.set_xticks(range(len(groups)), labels)
        ax.set_xlim(-0.5, len(groups) - 0.5)
        ax.set_ylabel("host-uplink util. (%)")
        ax.grid(axis="x", visible=False)
        if y:
            ax.set_title(f"R={ratio:g} (U_training ≈ {_pct(1 / ratio)} %)", fontsize="medium")
    # once all panels are drawn: the shared scale then covers every panel's bars
    axes[0, 0].set_ylim(bottom=0)
    handles = [Patch(facecolor=APP_COLOR[app], label=app) for app in ("training", "background")]
    handles += [Patch(facecolor="white", edgecolor="0.3", hatch=hatch[a], label=f"arm {a}")
                for a in arms if a]
    handles.append(Line2D([], [], color="black", linewidth=1.5, label="offered background load"))
    fig.legend(handles=handles, fontsize="small", loc="outside lower center",
               ncols=len(handles))
    fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------
# writing the sweep figures


def _cdf_cells_figure(sweep: SweepTables, chosen: list[str], name: str) -> Figure | None:
    """FCT CDFs of the chosen cells; the axis values they share go in the title."""
    axes = list(sweep.grid.get("axes", []))
    cdf = cells_cdf_frame(sweep.dir, sweep.summary, chosen, axes)
    if cdf.empty:
        return None
    rows = sweep.summary.set_index("cell").loc[chosen]
    common = point_label({f: rows[f].iloc[0] for f in axes if rows[f].nunique(dropna=False) == 1},
                         rows["offered_load"].mean())
    return draw_cdf_cells(cdf, f"{name}: background FCT, measured flows"
                          + (f" ({common})" if common else ""))


def draw_comparison(frame: pd.DataFrame, grid: dict, title: str) -> Figure:
    """One panel per metric; bars per point (x, the grid's order) and arm
    (hue), 95 % CI over seeds."""
    import seaborn as sns

    order = list(dict.fromkeys(frame["point"]))
    arms = list(dict.fromkeys(frame["arm"]))
    # one arm per bar position (points with their own arms): no empty slots
    dodge = bool(frame.groupby("point")["arm"].nunique().max() > 1)
    fig, axes = new_figure(max(7.0, 0.45 * len(order) * max(len(arms), 1) + 2.5),
                            2.6 * len(COMPARISON_PANELS) + 1.0,
                            nrows=len(COMPARISON_PANELS), sharex=True)
    for ax, (_, metric) in zip(axes[:, 0], COMPARISON_PANELS):
        rows = frame[frame["metric"] == metric]
        sns.barplot(data=rows, x="point", y="value_ms", hue="arm", order=order,
                    hue_order=arms, errorbar=("ci", 95), ax=ax, palette=PALETTE[:len(arms)],
                    dodge=dodge)
        ax.set_ylabel(metric)
        ax.set_xlabel("")
        if ax.get_legend() is not None:  # one legend, in the top panel
            if ax is axes[0, 0]:
                ax.get_legend().set_title("arm")
            else:
                ax.get_legend().remove()
    fields = point_fields(grid)
    axes[-1, 0].set_xlabel(POINT_LABEL if POINT_LABEL in fields else ", ".join(fields))
    fig.suptitle(title)
    return fig


def _seeds_title(deltas_mean: pd.DataFrame | None, seeds: int) -> str:
    """' (pooled over N seeds)', or '1-3 seeds per point' where adaptive seeds
    gave points different numbers (`seeds`: the sweep's, where deltas_mean
    does not say)."""
    if deltas_mean is not None and "seeds" in deltas_mean and deltas_mean["seeds"].notna().any():
        low, high = int(deltas_mean["seeds"].min()), int(deltas_mean["seeds"].max())
    else:
        low = high = seeds
    if high <= 1:
        return ""
    return f" (pooled over {high} seeds)" if low == high else \
        f" (pooled over {low}-{high} seeds per point)"


def _scale_title(sweep_dir: Path, summary: pd.DataFrame) -> str:
    """', scale 1/k' when the sweep's cells are one scale-down k > 1 (their
    config.json): the map then stands for the full-rate network it scales, at
    the fidelity docs/findings/validate.md measures for that k."""
    if "scale" in summary or "cell" not in summary:
        return ""   # an axis: each facet says its own
    for cell in summary["cell"]:
        config = sweep_dir / "cells" / str(cell) / "config.json"
        if config.is_file():
            k = read_record(config, what="the cell's config").get("scale", 1)
            return f", scale 1/{k:g}" if k > 1 else ""
    return ""


def check_metric(deltas_mean: pd.DataFrame | None, metric: str) -> None:
    """`harness plot --metric NAME`: a metric of the sweep's deltas_mean, else
    a ConfigError listing the allowed ones."""
    from harness.config.errors import ConfigError

    allowed = (list(dict.fromkeys(deltas_mean["metric"])) if deltas_mean is not None
               and "metric" in deltas_mean else [])
    if not allowed:
        raise ConfigError("--metric", "this sweep has no deltas_mean.parquet (its grid "
                          "compares no arms): no metric to map")
    if metric not in allowed:
        raise ConfigError("--metric", f"unknown metric {metric!r}; allowed (deltas_mean): "
                          f"{', '.join(allowed)}")


def plot_metric(sweep_dir: Path, metric: str, out_dir: Path | None = None,
                formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """The map of one metric of deltas_mean (map-<metric>.<fmt>): per compared
    arm and point, its change against the reference with its 95 % interval
    and verdict (harness.analysis.stats). metric is checked (check_metric) and
    out_dir (default SWEEP/plots) too, before anything is drawn."""
    from harness.io import outdir

    sweep = load_sweep(sweep_dir)
    check_metric(sweep.deltas_mean, metric)
    out_dir = outdir.check_figure_dir(Path(out_dir) if out_dir is not None else sweep.dir / "plots",
                                      "-o" if out_dir is not None else "DIRECTORY",
                                      tuple(formats), 1)
    grid, summary = sweep.grid, with_status_reasons(sweep.summary)
    seeds = int(summary[SEED_FIELD].nunique()) if SEED_FIELD in summary else 1
    over = _seeds_title(sweep.deltas_mean, seeds) + _scale_title(sweep.dir, summary)
    panels = metric_panels(metric)
    table = boundary_table(sweep.deltas_mean, summary, grid, panels)
    name = grid.get("grid", sweep.dir.name)
    fig = draw_boundary(table, grid, background_labels(summary, grid),
                        f"{name}: {metric} vs {grid.get('reference')}{over}", panels)
    out_dir.mkdir(parents=True, exist_ok=True)
    return save_figure(fig, out_dir, f"map-{metric}", tuple(formats))


def plot_sweep(sweep_dir: Path, out_dir: Path | None = None,
               formats: tuple[str, ...] = ("png", "pdf"),
               cells: list[str] | None = None) -> list[Path]:
    """Draw the figures a sweep directory's tables allow; returns the written
    files. A figure whose data is missing is skipped (no arms: no map and no
    per-ratio figure). `cells`: ids (or unique prefixes) for the FCT CDFs,
    default: both arms of the highest-load, lowest-R point. A directory
    without sweep.json/summary.parquet raises FileNotFoundError; an unknown
    cell id UnknownCellError. out_dir (default SWEEP/plots) is checked before
    anything is drawn (outdir.check_figure_dir: new, or holding nothing but
    the harness's figures; else OutputError)."""
    from harness.io import outdir

    sweep = load_sweep(sweep_dir)
    grid, summary = sweep.grid, with_status_reasons(sweep.summary)
    # a wrong --cell fails before anything is drawn or written
    chosen = resolve_cells(summary, list(cells)) if cells else default_cdf_cells(summary, grid)
    out_dir = outdir.check_figure_dir(Path(out_dir) if out_dir is not None else sweep.dir / "plots",
                                      "-o" if out_dir is not None else "DIRECTORY",
                                      tuple(formats), len(outdir.SWEEP_FIGURES))
    name = grid.get("grid", sweep.dir.name)
    seeds = int(summary[SEED_FIELD].nunique()) if SEED_FIELD in summary else 1
    over = _seeds_title(sweep.deltas_mean, seeds) + _scale_title(sweep.dir, summary)
    x_labels = background_labels(summary, grid)
    figures: list[tuple[str, Figure | None]] = []

    if sweep.deltas_mean is not None and compared_arms(grid):
        table = boundary_table(sweep.deltas_mean, summary, grid)
        if len(table):
            figures.append(("operating-boundary", draw_boundary(
                table, grid, x_labels, f"{name}: operating boundary{over}")))
        frame = per_ratio_frame(sweep.deltas_mean, grid)
        if len(frame):
            ci = ", 95 % CI over seeds" if seeds > 1 else ""
            figures.append(("per-ratio", draw_per_ratio(
                frame, grid, x_labels, f"{name}: change vs {grid.get('reference')} per R{ci}")))
    if chosen:
        figures.append(("fct-cdf-cells", _cdf_cells_figure(sweep, chosen, name)))
    comparison = comparison_frame(summary, grid)
    if len(comparison):
        figures = [f for f in figures if f[0] not in ("operating-boundary", "per-ratio")]
        figures.append(("comparison", draw_comparison(
            comparison, grid, f"{name}: iteration time and FCT per point and arm")))
    util = utilization_frame(summary, grid)
    if util[["u_training", "u_background"]].notna().to_numpy().any():
        figures.append(("utilization-apps", draw_utilization_apps(
            util, grid, f"{name}: host-uplink utilisation per application{over}")))

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, fig in figures:
        if fig is not None:
            written += save_figure(fig, out_dir, stem, tuple(formats))
    return written
