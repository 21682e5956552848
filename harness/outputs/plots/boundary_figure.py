"""The boundary figure of a search (harness.sweeps.searching): per threshold, the
searched field's crossing at each point of the other axes, with its bracket
as an error bar, optionally over the colour cells of a map sweep (the
training verdict of each (point, value) the map ran). Tables only, no ns-3.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from harness.analysis import crossings, stats
from harness.config.scenario import ConfigError
from harness.outputs.plots.style import PALETTE, new_figure, save_figure
from harness.outputs.plots.boundary_map import BOUNDARY_COLORS, BOUNDARY_LEGEND
from harness.outputs.plots.sweep_data import BOUNDARY_CLASSES
from harness.analysis.tables import SEED_AXIS, read_sweep_record, read_table

MAP_METRIC = "iteration_time"


def check_map(map_dir: Path, point_fields: list[str], field: str, arm: str) -> None:
    """ConfigError (--map) unless map_dir is a sweep directory with the
    training verdicts of `arm` over the points' fields and the searched field."""
    record = map_dir / "sweep.json"
    if not record.is_file() or not (map_dir / "deltas_mean.parquet").is_file():
        raise ConfigError("--map", f"{map_dir} is not a sweep directory with its tables "
                          "(sweep.json, deltas_mean.parquet)")
    stored = read_sweep_record(map_dir)   # a damaged sweep.json: one line naming it
    axes = stored.get("axes", [])
    missing = [f for f in (*point_fields, field) if f not in axes]
    if missing:
        raise ConfigError("--map", f"{map_dir} has no axis {', '.join(missing)}; its axes: "
                          f"{', '.join(a for a in axes if a != SEED_AXIS)}")
    arms = stored.get("arms", [])
    if arm not in arms:
        raise ConfigError("--map", f"{map_dir} has no arm {arm!r}; its arms: {', '.join(arms)}")
    # the table itself, read now: not after every probe has run
    try:
        map_cells(map_dir, point_fields, field, arm)
    except ConfigError as e:   # not Parquet, truncated
        raise ConfigError("--map", str(e)) from None
    except KeyError as e:
        raise ConfigError("--map", f"{map_dir / 'deltas_mean.parquet'} lacks the column(s) "
                          f"{e}; rerun the map's sweep (harness sweep GRID -o DIR "
                          "--resume rewrites its tables)") from None


def map_cells(map_dir: Path, point_fields: list[str], field: str, arm: str) -> pd.DataFrame:
    """The map's training verdicts: point fields, the searched field, change,
    change_low, change_high, decided (one row per map point of `arm`)."""
    means = read_table(map_dir / "deltas_mean.parquet")
    rows = means[(means["metric"] == MAP_METRIC) & (means["arm"] == arm)]
    return rows[[*point_fields, field, "change", "change_low", "change_high", "decided"]]


def _class(change: float) -> str:
    """The colour class of an estimate (the map colours an undecided cell by it)."""
    return stats.slowdown_class(change)


def _label(fields: list[str], values: tuple) -> str:
    return ", ".join(f"{f.rsplit('.', 1)[-1]}={v:g}" if isinstance(v, (int, float))
                     else f"{f.rsplit('.', 1)[-1]}={v}" for f, v in zip(fields, values)) or "all"


def _edges(values: list[float], log: bool) -> list[tuple[float, float]]:
    """Each map value's cell along the searched axis: halfway (geometric on a
    log axis) to its neighbours, as far beyond the ends."""
    v = np.log(values) if log else np.asarray(values, float)
    if len(v) == 1:
        mids = [v[0] - 0.5, v[0] + 0.5]
    else:
        inner = (v[1:] + v[:-1]) / 2
        mids = [v[0] - (inner[0] - v[0]), *inner, v[-1] + (v[-1] - inner[-1])]
    mids = np.exp(mids) if log else np.asarray(mids)
    return list(zip(mids[:-1], mids[1:]))


