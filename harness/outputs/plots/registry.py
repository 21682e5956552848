"""The sweep's figures, one entry each: the one list that `harness plot SWEEP`
draws from (in its order), that the figure-directory check takes our file
names from (harness.io.outdir, which cannot import this layer: plot passes
FIGURE_NAMES), and that the HTML report orders and captions its figures by.

A new sweep figure is one entry in SWEEP_FIGURES: its name (the file stem),
the data it needs (a function of the SweepView returning its table, None
when the sweep has nothing for it), how it is drawn, its place on the
report page and its caption. The shaping and drawing it reuses live in
sweep_data / sweep_draw / boundary_map.

A run's figures are drawn by run_figures.draw_run; their names are part of
what a run directory holds (outdir.RUN_FIGURES), which every writer of a run
directory below this layer checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
from matplotlib.figure import Figure

from harness.analysis.tables import Sweep
from harness.io import outdir
from harness.outputs.plots.boundary_map import draw_boundary
from harness.outputs.plots.frontier_figure import FIGURE_STEM as FRONTIER
from harness.outputs.plots.sweep_axes import compared_arms, point_label
from harness.outputs.plots.sweep_data import (boundary_table, cells_cdf_frame, comparison_frame,
                                              per_ratio_frame, utilization_frame)
from harness.outputs.plots.sweep_draw import (draw_cdf_cells, draw_comparison, draw_per_ratio,
                                              draw_utilization_apps)


@dataclass(frozen=True)
class SweepView:
    """What every sweep figure reads: the sweep's tables, the cells chosen for
    the FCT CDFs, and the words the titles share."""
    sweep: Sweep
    summary: pd.DataFrame   # the sweep's, with each cell's status reason
    cells: list[str]        # for fct-cdf-cells (harness plot --cell, or the default point)
    name: str               # the grid's name
    seeds: int              # seeds in the sweep
    over: str               # the titles' tail: " (pooled over N seeds), scale 1/k"
    x_labels: dict          # a tick per background value (sweep_axes.background_labels)

    @property
    def grid(self) -> dict:
        return self.sweep.grid


@dataclass(frozen=True)
class SweepFigure:
    """One figure of a sweep directory: <name>.<fmt>."""
    name: str
    order: int                                  # its place on the report page
    caption: str                                # the report's words for it ("": its own)
    data: Callable[[SweepView], Any] | None = None   # its table; None: not drawn
    draw: Callable[[Any, SweepView], Figure] | None = None
    replaces: tuple[str, ...] = ()              # figures it stands for when drawn
    # drawn for a page `width` inches wide (the report's): figures no wider,
    # shown at their drawn size, which the page wraps; None: draw's one
    page_draw: Callable[[Any, SweepView, float], list[Figure]] | None = None
    # data and draw None: drawn by a command of its own (frontier), named
    # here so that `harness plot` writes beside it


# --------------------------------------------------------------------------
# each figure's data and drawing, with its title


def _compares(view: SweepView) -> bool:
    return view.sweep.deltas_mean is not None and bool(compared_arms(view.grid))


def _boundary_data(view: SweepView) -> pd.DataFrame | None:
    if not _compares(view):
        return None
    table = boundary_table(view.sweep.deltas_mean, view.summary, view.grid)
    return table if len(table) else None


def _boundary_draw(table: pd.DataFrame, view: SweepView) -> Figure:
    return draw_boundary(table, view.grid, view.x_labels,
                         f"{view.name}: operating boundary{view.over}")


def _boundary_page(table: pd.DataFrame, view: SweepView, width: float) -> list[Figure]:
    """A panel per figure, lettered as in the whole map: a page wraps them."""
    from harness.outputs.plots.sweep_data import BOUNDARY_PANELS

    return [draw_boundary(table, view.grid, view.x_labels,
                          f"{view.name}: operating boundary{view.over}", only=n)
            for n in range(len(BOUNDARY_PANELS))]


def _per_ratio_data(view: SweepView) -> pd.DataFrame | None:
    if not _compares(view):
        return None
    frame = per_ratio_frame(view.sweep.deltas_mean, view.grid)
    return frame if len(frame) else None


def _per_ratio_draw(frame: pd.DataFrame, view: SweepView) -> Figure:
    ci = ", 95 % CI over seeds" if view.seeds > 1 else ""
    return draw_per_ratio(frame, view.grid, view.x_labels,
                          f"{view.name}: change vs {view.grid.get('reference')} per R{ci}")


def _cdf_cells_data(view: SweepView) -> pd.DataFrame | None:
    if not view.cells:
        return None
    cdf = cells_cdf_frame(view.sweep.dir, view.sweep.summary, view.cells,
                          list(view.grid.get("axes", [])))
    return cdf if len(cdf) else None


def _cdf_cells_draw(cdf: pd.DataFrame, view: SweepView) -> Figure:
    """The axis values the chosen cells share go in the title."""
    axes = list(view.grid.get("axes", []))
    rows = view.sweep.summary.set_index("cell").loc[view.cells]
    common = point_label({f: rows[f].iloc[0] for f in axes if rows[f].nunique(dropna=False) == 1},
                         rows["offered_load"].mean())
    return draw_cdf_cells(cdf, f"{view.name}: background FCT, measured flows"
                          + (f" ({common})" if common else ""))


def _comparison_data(view: SweepView) -> pd.DataFrame | None:
    frame = comparison_frame(view.summary, view.grid)
    return frame if len(frame) else None


def _comparison_draw(frame: pd.DataFrame, view: SweepView, width: float | None = None) -> Figure:
    return draw_comparison(frame, view.grid,
                           f"{view.name}: iteration time and FCT per point and arm", width)


def _comparison_page(frame: pd.DataFrame, view: SweepView, width: float) -> list[Figure]:
    """Its points wrapped into rows of the page's width."""
    return [_comparison_draw(frame, view, width)]


