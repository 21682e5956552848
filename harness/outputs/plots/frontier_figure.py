"""The frontier figure of a sweep (harness.analysis.frontier): per point, training's
slowdown (x) against the background's mean-FCT gain (y), one panel for small
flows and one for large, each arm with its 95 % intervals on both axes, the
Pareto set ringed, joined and labelled with the arms' names, and the green
limit (slowdown stats.GREEN_MAX) drawn. Tables only, no ns-3."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from harness.analysis import frontier
from harness.analysis import stats
from harness.config.scenario import ConfigError
from harness.outputs.plots.style import PALETTE, fit_text, new_figure, save_figure

PANEL_WIDTH, PANEL_HEIGHT = 5.0, 3.8
REFERENCE_COLOR = "#333333"
GREEN_LIMIT_COLOR = "#2e8b57"
#: label offsets tried around a point (points), nearest first
_OFFSETS = [(dx * r, dy * r) for r in (1, 2, 3, 4, 5)
            for dx, dy in ((8, 8), (8, -8), (-8, 8), (-8, -8), (0, 11), (0, -11), (11, 0),
                           (-11, 0))]
_SIZE_TEXT = {"small": "small flows (<= 100 KB)", "large": "large flows (> 10 MB)"}


def arm_colors(table: pd.DataFrame) -> dict[str, str]:
    """One colour per arm, the same in every panel; the reference dark grey."""
    arms = list(dict.fromkeys(table.loc[~table["is_reference"], "arm"].astype(str)))
    colors = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(arms)}
    for a in table.loc[table["is_reference"], "arm"].astype(str):
        colors[a] = REFERENCE_COLOR
    return colors


def _err(est: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Asymmetric error bars; none (0) where there is no interval."""
    below = np.where(np.isfinite(low), est - low, 0.0)
    above = np.where(np.isfinite(high), high - est, 0.0)
    return np.vstack([np.maximum(below, 0), np.maximum(above, 0)])