def _ticks(lo: float, hi: float, log: bool, map_values=()) -> list[float]:
    """The searched axis's ticks, as plain numbers: the range's ends and the
    map's values; without a map, round values in between (1, 2, 5 a decade
    on a log axis), none so near an end that their labels would touch."""
    ticks = {float(lo), float(hi), *(float(v) for v in map_values)}
    if not len(map_values):
        locator = LogLocator(subs=(1.0, 2.0, 5.0)) if log else MaxNLocator(nbins=6)
        span = np.log(hi / lo) if log else hi - lo
        for t in locator.tick_values(lo, hi):
            off = min(abs(np.log(t / lo)), abs(np.log(hi / t))) if log and t > 0 \
                else min(abs(t - lo), abs(hi - t))
            if lo < t < hi and off > 0.06 * span:
                ticks.add(float(t))
    return sorted(ticks)


def draw_boundary_curves(table: pd.DataFrame, point_fields: list[str], field: str,
                         lo: float, hi: float, title: str,
                         cells: pd.DataFrame | None = None,
                         probes: pd.DataFrame | None = None,
                         log: bool | None = None, width: float | None = None) -> Figure:
    """x: the points (the other axes' combinations), y: the searched field.
    Per threshold a marker at each crossing estimate with its bracket as an
    error bar, joined point to point; an undecided search's bracket dashed
    without a marker; a crossing outside the range an arrow at the range's
    end. cells: a map's verdicts, drawn underneath; probes (probes.parquet):
    each probe a small dot beside its search's bar, hollow where undecided.
    log: the searched axis on a log scale (a search with log spacing); None:
    where the range spans a factor 4 or more. width (inches): the figure's
    (a page as narrow as the documentation's); None: room for every point's
    label."""
    from matplotlib.lines import Line2D

    keys = sorted({tuple(r) for r in table[point_fields].itertuples(index=False)}) \
        if point_fields else [()]
    x_of = {k: i for i, k in enumerate(keys)}
    if log is None:
        log = lo > 0 and hi / lo >= 4   # rates a factor apart: even steps on a log axis
    fig, axes = new_figure(width or max(5.0, 1.3 * len(keys) + 2.5), 4.8)
    ax = axes[0, 0]
    handles = []
    if cells is not None and len(cells):
        handles += _draw_map_cells(ax, cells, point_fields, field, x_of, log)
    thresholds = sorted(table["threshold"].unique())
    for n, t in enumerate(thresholds):
        color = PALETTE[n % len(PALETTE)]
        shift = (n - (len(thresholds) - 1) / 2) * 0.12   # side by side, not on top
        _draw_searches(ax, table[table["threshold"] == t], point_fields, x_of, shift, color,
                       lo, hi)
        if probes is not None:
            for r in probes[probes["threshold"] == t].to_dict("records"):
                x = x_of[tuple(r[f] for f in point_fields)] + shift + 0.05
                ax.plot([x], [r[field]], marker="o", markersize=4, color=color,
                        markerfacecolor=color if r["side"] != stats.UNDECIDED else "white",
                        linestyle="none", zorder=4)
        handles.append(Line2D([], [], color=color, marker="o",
                              label=f"slowdown crosses {100 * t:g} %: estimate, bracket"))
    if probes is not None and len(probes):
        handles.append(Line2D([], [], color="#555555", marker="o", markersize=4,
                              markerfacecolor="white", linestyle="none",
                              label="probes (filled: decided, hollow: undecided)"))
    handles += [Line2D([], [], color="#555555", linestyle="--",
                       label="undecided between (probes stayed undecided)"),
                Line2D([], [], color="#555555", marker="v", linestyle="none",
                       label="below the range / ^ above it")]
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    map_values = cells[field].unique() if cells is not None and len(cells) else ()
    ax.set_yticks(_ticks(lo, hi, log, map_values))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylim(lo / 1.15 if log else lo - 0.05 * (hi - lo), hi * 1.15 if log else hi + 0.05 * (hi - lo))
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_xticks(range(len(keys)), [_label(point_fields, k) for k in keys])
    ax.set_xlabel(", ".join(point_fields) or "the grid's one point")
    ax.set_ylabel(field)
    ax.grid(False)
    fig.legend(handles=handles, loc="outside lower center", ncols=1 if width else 2,
               fontsize="small")
    fig.suptitle(title)
    return fig


