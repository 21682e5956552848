"""Drawing the operating-boundary map (sweep_data.boundary_table's table):
per compared arm and facet, (a) the training verdict (iteration-time change,
green <= 1 % / yellow <= 30 % / red, hatched where the 95 % interval spans two
classes, coloured then by the estimate's class), (b) and (c) the small- and
large-flow mean FCT change on a diverging scale centred at 0 (green: the
background is faster), hatched where the change is not significant at 95 %
(its interval contains 0); every cell prints its change and interval
(harness.analysis.stats). `harness plot --metric` draws one panel of any
deltas metric the same way."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from harness.analysis import services, stats
from harness.analysis.metrics import in_points
from harness.outputs.plots.style import fit_in_data_width, new_figure
from harness.outputs.plots.sweep_axes import (boundary_axes, facet_rows, pct, ratio_label,
                                              x_order, y_order)
from harness.outputs.plots.sweep_data import BOUNDARY_CLASSES, BOUNDARY_PANELS


# light tones so the black cell text stays legible on every class
BOUNDARY_COLORS = {"green": "#9ed89e", "yellow": "#f7dc6f", "red": "#ef8a80", "n/a": "#d3d3d3"}
BOUNDARY_LEGEND = {
    **stats.CLASS_MEANING,
    stats.NOT_APPLICABLE: f"{stats.NOT_APPLICABLE}: no change measured (the cell says why)",
}
# the map's caption, one line per statement (fit_text breaks them further)
BOUNDARY_CAPTION = (
    "(a) training slowdown class, hatched where the 95 % interval spans two classes "
    "(coloured by the estimate's class)",
    "(b), (c) hatched where the change is not significant (the interval contains 0)",
    "Each cell: change [95 % interval]; n/a: no change measured, and why",
)


# --------------------------------------------------------------------------
# a map cell


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
               reason: str = "", unit: str = "%") -> str:
    """'+12.3 %' over '[+8.1, +17.0]' (the 95 % interval), then 'n=1/2 seeds'
    when some seeds gave no pair; 'too few samples' for an estimate without
    an interval (harness.analysis.stats); 'stalled' or 'n/a' over its reason without a
    value. unit: "pp" for a fraction's difference (points)."""
    if change == np.inf:
        return "stalled"  # no iteration completed in the window where the reference did
    if not np.isfinite(change):
        return f"n/a\n{reason}" if reason else "n/a"
    text = f"{_pct_text(change)} {unit}"
    if np.isfinite(low) and np.isfinite(high):
        text += f"\n[{_pct_text(low)}, {_pct_text(high)}]"
    elif high == np.inf:
        text += f"\n[{_pct_text(low)}, stalled]"
    elif np.isnan(low):
        text += f"\n{stats.TOO_FEW}"   # stats.MIN_ITERATION_PAIRS / MIN_FLOW_PAIRS
    if seeds < all_seeds:
        text += f"\nn={seeds}/{all_seeds} seeds"
    return text


def _fct_colors(table: pd.DataFrame, prefix: str, higher_is_better: bool = False):
    """A diverging colour scale centred at 0 for one FCT panel (over every
    facet of `table`): green where the background is faster (negative
    change), red where slower (reversed for a statistic where higher is
    better: an SLO attainment); its limit is the panel's largest |change| (at
    least 10 %, at most 100 %)."""
    from matplotlib import colormaps
    from matplotlib.colors import TwoSlopeNorm

    values = table[f"{prefix}_change"].to_numpy(dtype=float)
    finite = np.abs(values[np.isfinite(values)])
    limit = float(np.clip(finite.max() if len(finite) else 0.1, 0.1, 1.0))
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit)
    return colormaps["RdYlGn" if higher_is_better else "RdYlGn_r"], norm


# --------------------------------------------------------------------------
# the map


# a map cell's size (inches) and its text's size relative to it: the
# cell's height over MAP_TEXT_LINES lines (fit_in_data_width narrows a
# line wider than the cell); the report sizes the image from it
MAP_CELL_WIDTH_IN, MAP_CELL_HEIGHT_IN = 1.3, 0.95
MAP_TEXT_LINES = 6
MAP_TEXT_PT = 72 * MAP_CELL_HEIGHT_IN / MAP_TEXT_LINES