def _utilization_data(view: SweepView) -> pd.DataFrame | None:
    frame = utilization_frame(view.summary, view.grid)
    return frame if frame[["u_training", "u_background"]].notna().to_numpy().any() else None


def _utilization_draw(frame: pd.DataFrame, view: SweepView) -> Figure:
    return draw_utilization_apps(
        frame, view.grid, f"{view.name}: host-uplink utilisation per application{view.over}")


# --------------------------------------------------------------------------
# the registry


#: in the order `harness plot` draws them (and prints their files)
SWEEP_FIGURES = (
    # the map's caption is the report's own (with the slowdown classes' meanings)
    SweepFigure("operating-boundary", 0, "", _boundary_data, _boundary_draw,
                page_draw=_boundary_page),
    SweepFigure("per-ratio", 2,
                "Change of each compared arm against the reference, per R (a panel each) "
                "over the background's load: training iteration time and small- and "
                "large-flow mean FCT, with 95 % intervals.",
                _per_ratio_data, _per_ratio_draw),
    SweepFigure("fct-cdf-cells", 3,
                "Distribution (CDF) of the background's flow completion times per size "
                "class, of both arms of one point (the highest background load and "
                "lowest R unless chosen with harness plot --cell).",
                _cdf_cells_data, _cdf_cells_draw),
    # a grid without R x background axes: its answer instead of the map
    SweepFigure("comparison", 1,
                "Iteration time and small- and large-flow mean FCT per point and arm "
                "(absolute values, ms), with 95 % intervals over seeds.",
                _comparison_data, _comparison_draw,
                replaces=("operating-boundary", "per-ratio"), page_draw=_comparison_page),
    SweepFigure("utilization-apps", 4,
                "Mean utilisation of the host uplinks per application (training, "
                "background) over the measurement window, per point and arm.",
                _utilization_data, _utilization_draw),
    # `harness frontier`'s (frontier_figure.py)
    SweepFigure(FRONTIER, 5, ""),
)

#: every figure file stem of ours: what the figure-directory checks accept
#: (with outdir's map-<metric> of `harness plot --metric`)
FIGURE_NAMES = outdir.RUN_FIGURES | frozenset(f.name for f in SWEEP_FIGURES)


def drawn_figures() -> tuple[SweepFigure, ...]:
    """The figures `harness plot SWEEP` draws, in its order."""
    return tuple(f for f in SWEEP_FIGURES if f.data is not None)


def report_order() -> tuple[str, ...]:
    """The sweep figures' names in the report's order."""
    return tuple(f.name for f in sorted(drawn_figures(), key=lambda f: f.order))


def captions() -> dict[str, str]:
    """The report's caption of each figure that has one, by name."""
    return {f.name: f.caption for f in SWEEP_FIGURES if f.caption}