def _draw_map_cells(ax, cells: pd.DataFrame, point_fields: list[str], field: str,
                    x_of: dict, log: bool) -> list:
    """A map's training verdicts underneath, one coloured cell per (point,
    value), hatched where undecided; their legend handles."""
    from matplotlib.patches import Patch, Rectangle

    values = sorted(cells[field].unique())
    spans = dict(zip(values, _edges(values, log)))
    for r in cells.to_dict("records"):
        key = tuple(r[f] for f in point_fields)
        if key not in x_of:
            continue
        y0, y1 = spans[r[field]]
        cls = _class(r["change"])
        ax.add_patch(Rectangle((x_of[key] - 0.5, y0), 1, y1 - y0, facecolor=BOUNDARY_COLORS[cls],
                               edgecolor="white", linewidth=2, alpha=0.8, zorder=0))
        if not r["decided"] and cls != stats.NOT_APPLICABLE:
            ax.add_patch(Rectangle((x_of[key] - 0.5, y0), 1, y1 - y0, fill=False,
                                   hatch="///", edgecolor="#777777", linewidth=0, zorder=0))
    shown = {_class(c) for c in cells["change"]}
    legend = {**BOUNDARY_LEGEND,
              stats.NOT_APPLICABLE: f"{stats.NOT_APPLICABLE}: no change measured"}
    handles = [Patch(facecolor=BOUNDARY_COLORS[c], label=f"map: {legend[c]}")
               for c in BOUNDARY_CLASSES if c in shown]
    handles.append(Patch(facecolor="white", edgecolor="#777777", hatch="///",
                         label="map: undecided at 95 %"))
    return handles


def _draw_searches(ax, rows: pd.DataFrame, point_fields: list[str], x_of: dict, shift: float,
                   color, lo: float, hi: float) -> None:
    """One threshold's searches: a bracketed crossing as a marker with its
    bracket, joined point to point; an undecided one's bracket dashed; one
    outside the range an arrow at the range's end."""
    line_x, line_y = [], []
    for r in rows.to_dict("records"):
        x = x_of[tuple(r[f] for f in point_fields)] + shift
        status = r["status"]
        if status == crossings.BRACKETED:
            ax.errorbar([x], [r["crossing"]], yerr=[[r["crossing"] - r["low"]],
                                                    [r["high"] - r["crossing"]]],
                        fmt="o", color=color, capsize=4, zorder=3)
            line_x.append(x)
            line_y.append(r["crossing"])
        elif status == crossings.UNDECIDED_BETWEEN:
            y0 = r["low"] if np.isfinite(r["low"]) else lo
            y1 = r["high"] if np.isfinite(r["high"]) else hi
            ax.plot([x, x], [y0, y1], color=color, linestyle="--", linewidth=1.5, zorder=3)
            ax.plot([x, x], [y0, y1], color=color, linestyle="none", marker="_",
                    markersize=10, zorder=3)
        elif status == crossings.BELOW_RANGE:
            ax.plot([x], [lo], marker="v", color=color, markersize=9, zorder=3)
        elif status == crossings.ABOVE_RANGE:
            ax.plot([x], [hi], marker="^", color=color, markersize=9, zorder=3)
    order = np.argsort(line_x)
    ax.plot(np.asarray(line_x)[order], np.asarray(line_y)[order], color=color,
            linewidth=1.2, zorder=2)


def plot_boundary(out: Path, grid, table: pd.DataFrame, map_dir: Path | None = None,
                  formats: tuple[str, ...] = ("png",),
                  probes: pd.DataFrame | None = None) -> list[Path]:
    """out/boundary.<fmt>, over the map in map_dir if given."""
    spec = grid.search
    fields = [f for f, _ in grid.axes if f != SEED_AXIS]
    cells = map_cells(map_dir, fields, spec.field, spec.arm) if map_dir is not None else None
    title = (f"{grid.name}: where the training slowdown ({spec.arm} vs {grid.reference}) "
             f"crosses {', '.join(f'{100 * t:g} %' for t in spec.thresholds)}")
    fig = draw_boundary_curves(table, fields, spec.field, spec.lo, spec.hi, title, cells, probes,
                               log=spec.spacing == "log")
    return save_figure(fig, out, "boundary", formats)
