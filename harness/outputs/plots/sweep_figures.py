"""Writing a sweep directory's figures, from sweep.json and the sweep's tables
only: plot_sweep draws every figure of the registry (registry.SWEEP_FIGURES:
operating-boundary, per-ratio, fct-cdf-cells, comparison, utilization-apps)
the sweep has data for; plot_metric draws the map of one deltas metric
(`harness plot --metric`). The data behind them is sweep_data's, the
drawing boundary_map's and sweep_draw's.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from harness.analysis.tables import SEED_AXIS as SEED_FIELD, load_sweep, read_record
from harness.outputs.plots import registry
from harness.outputs.plots.boundary_map import draw_boundary
from harness.outputs.plots.style import save_figure
from harness.outputs.plots.sweep_axes import background_labels
from harness.outputs.plots.sweep_data import (boundary_table, default_cdf_cells, metric_panels,
                                              resolve_cells)
from harness.analysis.summary import with_status_reasons


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
        raise ConfigError("--metric", f"unknown metric {metric!r}; allowed (deltas_mean, "
                          "causes.parquet's fct_<class>_rto and _rest and "
                          "training_causes.parquet's iteration_time_compute, _rto and _rest "
                          "where the sweep has them): "
                          f"{', '.join(allowed)}")


def plot_metric(sweep_dir: Path, metric: "str | tuple[str, ...]", out_dir: Path | None = None,
                formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """The map of one metric of deltas_mean (map-<metric>.<fmt>), or of each
    of several: per compared arm and point, its change against the
    reference with its 95 % interval and verdict (harness.analysis.stats).
    Every metric is checked (check_metric) and out_dir (default SWEEP/plots)
    too, before anything is drawn."""
    from harness.io import outdir

    metrics = (metric,) if isinstance(metric, str) else tuple(metric)
    view = sweep_view(sweep_dir, cdf_cells=False)
    mapped = mapped_deltas(view)
    for m in metrics:
        check_metric(mapped, m)
    out_dir = outdir.check_figure_dir(Path(out_dir) if out_dir is not None
                                      else view.sweep.dir / "plots",
                                      "-o" if out_dir is not None else "DIRECTORY",
                                      tuple(formats), len(metrics), registry.FIGURE_NAMES)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for m in metrics:
        written += save_figure(metric_map(view, m, mapped), out_dir, f"map-{m}", tuple(formats))
    return written


def mapped_deltas(view: registry.SweepView) -> pd.DataFrame | None:
    """What --metric maps: deltas_mean's metrics, and where the sweep has
    causes.parquet and training_causes.parquet their cause layer
    (fct_<class>_rto, fct_<class>_rest, iteration_time_compute, _rto and
    _rest: harness.analysis.cause_changes)."""
    from harness.analysis.cause_changes import cause_metrics, iteration_cause_metrics
    from harness.analysis.tables import optional_table

    means = view.sweep.deltas_mean
    if means is None:
        return means
    layers = [means]
    for name, rows in (("causes", cause_metrics), ("training_causes", iteration_cause_metrics)):
        table = optional_table(view.sweep.dir, name)
        if table is not None and len(table):
            keys = [k for k in view.grid.get("axes", []) if k != SEED_FIELD and k in table]
            layers.append(rows(table, keys))
    return pd.concat(layers, ignore_index=True) if len(layers) > 1 else means


def metric_map(view: registry.SweepView, metric: str,
               mapped: pd.DataFrame | None = None) -> Figure:
    """The map of one metric of mapped_deltas (checked: check_metric)."""
    panels = metric_panels(metric)
    means = mapped if mapped is not None else mapped_deltas(view)
    table = boundary_table(means, view.summary, view.grid, panels)
    return draw_boundary(table, view.grid, view.x_labels,
                         f"{view.name}: {panels[0][2]}, each arm vs "
                         f"{view.grid.get('reference')}{view.over}", panels)


def sweep_view(sweep_dir: Path, cells: list[str] | None = None,
               cdf_cells: bool = True) -> registry.SweepView:
    """What the sweep figures read of a sweep directory. `cells`: ids (or
    unique prefixes) for the FCT CDFs, default: both arms of the
    highest-load, lowest-R point; none without `cdf_cells` (a map of one
    metric draws no CDF). A directory without sweep.json/summary.parquet
    raises FileNotFoundError; an unknown cell id UnknownCellError."""
    sweep = load_sweep(sweep_dir)
    grid, summary = sweep.grid, with_status_reasons(sweep.summary)
    chosen = (resolve_cells(summary, list(cells)) if cells
              else default_cdf_cells(summary, grid) if cdf_cells else [])
    seeds = int(summary[SEED_FIELD].nunique()) if SEED_FIELD in summary else 1
    return registry.SweepView(
        sweep, summary, chosen, grid.get("grid", sweep.dir.name), seeds,
        _seeds_title(sweep.deltas_mean, seeds) + _scale_title(sweep.dir, summary),
        background_labels(summary, grid))


def _drawn(view: registry.SweepView, width: float | None) -> list[tuple[str, list[Figure]]]:
    """(name, figures) of each registry figure the view has data for, in
    registry order, less those a drawn one replaces: one figure each, or
    for a page `width` inches wide, the figure's page_draw where it has one."""
    drawn = []
    for figure in registry.drawn_figures():
        data = figure.data(view)
        if data is None:
            continue
        figs = (figure.page_draw(data, view, width) if width is not None and figure.page_draw
                else [figure.draw(data, view)])
        drawn.append((figure, figs))
    replaced = {name for figure, _ in drawn for name in figure.replaces}
    return [(figure.name, figs) for figure, figs in drawn if figure.name not in replaced]


def page_figures(sweep_dir: Path, width: float, metrics: tuple[str, ...] = ()
                 ) -> list[tuple[str, list[Figure]]]:
    """The sweep's figures for a page `width` inches wide (the report's):
    (name, figures) in registry order, the map a panel per figure; then
    the map of each of `metrics` (map-<metric>)."""
    view = sweep_view(sweep_dir)
    mapped = mapped_deltas(view) if metrics else None   # read once for every map
    return _drawn(view, width) + [(f"map-{m}", [metric_map(view, m, mapped)])
                                  for m in metrics]


def plot_sweep(sweep_dir: Path, out_dir: Path | None = None,
               formats: tuple[str, ...] = ("png", "pdf"),
               cells: list[str] | None = None) -> list[Path]:
    """Draw the figures a sweep directory's tables allow; returns the written
    files. A figure whose data is missing is skipped (no arms: no map and no
    per-ratio figure). `cells`: as sweep_view's. out_dir (default SWEEP/plots)
    is checked before anything is drawn (outdir.check_figure_dir: new, or
    holding nothing but the harness's figures; else OutputError)."""
    from harness.io import outdir

    # a wrong --cell fails before anything is drawn or written
    view = sweep_view(sweep_dir, cells)
    out_dir = outdir.check_figure_dir(Path(out_dir) if out_dir is not None
                                      else view.sweep.dir / "plots",
                                      "-o" if out_dir is not None else "DIRECTORY",
                                      tuple(formats), len(registry.SWEEP_FIGURES),
                                      registry.FIGURE_NAMES)
    figures = _drawn(view, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (fig,) in figures:
        written += save_figure(fig, out_dir, name, tuple(formats))
    return written
