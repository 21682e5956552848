"""Drawing a sweep's other figures, each from its table in sweep_data:
- per-ratio: one panel per R, the changes of the map's three metrics over
  the background axis with their 95 % CIs;
- fct-cdf-cells: FCT CDFs per size class of chosen cells;
- utilization-apps: mean host-uplink utilisation of training and background
  per point and arm;
- comparison: for a grid over something other than R and the background
  (e.g. training.policy), the absolute iteration time and small/large-flow
  mean FCT per point and arm, with 95 % CIs over seeds. Such a grid has no
  map (one cell each); this is its answer.
(The map itself: boundary_map.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from harness.analysis import stats
from harness.analysis.metrics import SIZE_CLASSES
from harness.analysis.tables import POINT_LABEL
from harness.outputs.plots.style import PALETTE, new_figure
from harness.outputs.plots.sweep_axes import (boundary_axes, facet_rows, pct, point_fields,
                                              point_label, x_order, y_order)
from harness.outputs.plots.sweep_data import BOUNDARY_PANELS, COMPARISON_PANELS


PER_RATIO_STYLE = {"iteration_time": PALETTE[0], "fct_small_mean": PALETTE[1],
                   "fct_large_mean": PALETTE[4]}


def draw_per_ratio(frame: pd.DataFrame, grid: dict, x_labels: dict, title: str) -> Figure:
    """One panel per R (columns, descending R = rising training load) and per
    facet (rows): the change in % over the background axis, with its 95 %
    bootstrap interval."""
    y, x = boundary_axes(grid)
    facets = facet_rows(frame, grid)
    ratios = y_order(frame, y)
    xs = x_order(frame, x)
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
            head = f"R={ratio:g} (U_training ≈ {pct(1 / ratio)} %)" if y else "all points"
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
    fig, axes = new_figure(12, 4, ncols=len(SIZE_CLASSES), sharey=True)
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
    panels = y_order(frame, y)
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
            ax.set_title(f"R={ratio:g} (U_training ≈ {pct(1 / ratio)} %)", fontsize="medium")
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


#: seaborn bootstraps the bars' intervals: seeded, so a figure redrawn from the
#: same tables is the same figure (unseeded, it drew other error bars each time)
COMPARISON_SEED = 0
#: a comparison's width per bar (inches) and beside the bars (its y labels)
COMPARISON_BAR_IN, COMPARISON_MARGIN_IN = 0.45, 2.5


def draw_comparison(frame: pd.DataFrame, grid: dict, title: str,
                    width: float | None = None) -> Figure:
    """One panel per metric; bars per point (x, the grid's order) and arm
    (hue), 95 % CI over seeds. `width` (inches): the points wrap into as
    many rows of panels as that width needs (a page as narrow as the
    documentation's); None: every point in one row."""
    import seaborn as sns

    order = list(dict.fromkeys(frame["point"]))
    arms = list(dict.fromkeys(frame["arm"]))
    # one arm per bar position (points with their own arms): no empty slots
    dodge = bool(frame.groupby("point")["arm"].nunique().max() > 1)
    point_width = COMPARISON_BAR_IN * max(len(arms), 1)
    per_row = len(order) if width is None else \
        max(1, int((width - COMPARISON_MARGIN_IN) // point_width))
    chunks = [order[i:i + per_row] for i in range(0, len(order), per_row)] or [order]
    n = len(COMPARISON_PANELS)
    fig, axes = new_figure(width or max(7.0, point_width * len(order) + COMPARISON_MARGIN_IN),
                           (2.6 * n + 0.8) * len(chunks) + 0.2, nrows=n * len(chunks))
    fields = point_fields(grid)
    for c, points in enumerate(chunks):
        for k, (_, metric) in enumerate(COMPARISON_PANELS):
            ax = axes[c * n + k, 0]
            rows = frame[(frame["metric"] == metric) & frame["point"].isin(points)]
            sns.barplot(data=rows, x="point", y="value_ms", hue="arm", order=points,
                        hue_order=arms, errorbar=("ci", 95), ax=ax,
                        palette=PALETTE[:len(arms)], dodge=dodge, seed=COMPARISON_SEED)
            ax.set_ylabel(metric)
            ax.set_xlabel("")
            if k < n - 1:   # a row's points named once, under its last panel
                ax.tick_params(axis="x", labelbottom=False)
            if ax.get_legend() is not None:  # one legend, in the top panel
                if ax is axes[0, 0]:
                    ax.get_legend().set_title("arm")
                else:
                    ax.get_legend().remove()
        axes[c * n + n - 1, 0].set_xlabel(POINT_LABEL if POINT_LABEL in fields
                                          else ", ".join(fields))
    fig.suptitle(title)
    return fig