def draw_frontier(table: pd.DataFrame, point_keys: list[str], title: str,
                  columns: int | None = None) -> Figure:
    """A row of two panels (small, large flows) per point of the frontier
    table; `columns` 1: the panels stacked (a page as narrow as the
    documentation's)."""
    frame = table.assign(_point=[frontier.point_key(v) for v in
                                 table[point_keys].itertuples(index=False)]) \
        if point_keys else table.assign(_point=frontier.point_key([]))
    points = list(dict.fromkeys(frame["_point"]))
    classes = [c for c, _ in frontier.GAIN_CLASSES]
    columns = len(classes) if columns is None else max(1, min(columns, len(classes)))
    per_point = -(-len(classes) // columns)
    fig, axes = new_figure(PANEL_WIDTH * columns, PANEL_HEIGHT * max(1, len(points)) * per_point,
                           nrows=max(1, len(points)) * per_point, ncols=columns)
    colors = arm_colors(table)
    labels: list[tuple] = []      # (axes, x, y, name): placed once laid out
    for i, point in enumerate(points):
        rows = frame[frame["_point"] == point]
        name = frontier.point_name({k: rows.iloc[0][k] for k in point_keys})
        for j, cls in enumerate(classes):
            ax = axes[i * per_point + j // columns][j % columns]
            labels += _panel(ax, rows, cls, colors, f"{name}: {_SIZE_TEXT[cls]}")
    handles = [Line2D([], [], color=c, marker="o", linestyle="", label=a)
               for a, c in colors.items()]
    handles += [Line2D([], [], color="black", marker="o", markerfacecolor="none",
                       markersize=11, linestyle="--", linewidth=0.8, label="Pareto set"),
                Line2D([], [], color=GREEN_LIMIT_COLOR, linestyle=":", linewidth=1.5,
                       label=f"green limit: slowdown {100 * stats.GREEN_MAX:g} %")]
    fig.legend(handles=handles, loc="outside lower center",
               ncols=min(5 if columns > 1 else 2, len(handles)),
               frameon=False, title="arms (95 % intervals on both axes)")
    fig.suptitle(title)
    fit_text(fig)        # the layout the labels are placed in (save_figure fits again)
    _place_labels(fig, labels)
    return fig


def _panel(ax, rows: pd.DataFrame, cls: str, colors: dict, title: str) -> list[tuple]:
    gain = f"{cls}_gain"
    shown = rows[np.isfinite(frontier.finite_or_nan(rows["slowdown"]))
                 & np.isfinite(frontier.finite_or_nan(rows[gain]))]
    x = 100 * shown["slowdown"].to_numpy(float)
    y = 100 * shown[gain].to_numpy(float)
    xerr = 100 * _err(shown["slowdown"].to_numpy(float), shown["slowdown_low"].to_numpy(float),
                      shown["slowdown_high"].to_numpy(float))
    yerr = 100 * _err(shown[gain].to_numpy(float), shown[f"{gain}_low"].to_numpy(float),
                      shown[f"{gain}_high"].to_numpy(float))
    ax.axvline(100 * stats.GREEN_MAX, color=GREEN_LIMIT_COLOR, linestyle=":", linewidth=1.5)
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.axvline(0, color="#999999", linewidth=0.8)
    for k, (_, r) in enumerate(shown.iterrows()):
        ax.errorbar(x[k], y[k], xerr=xerr[:, [k]], yerr=yerr[:, [k]], fmt="o",
                    color=colors[str(r["arm"])], markersize=5, capsize=2, linewidth=1,
                    zorder=3)
    front = shown[shown[f"pareto_{cls}"]].sort_values("slowdown")
    fx, fy = 100 * front["slowdown"].to_numpy(float), 100 * front[gain].to_numpy(float)
    if len(front) > 1:
        ax.step(fx, fy, where="post", color="black", linestyle="--", linewidth=0.8, zorder=2)
    ax.scatter(fx, fy, s=110, facecolors="none", edgecolors="black", linewidths=1.2, zorder=4)
    missing = rows[~rows.index.isin(shown.index)]
    if len(missing):   # a stalled arm, or one without flows of the class: said, not drawn
        title += " (not drawn: " + ", ".join(missing["arm"].astype(str)) + ")"
    ax.set_title(title)
    ax.set_xlabel("training slowdown vs the reference (%)")
    ax.set_ylabel(f"{cls}-flow mean FCT gain (%)")
    ax.margins(0.2)
    return [(ax, a, b, str(n), colors[str(n)]) for a, b, n in zip(fx, fy, front["arm"])]


def _place_labels(fig: Figure, labels: list[tuple]) -> None:
    """Name each Pareto arm next to its point, in its colour and joined to it
    by a thin line: the first offset (nearest first) at which its text lies
    inside its panel and over no label placed before; the nearest one if
    none is free."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    placed: dict[int, list] = {}
    for ax, x, y, name, color in labels:
        box = ax.get_window_extent(renderer)
        chosen = None
        for dx, dy in _OFFSETS:
            text = ax.annotate(name, (x, y), xytext=(dx, dy), textcoords="offset points",
                               ha="left" if dx > 0 else "right" if dx < 0 else "center",
                               va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                               fontsize=8, zorder=5, color=color, fontweight="bold",
                               arrowprops={"arrowstyle": "-", "color": color,
                                           "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4})
            extent = text.get_window_extent(renderer)
            inside = (extent.x0 >= box.x0 and extent.x1 <= box.x1 and extent.y0 >= box.y0
                      and extent.y1 <= box.y1)
            free = not any(extent.overlaps(o) for o in placed.get(id(ax), []))
            if inside and free:
                chosen = extent
                break
            text.remove()
        if chosen is None:
            text = ax.annotate(name, (x, y), xytext=_OFFSETS[0], textcoords="offset points",
                               fontsize=8, zorder=5, color=color, fontweight="bold",
                               arrowprops={"arrowstyle": "-", "color": color,
                                           "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4})
            chosen = text.get_window_extent(renderer)
        placed.setdefault(id(ax), []).append(chosen)


def frontier_title(name: str, table: pd.DataFrame) -> str:
    seeds = table["seeds"].dropna()
    over = ""
    if len(seeds) and seeds.max() > 1:
        lo, hi = int(seeds.min()), int(seeds.max())
        over = f" (pooled over {hi} seeds)" if lo == hi else f" (pooled over {lo}-{hi} seeds)"
    return f"{name}: training slowdown vs background gain per arm{over}"


# --------------------------------------------------------------------------
# a sweep directory -> frontier.parquet and frontier.<fmt>

FIGURE_STEM = "frontier"
TABLE_NAME = "frontier.parquet"


def check_frontier_sweep(sweep_dir: Path) -> None:
    """ConfigError (SWEEP_DIR) unless sweep_dir holds a sweep with changes
    against a reference arm: sweep.json and deltas_mean.parquet with the
    iteration-time change of at least one arm."""
    if not (sweep_dir / "sweep.json").is_file():
        raise ConfigError("SWEEP_DIR", f"{sweep_dir} is not a sweep directory: missing "
                          "sweep.json (run `harness sweep` first)")
    if not (sweep_dir / "deltas_mean.parquet").is_file():
        raise ConfigError("SWEEP_DIR", f"{sweep_dir} has no deltas_mean.parquet: its grid "
                          "compares no arms with a reference ([arms] with reference = ...), "
                          "or none of its cells has finished")


def frontier_of_sweep(sweep_dir: Path, out_dir: Path | None = None,
                      formats: tuple[str, ...] = ("png",)) -> tuple[pd.DataFrame, list[str],
                                                                    list[Path]]:
    """(the frontier table, its text lines, the files written): the table
    as sweep_dir/frontier.parquet and the figure as frontier.<fmt> in out_dir
    (default sweep_dir/plots, checked before anything is drawn:
    outdir.check_figure_dir). ConfigError for a directory that is not a
    sweep with compared arms."""
    from harness.io import outdir
    from harness.analysis.tables import load_sweep
    from harness.outputs.plots.registry import FIGURE_NAMES

    sweep_dir = Path(sweep_dir)
    check_frontier_sweep(sweep_dir)
    sweep = load_sweep(sweep_dir)
    means = sweep.deltas_mean
    if means is None or not (means["metric"] == frontier.SLOWDOWN_METRIC).any():
        raise ConfigError("SWEEP_DIR", f"{sweep_dir}: no arm has an iteration-time change "
                          "against the reference (no finished pair of cells, or no training "
                          "job)")
    table, keys = frontier.sweep_frontier(means, sweep.grid)
    # both outputs checked before anything is drawn or written: the table
    # replaces only an earlier frontier table (a user's file of that name, or
    # a link to one, is refused), in a directory that can take it
    table_path = check_table_path(sweep_dir, len(table))
    figures = outdir.check_figure_dir(Path(out_dir) if out_dir is not None
                                      else sweep_dir / "plots",
                                      "-o" if out_dir is not None else "SWEEP_DIR",
                                      tuple(formats), 1, FIGURE_NAMES)
    name = sweep.grid.get("grid", sweep_dir.name)
    fig = draw_frontier(table, keys, frontier_title(name, table))
    outdir.write_from(table_path, lambda tmp: table.to_parquet(tmp, index=False))
    figures.mkdir(parents=True, exist_ok=True)
    written = [table_path, *save_figure(fig, figures, FIGURE_STEM, tuple(formats))]
    return table, frontier.table_lines(table, keys), written


#: columns only a frontier table has (frontier.frontier_table): how an
#: earlier one is told from a user's file of the same name
_TABLE_MARKS = frozenset({"is_reference", "slowdown_verdict", "pareto_small", "best"})


def is_frontier_table(path: Path) -> bool:
    """A frontier.parquet this module wrote (it may be replaced)."""
    import pyarrow.parquet as pq

    try:
        return _TABLE_MARKS <= set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - not Parquet, unreadable: not ours
        return False


def check_table_path(sweep_dir: Path, rows: int) -> Path:
    """SWEEP_DIR/frontier.parquet, checked as every output is
    (outdir.check_new_file): new or an earlier frontier table; the sweep
    directory must take it (a read-only or full one is named, before
    anything is drawn)."""
    from harness.io import outdir

    try:
        return outdir.check_new_file(sweep_dir / TABLE_NAME, "SWEEP_DIR", is_frontier_table,
                                     16 * 1024 + 1024 * rows)
    except outdir.OutputError as e:
        raise outdir.OutputError("SWEEP_DIR", f"the frontier table goes into the sweep "
                                 f"directory as {TABLE_NAME}: {str(e).split(': ', 1)[1]}"
                                 ) from None
