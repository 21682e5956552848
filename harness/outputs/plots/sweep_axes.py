"""A sweep's axes as its figures show them (pure): which grid fields make a
point, which two the operating-boundary map spans (training.ratio ~ 1/U_training
on y, the background's load or rate on x), the rest as facets; and the
labels of points, ratios and background values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.analysis.tables import SEED_AXIS as SEED_FIELD

RATIO_FIELD = "training.ratio"
BACKGROUND_FIELDS = ("background.load", "background.rate")


# --------------------------------------------------------------------------
# the grid's structure


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


# --------------------------------------------------------------------------
# labels


def point_label(point: dict, offered_load: float | None = None) -> str:
    """Short label of a point: "R=2, load 10 %", "λ=46 (≈23 %)", "seed 1"."""
    parts = []
    for field, value in point.items():
        if field == RATIO_FIELD:
            parts.append(f"R={value:g}")
        elif field == "background.load":
            parts.append(f"load {pct(float(value))} %")
        elif field == "background.rate":
            extra = f" (≈{pct(offered_load)} %)" if offered_load is not None and \
                np.isfinite(offered_load) else ""
            parts.append(f"λ={value:g}{extra}")
        elif field == SEED_FIELD:
            parts.append(f"seed {value}")
        else:
            parts.append(f"{field.rsplit('.', 1)[-1]}={value}")
    return ", ".join(parts)


def pct(fraction: float) -> str:
    """A fraction as a short percentage number: 0.25 -> '25', 0.0625 -> '6.2'."""
    v = 100 * fraction
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"


def ratio_label(ratio: float) -> str:
    """y tick of a ratio: 'R=4 (≈25 %)', the training load being about 1/R."""
    return f"R={ratio:g} (≈{pct(1 / ratio)} %)" if ratio else f"R={ratio:g}"


def background_labels(summary: pd.DataFrame, grid: dict) -> dict:
    """x tick per background axis value, as the offered load per host link in %
    (a rate axis shows λ too); {None: label} when no background axis varies."""
    _, x = boundary_axes(grid)
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, "offered_load"])))
    if x is None:
        offered = summary["offered_load"].mean()
        return {None: f"{pct(offered)} %" if np.isfinite(offered) else "background"}
    offered = summary.groupby(x)["offered_load"].mean()
    labels = {}
    for value, load in offered.items():
        if x == "background.load":
            labels[value] = f"{pct(float(value))} %"
        else:
            labels[value] = f"λ={value:g}" + (f" (≈{pct(load)} %)" if np.isfinite(load) else "")
    return labels


# --------------------------------------------------------------------------
# rows of a figure's table, in the order they are drawn


def facet_rows(frame: pd.DataFrame, grid: dict) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per compared arm and value combination of the facet fields."""
    by = ["arm", *facet_fields(grid)]
    out = []
    for key, rows in frame.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        extra = point_label(dict(zip(by[1:], key[1:])))
        out.append((f"{key[0]} vs {grid.get('reference')}" + (f", {extra}" if extra else ""),
                    rows))
    return out


def y_order(table: pd.DataFrame, y: str | None) -> list:
    """Map rows bottom to top by training load: descending R."""
    return sorted(table[y].unique(), reverse=True) if y else [None]


def x_order(table: pd.DataFrame, x: str | None) -> list:
    return sorted(table[x].unique()) if x else [None]