def draw_boundary(table: pd.DataFrame, grid: dict, x_labels: dict, title: str,
                  panels: tuple = BOUNDARY_PANELS, columns: int | None = None,
                  only: int | None = None) -> Figure:
    """Per facet row (compared arm, other axes), three maps: (a) the training
    verdict, (b) small-flow and (c) large-flow mean FCT change, each with its
    own colours; hatched cells are undecided at 95 %. `panels`: other
    metrics instead (metric_panels: one, for `harness plot --metric`); the
    training classes colour the mean iteration time's panel, a diverging
    scale centred at 0 every other. `columns`: panels side by side before
    the next row (None: all of a facet's in one row; 1: stacked, for a page
    as narrow as the documentation's). `only`: the one panel of that index,
    lettered and worded as in the whole map (a page that wraps the panels
    as its width allows: the report's)."""
    from matplotlib.cm import ScalarMappable

    y, x = boundary_axes(grid)
    facets = facet_rows(table, grid)
    ys, xs = y_order(table, y), x_order(table, x)
    drawn = list(range(len(panels))) if only is None else [only]
    columns = len(drawn) if columns is None else max(1, min(columns, len(drawn)))
    rows_per_facet = -(-len(drawn) // columns)
    nrows = len(facets) * rows_per_facet
    # the colour bars and the y labels take ~1 inch beside the cells
    width = columns * max(3.6, MAP_CELL_WIDTH_IN * len(xs) + 1.4) + (2.0 if columns > 1 else 0.6)
    fig, axes = new_figure(width, nrows * max(2.8, MAP_CELL_HEIGHT_IN * len(ys) + 1.8) + 1.0,
                           nrows=nrows, ncols=columns)
    for f in range(len(facets)):   # a facet's last row, where its panels do not fill it
        for k in range(len(drawn), rows_per_facet * columns):
            axes[f * rows_per_facet + k // columns, k % columns].set_visible(False)
    trained = [m == "iteration_time" for m, _, _ in panels]
    for f, (facet, rows) in enumerate(facets):
        for k, n in enumerate(drawn):
            metric, prefix, name = panels[n]
            row, col = f * rows_per_facet + k // columns, k % columns
            ax = axes[row, col]
            service = services.stat_of(metric)
            better_higher = service is not None and service.higher_is_better
            unit = "pp" if in_points(metric) else "%"
            # one scale per panel for every facet: colours compare across rows
            cmap, norm = (_fct_colors(table, prefix, better_higher) if not trained[n]
                          else (None, None))
            for i, yv in enumerate(ys):
                for j, xv in enumerate(xs):
                    _draw_map_cell(ax, i, j, _map_cell(rows, y, yv, x, xv), prefix, unit,
                                   trained[n], cmap, norm)
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_ylim(-0.5, len(ys) - 0.5)
            ax.set_xticks(range(len(xs)), [x_labels.get(v, str(v)) for v in xs])
            if col == 0:
                ax.set_yticks(range(len(ys)), [ratio_label(v) if y else _training_label(rows)
                                               for v in ys])
                ax.set_ylabel("U_training ≈ 1/R")
            else:
                ax.set_yticks(range(len(ys)), [""] * len(ys))
            if not trained[n]:
                bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8,
                                   format=FuncFormatter(lambda v, _, u=unit: f"{100 * v:+.0f} {u}"))
                bar.set_label("change; green: background faster" if metric.startswith("fct_")
                              else "change; green: higher" if better_higher
                              else "change; green: smaller", fontsize="small")
            ax.grid(False)
            ax.set_xlabel("U_background (offered load per host link)")
            letter = f"({'abcdefgh'[n]}) " if len(panels) > 1 else ""
            what = ("verdict: iteration-time change" if trained[n] else
                    "mean FCT change" if panels is BOUNDARY_PANELS else "change vs the reference")
            # a line each: fit_text breaks them further to the panel's width
            ax.set_title(f"{letter}{name}\n{what}\n{facet}", fontsize="medium")
    # one panel of the three: its page says the caption once, under them all
    _map_legend(fig, panels, any(trained[n] for n in drawn), ncols=3 if columns > 1 else 1,
                captioned=only is None)
    fig.suptitle(title)
    return fig


def _draw_map_cell(ax, i: int, j: int, r: pd.Series | None, prefix: str, unit: str,
                   trained: bool, cmap, norm) -> None:
    """Map cell (row i, column j) of one panel: coloured by the training
    class (`trained`) or by its change on the panel's scale (cmap, norm),
    hatched where undecided, with its text (_cell_text)."""
    from matplotlib.patches import Rectangle

    # no row: the grid's [[points]] leave this combination out
    face, hatch, text = BOUNDARY_COLORS["n/a"], None, "n/a\nnot a point"
    if r is not None:
        change = r[f"{prefix}_change"]
        text = _cell_text(change, r[f"{prefix}_low"], r[f"{prefix}_high"],
                          int(r[f"{prefix}_seeds"]), int(r["seeds"]),
                          r.get(f"{prefix}_reason", ""), unit)
        if trained:
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
    # the text's size is relative to the cell, whatever the grid's size
    fit_in_data_width(ax.text(
        j, i, text, ha="center", va="center", fontsize=MAP_TEXT_PT,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
              "alpha": 0.6, "linewidth": 0} if hatch else None), 1.0)


def _map_legend(fig: Figure, panels: tuple, trained: bool, ncols: int = 3,
                captioned: bool = True) -> None:
    """The map's legend: the training classes where a panel is coloured by
    them (`trained`), n/a always, and the hatch; its title the caption
    (`captioned`)."""
    from matplotlib.patches import Patch

    # two rows of entries (three columns): the legend stays within three panels
    # of the narrowest map; a stacked map's, one column
    shown = BOUNDARY_CLASSES if trained else (stats.NOT_APPLICABLE,)
    fig.legend(handles=[*(Patch(facecolor=BOUNDARY_COLORS[c], label=BOUNDARY_LEGEND[c])
                          for c in shown),
                        Patch(facecolor="white", edgecolor="#555555", hatch="///",
                              label="undecided at 95 %")],
               loc="outside lower center", ncols=ncols, fontsize="small",
               title="\n".join(BOUNDARY_CAPTION if panels is BOUNDARY_PANELS
                               else _metric_caption(panels)) if captioned else None,
               title_fontsize="small")


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
    return f"U_training ≈ {pct(u)} %" if np.isfinite(u) else "training"
