"""Figures of one run directory, drawn from its tables only (never from ns-3).

plot_run(run_dir) writes, for the tables the run has:
- training-timeline: worker 0's per-layer compute over a few iterations of
  the measurement window, above the ring transfer of each fusion buffer;
- fct-cdf: CDF of measured background FCTs per size class;
- utilization: host-uplink utilisation over time per application and class.

plot_sweep(sweep_dir) writes, from sweep.json and the sweep's tables:
- operating-boundary: the map of SPEC §5, three heat maps (iteration time,
  small-flow and large-flow mean FCT change of each arm vs the reference)
  over U_background (x) and U_training ~ 1/R (y), every cell coloured by the
  training slowdown class (green / yellow / red, grey n/a);
- per-ratio: one panel per R, the same changes over the background axis
  with their 95 % CIs;
- fct-cdf-cells: FCT CDFs per size class of chosen cells (default: both
  arms of the highest-load, lowest-R point);
- utilization-apps: mean host-uplink utilisation of training and background
  per point and arm.

Data preparation lives in small pure functions on DataFrames (testable
without pixels); the draw_* functions only turn their output into axes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from harness.metrics import SIZE_CLASSES
from harness.sweep import SEED_AXIS as SEED_FIELD

REQUIRED = ("config.json", "summary.json")
PHASE_LABEL = {"fp": "forward", "bp": "backward"}
# seaborn "deep": blue/orange for compute phases, red/green/purple for the
# classes, so a class never shares a colour with a phase in the timeline.
_DEEP = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3",
         "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]
PHASE_COLOR = {"fp": _DEEP[0], "bp": _DEEP[1]}
CLASS_COLOR = {"high": _DEEP[3], "normal": _DEEP[2], "low": _DEEP[4]}
APP_STYLE = {"background": "-", "training": "--", "other": ":"}


@dataclass
class RunTables:
    """What a run directory holds; optional tables are None when absent."""
    config: dict
    summary: dict
    flows: pd.DataFrame | None
    utilization: pd.DataFrame | None
    iterations: pd.DataFrame | None
    transfers: pd.DataFrame | None
    compute: pd.DataFrame | None


# --------------------------------------------------------------------------
# reading


def load_run(run_dir: Path) -> RunTables:
    """Read a run directory; FileNotFoundError names what makes it not one."""
    run_dir = Path(run_dir)
    missing = [name for name in REQUIRED if not (run_dir / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{run_dir} is not a run directory: missing {', '.join(missing)}")

    def table(name: str) -> pd.DataFrame | None:
        path = run_dir / f"{name}.parquet"
        return pd.read_parquet(path) if path.is_file() else None

    return RunTables(
        config=json.loads((run_dir / "config.json").read_text()),
        summary=json.loads((run_dir / "summary.json").read_text()),
        flows=table("flows"), utilization=table("utilization"),
        iterations=table("iterations"), transfers=table("transfers"),
        compute=table("compute"))


def measurement_window(config: dict) -> tuple[float, float]:
    """[warmup, duration - cooldown] in seconds, from the resolved scenario."""
    run = config["scenario"]["run"]
    return float(run["warmup"]), float(run["duration"]) - float(run["cooldown"])


def class_order(config: dict) -> list[str]:
    """Traffic classes by band (highest priority first)."""
    bands = config.get("classes", {}).get("class_band", {})
    return sorted(bands, key=lambda name: (bands[name], name))


def class_colors(classes: list[str]) -> dict[str, str]:
    """A stable colour per class: fixed for high/normal/low, the rest in turn."""
    spare = iter(_DEEP[5:])
    return {name: CLASS_COLOR.get(name) or next(spare, "#333333") for name in classes}


# --------------------------------------------------------------------------
# data behind the figures (pure)


def pick_iterations(iterations: pd.DataFrame, window: tuple[float, float],
                    count: int = 3, worker: int = 0) -> list[int]:
    """The first `count` complete iterations of `worker` starting at or after
    the window start; the first ones of the run if none starts in the window."""
    mine = iterations[iterations["worker"] == worker].sort_values("iteration")
    inside = mine[mine["start_ns"] >= window[0] * 1e9]
    chosen = inside if len(inside) else mine
    return [int(i) for i in chosen["iteration"].head(count)]


def timeline_frames(compute: pd.DataFrame, transfers: pd.DataFrame,
                    iterations: pd.DataFrame, window: tuple[float, float],
                    count: int = 3, worker: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(compute_rows, buffer_spans) for the timeline, times in ms.

    compute_rows: `worker`'s layer compute in the chosen iterations
    (iteration, layer, phase, start_ms, end_ms).
    buffer_spans: per (iteration, buffer) the first partition send start to
    the last partition end over all workers (iteration, buffer, layers,
    traffic_class, start_ms, end_ms, finished); an unfinished partition
    (end_ns -1) leaves finished False and the end at the last finished one.
    """
    chosen = pick_iterations(iterations, window, count, worker)
    if not chosen:  # no complete iteration: show the first ones computed
        mine = compute.loc[compute["worker"] == worker, "iteration"]
        chosen = sorted(mine.unique())[:count]
    rows = compute[(compute["worker"] == worker) & compute["iteration"].isin(chosen)]
    compute_rows = pd.DataFrame({
        "iteration": rows["iteration"], "layer": rows["layer"], "phase": rows["phase"],
        "start_ms": rows["start_ns"] / 1e6, "end_ms": rows["end_ns"] / 1e6,
    }).sort_values(["iteration", "start_ms", "layer"]).reset_index(drop=True)
    return compute_rows, buffer_spans(transfers[transfers["iteration"].isin(chosen)])


def buffer_spans(transfers: pd.DataFrame) -> pd.DataFrame:
    """Per (iteration, buffer): ring transfer span over all workers, in ms."""
    t = transfers.assign(done=transfers["end_ns"] >= 0,
                         end=transfers["end_ns"].where(transfers["end_ns"] >= 0))
    spans = t.groupby(["iteration", "buffer"], sort=True).agg(
        layers=("layers", "first"), traffic_class=("traffic_class", "first"),
        start_ns=("start_ns", "min"), end_ns=("end", "max"), finished=("done", "all"))
    spans["end_ns"] = spans["end_ns"].fillna(spans["start_ns"])
    return pd.DataFrame({
        "layers": spans["layers"], "traffic_class": spans["traffic_class"],
        "start_ms": spans["start_ns"] / 1e6, "end_ms": spans["end_ns"] / 1e6,
        "finished": spans["finished"],
    }).reset_index()


def iteration_edges(iterations: pd.DataFrame, chosen: list[int], worker: int = 0) -> list[float]:
    """Start of each chosen iteration and end of the last one, in ms."""
    mine = iterations[(iterations["worker"] == worker) & iterations["iteration"].isin(chosen)]
    if mine.empty:
        return []
    mine = mine.sort_values("iteration")
    return [*(mine["start_ns"] / 1e6), float(mine["end_ns"].iloc[-1]) / 1e6]


def fct_cdf_frame(flows: pd.DataFrame) -> pd.DataFrame:
    """Empirical CDF of measured, completed flows' FCT per size class
    (size_class, fct_ms, cdf); classes without flows are absent."""
    done = flows[flows["measured"] & flows["completed"]]
    parts = []
    for name in SIZE_CLASSES:
        fct_ms = np.sort(done.loc[done["size_class"].astype(str) == name, "fct_s"].to_numpy()) * 1e3
        if len(fct_ms):
            parts.append(pd.DataFrame({"size_class": name, "fct_ms": fct_ms,
                                       "cdf": np.arange(1, len(fct_ms) + 1) / len(fct_ms)}))
    if not parts:
        return pd.DataFrame({"size_class": pd.Series(dtype=str),
                             "fct_ms": pd.Series(dtype=float), "cdf": pd.Series(dtype=float)})
    return pd.concat(parts, ignore_index=True)


def uplink_utilization(util: pd.DataFrame, n_hosts: int) -> pd.DataFrame:
    """Mean utilisation over host uplinks per interval, application and class
    (t_s, app, traffic_class, utilization), zeros where nothing was sent.

    Uplinks are link directions leaving a host (from_node < n_hosts). Idle
    uplinks have no rows, yet count in the mean: every host has at least one
    uplink, so the divisor is at least n_hosts."""
    up = util[util["from_node"] < n_hosts]
    n_uplinks = max(n_hosts, len(up[["link", "from_node"]].drop_duplicates()))
    times = np.sort(util["t_s"].unique())
    total = up.groupby(["app", "traffic_class"])["utilization"].sum()
    combos = list(total.index)
    per_t = up.groupby(["t_s", "app", "traffic_class"])["utilization"].sum()
    full = pd.MultiIndex.from_tuples([(t, a, c) for t in times for a, c in combos],
                                     names=["t_s", "app", "traffic_class"])
    mean = per_t.reindex(full, fill_value=0.0) / n_uplinks
    return mean.rename("utilization").reset_index()


# --------------------------------------------------------------------------
# drawing


def _new_figure(width: float, height: float, **subplots) -> tuple[Figure, np.ndarray]:
    """A Figure not tied to pyplot (no display, no global state), seaborn-styled."""
    import matplotlib
    import seaborn as sns

    with matplotlib.rc_context({**sns.axes_style("whitegrid"),
                                **sns.plotting_context("notebook", font_scale=0.85)}):
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(squeeze=False, **subplots)
    return fig, axes


def draw_timeline(compute_rows: pd.DataFrame, spans: pd.DataFrame, edges: list[float],
                  colors: dict[str, str], title: str) -> Figure:
    """Top: layer compute bars; bottom: buffer ring spans; shared time axis."""
    n_layers = int(compute_rows["layer"].max()) + 1 if len(compute_rows) else 1
    buffers = spans[["buffer", "layers"]].drop_duplicates().sort_values("buffer")
    fig, axes = _new_figure(10, 3 + 0.1 * n_layers + 0.25 * len(buffers), nrows=2,
                            sharex=True, height_ratios=[max(n_layers, 4), max(len(buffers), 3)])
    top, bottom = axes[0, 0], axes[1, 0]

    for phase in sorted(compute_rows["phase"].unique(), key=list(PHASE_LABEL).index):
        rows = compute_rows[compute_rows["phase"] == phase]
        top.barh(rows["layer"], rows["end_ms"] - rows["start_ms"], left=rows["start_ms"],
                 height=0.8, color=PHASE_COLOR.get(phase, "#333333"),
                 label=PHASE_LABEL.get(phase, phase))
    top.set_ylabel("layer (worker 0)")
    top.set_ylim(-0.8, n_layers - 0.2)
    top.yaxis.set_major_locator(MaxNLocator(integer=True))
    top.legend(loc="upper right", fontsize="small", framealpha=0.9)

    for cls, rows in spans.groupby("traffic_class"):
        bottom.barh(rows["buffer"], rows["end_ms"] - rows["start_ms"], left=rows["start_ms"],
                    height=0.7, color=colors.get(cls, "#333333"), label=f"class {cls}")
    unfinished = spans[~spans["finished"]]
    if len(unfinished):  # still in flight at the end of the run
        bottom.barh(unfinished["buffer"], unfinished["end_ms"] - unfinished["start_ms"],
                    left=unfinished["start_ms"], height=0.7, fill=False, hatch="//",
                    label="unfinished")
    bottom.set_yticks(buffers["buffer"], [f"{b}: {l}" for b, l in buffers.itertuples(index=False)])
    bottom.invert_yaxis()  # buffer 0 holds the last layers: on top, like the layers above
    bottom.set_ylabel("fusion buffer: layers")
    bottom.set_xlabel("simulated time (ms)")
    bottom.legend(loc="upper right", fontsize="small", framealpha=0.9)

    # bars pin the axis to their ends; pad so the iteration lines stay visible
    times = pd.concat([pd.Series(edges, dtype=float), compute_rows["start_ms"],
                       compute_rows["end_ms"], spans["start_ms"], spans["end_ms"]])
    lo, hi = times.min(), times.max()
    bottom.set_xlim(lo - 0.01 * (hi - lo), hi + 0.01 * (hi - lo))
    for ax in (top, bottom):
        for x in edges:
            ax.axvline(x, color="black", linestyle="--", linewidth=0.8)
    for iteration, x in zip(sorted(compute_rows["iteration"].unique()), edges[:-1]):
        top.annotate(f"iteration {iteration}", (x, 1), xycoords=("data", "axes fraction"),
                     xytext=(3, -3), textcoords="offset points", va="top", fontsize="small")
    fig.suptitle(title)
    return fig


def draw_fct_cdf(cdf: pd.DataFrame, title: str) -> Figure:
    """One CDF step line per size class, log-scaled FCT."""
    fig, axes = _new_figure(6.5, 4)
    ax = axes[0, 0]
    for k, name in enumerate(SIZE_CLASSES):
        rows = cdf[cdf["size_class"] == name]
        if len(rows):
            ax.step(np.r_[rows["fct_ms"].iloc[0], rows["fct_ms"]], np.r_[0.0, rows["cdf"]],
                    where="post", color=_DEEP[k], label=f"{name} (n={len(rows)})")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of flows")
    ax.legend(title="size class", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title)
    return fig


def draw_utilization(frame: pd.DataFrame, interval_s: float, window: tuple[float, float],
                     colors: dict[str, str], title: str) -> Figure:
    """Step lines per (application, class): colour = class, line style = app."""
    fig, axes = _new_figure(8, 4)
    ax = axes[0, 0]
    times = np.sort(frame["t_s"].unique())
    edges = np.r_[times, times[-1] + interval_s] if len(times) else times
    for (app, cls), rows in frame.groupby(["app", "traffic_class"]):
        y = rows.sort_values("t_s")["utilization"].to_numpy() * 100
        ax.step(edges, np.r_[y, y[-1]], where="post", color=colors.get(cls, "#333333"),
                linestyle=APP_STYLE.get(app, "-."), label=f"{app} ({cls})")
    if len(times):
        total = frame.groupby("t_s")["utilization"].sum().to_numpy() * 100
        ax.step(edges, np.r_[total, total[-1]], where="post", color="black", linewidth=0.8,
                alpha=0.6, label="total")
        # shade what lies outside the measurement window
        ax.axvspan(edges[0], window[0], color="0.85", zorder=0, label="not measured")
        ax.axvspan(window[1], edges[-1], color="0.85", zorder=0)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("mean host-uplink utilisation (%)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------
# writing


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: tuple[str, ...]) -> list[Path]:
    """Write fig as out_dir/stem.<fmt> for each format, each atomically."""
    written = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        tmp = out_dir / f".{stem}.{fmt}.tmp-{os.getpid()}"
        try:
            fig.savefig(tmp, format=fmt, dpi=150)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        written.append(path)
    return written


def _timeline_figure(run: RunTables, window: tuple[float, float], colors: dict) -> Figure | None:
    compute_rows, spans = timeline_frames(run.compute, run.transfers, run.iterations, window)
    if compute_rows.empty:
        return None
    edges = iteration_edges(run.iterations, sorted(compute_rows["iteration"].unique()))
    mean_s = run.summary.get("training", {}).get("mean_iteration_s")
    mean = f"mean iteration {mean_s * 1e3:.1f} ms" if mean_s else "no measured iteration"
    name = run.config["scenario"]["name"]
    return draw_timeline(compute_rows, spans, edges, colors,
                         f"{name}: training timeline ({mean})")


def plot_run(run_dir: Path, out_dir: Path | None = None,
             formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Draw the figures the run's tables allow; returns the written files.
    Missing optional tables skip their figure; a directory without
    config.json/summary.json raises FileNotFoundError."""
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    out_dir = Path(out_dir) if out_dir is not None else run_dir / "plots"
    out_dir.mkdir(parents=True, exist_ok=True)
    formats = tuple(formats)
    window = measurement_window(run.config)
    colors = class_colors(class_order(run.config))
    name = run.config["scenario"]["name"]
    figures: list[tuple[str, Figure | None]] = []

    if run.compute is not None and run.transfers is not None and run.iterations is not None:
        figures.append(("training-timeline", _timeline_figure(run, window, colors)))
    if run.flows is not None:
        cdf = fct_cdf_frame(run.flows)
        if len(cdf):
            figures.append(("fct-cdf", draw_fct_cdf(cdf, f"{name}: background FCT, measured flows")))
    if run.utilization is not None:
        frame = uplink_utilization(run.utilization, int(run.config["topology"]["hosts"]))
        if len(frame):
            interval = float(run.config["scenario"]["run"]["utilization_interval"])
            figures.append(("utilization", draw_utilization(
                frame, interval, window, colors, f"{name}: host-uplink utilisation")))

    written = []
    for stem, fig in figures:
        if fig is not None:
            written += save_figure(fig, out_dir, stem, formats)
    return written


# ==========================================================================
# sweep directories: figures from sweep.json and the sweep's tables only

SWEEP_REQUIRED = ("sweep.json", "summary.parquet")
RATIO_FIELD = "training.ratio"
BACKGROUND_FIELDS = ("background.load", "background.rate")

# operating-boundary classes of the training slowdown (iteration-time change,
# low vs same; SPEC §5): green <= 1 %, yellow <= 30 %, red above
SLOWDOWN_GREEN_MAX = 0.01
SLOWDOWN_YELLOW_MAX = 0.30
BOUNDARY_CLASSES = ("green", "yellow", "red", "n/a")
# light tones so the black cell text stays legible on every class
BOUNDARY_COLORS = {"green": "#9ed89e", "yellow": "#f7dc6f", "red": "#ef8a80", "n/a": "#d3d3d3"}
BOUNDARY_LEGEND = {
    "green": f"slowdown ≤ {100 * SLOWDOWN_GREEN_MAX:g} %",
    "yellow": f"slowdown ≤ {100 * SLOWDOWN_YELLOW_MAX:g} %",
    "red": f"slowdown > {100 * SLOWDOWN_YELLOW_MAX:g} %",
    "n/a": "n/a: pair failed or no measured iterations",
}
# (deltas metric, boundary_table column prefix, panel title)
BOUNDARY_PANELS = (
    ("iteration_time", "iteration", "training iteration time"),
    ("fct_small_mean", "small_fct", "small-flow mean FCT"),
    ("fct_large_mean", "large_fct", "large-flow mean FCT"),
)
_MEASURED = ("u_training", "u_background", "offered_load", "iterations")
_NO_POINT = "_point"   # stands in for the point when a sweep has no axis but the seed


@dataclass
class SweepTables:
    """What a sweep directory holds; the deltas tables are None without arms."""
    dir: Path
    grid: dict                       # sweep.json
    summary: pd.DataFrame
    deltas: pd.DataFrame | None
    deltas_mean: pd.DataFrame | None


def load_sweep(sweep_dir: Path) -> SweepTables:
    """Read a sweep directory; FileNotFoundError names what makes it not one."""
    sweep_dir = Path(sweep_dir)
    missing = [name for name in SWEEP_REQUIRED if not (sweep_dir / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{sweep_dir} is not a sweep directory: missing {', '.join(missing)}")

    def table(name: str) -> pd.DataFrame | None:
        path = sweep_dir / f"{name}.parquet"
        return pd.read_parquet(path) if path.is_file() else None

    return SweepTables(sweep_dir, json.loads((sweep_dir / "sweep.json").read_text()),
                       table("summary"), table("deltas"), table("deltas_mean"))


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


def slowdown_class(change: float) -> str:
    """Colour class of an iteration-time change (fraction; NaN -> 'n/a').
    A speed-up counts as free: green."""
    if change is None or not np.isfinite(change):
        return "n/a"
    if change <= SLOWDOWN_GREEN_MAX:
        return "green"
    return "yellow" if change <= SLOWDOWN_YELLOW_MAX else "red"


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


def boundary_table(deltas_mean: pd.DataFrame, summary: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """One row per map cell: (compared arm, point) with the point's axis
    values, measured u_training / u_background of the reference arm (mean
    over ok seeds), offered_load, seeds (seed values of the point), failed
    (failed cells of the pair over seeds), n (pairs behind the iteration
    change), {iteration, small_fct, large_fct}_{mean,ci,n} (fractions; ci =
    95 % CI half-width, NaN when n <= 1) and color (slowdown_class of
    iteration_mean).

    Points come from the summary, so a point whose cells all failed still
    gets its (n/a) row."""
    keys = point_fields(grid)
    reference = grid.get("reference")
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, *_MEASURED])))
    summary, gkeys = _with_point(summary, keys)
    deltas_mean, _ = _with_point(deltas_mean, keys)
    ok = summary[summary["status"] == "ok"]
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
        failed = pair[pair["status"] != "ok"].groupby(gkeys, dropna=False).size()
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
            for metric, prefix, _ in BOUNDARY_PANELS:
                stats = mine.loc[(*key, metric)] if (*key, metric) in mine.index else None
                n = int(stats["n"]) if stats is not None and pd.notna(stats["n"]) else 0
                mean = float(stats["mean"]) if stats is not None and n else np.nan
                half = (float(stats["ci95_high"] - stats["ci95_low"]) / 2
                        if stats is not None and n > 1 else np.nan)
                row[f"{prefix}_mean"], row[f"{prefix}_ci"], row[f"{prefix}_n"] = mean, half, n
            row["n"] = row["iteration_n"]
            row["color"] = slowdown_class(row["iteration_mean"])
            rows.append(row)
    columns = ["arm", *gkeys, "u_training", "u_background", "offered_load", "seeds", "failed",
               "n", *(f"{p}_{s}" for _, p, _ in BOUNDARY_PANELS for s in ("mean", "ci", "n")),
               "color"]
    table = pd.DataFrame(rows, columns=columns)
    return table.drop(columns=[_NO_POINT], errors="ignore")


def per_ratio_frame(deltas_mean: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """The per-ratio lines: deltas_mean rows of the three boundary metrics
    for the compared arms (point fields, arm, metric, n, mean, ci95_low/high)."""
    metrics = [m for m, _, _ in BOUNDARY_PANELS]
    rows = deltas_mean[deltas_mean["metric"].isin(metrics)
                       & deltas_mean["arm"].isin(compared_arms(grid))]
    return rows[[*point_fields(grid), "arm", "metric", "n", "mean", "ci95_low", "ci95_high"]] \
        .reset_index(drop=True)


def default_cdf_cells(summary: pd.DataFrame, grid: dict) -> list[str]:
    """Cells of the point hardest on the background: highest background load
    (rate), then lowest R, then the lowest value of every other axis (seed
    included); one ok cell per arm, in the grid's arm order."""
    ok = summary[summary["status"] == "ok"]
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
        cdf = fct_cdf_frame(pd.read_parquet(path))
        parts.append(cdf.assign(cell=cell, label=label))
    if not parts:
        return pd.DataFrame(columns=["size_class", "fct_ms", "cdf", "cell", "label"])
    return pd.concat(parts, ignore_index=True)


def utilization_frame(summary: pd.DataFrame, grid: dict) -> pd.DataFrame:
    """Mean host-uplink utilisation per application for each (point, arm),
    over its ok seeds (point fields, arm, n = ok cells, u_training,
    u_background, offered_load); a (point, arm) whose cells all failed keeps
    its row, with n 0 and NaN values, so the figure can say n/a."""
    keys = point_fields(grid)
    values = ["u_training", "u_background", "offered_load"]
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, *_MEASURED])))
    frame, gkeys = _with_point(summary, keys)
    ok = frame["status"] == "ok"
    frame = frame.assign(ok=ok, **{v: frame[v].where(ok) for v in values})
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "arm", "n", *values])
    out = frame.groupby([*gkeys, "arm"], dropna=False, sort=False).agg(
        n=("ok", "sum"), **{v: (v, "mean") for v in values}).reset_index()
    arm_order = {a: i for i, a in enumerate(grid.get("arms", []))}
    out = out.sort_values([*gkeys, "arm"], key=lambda s: s.map(arm_order) if s.name == "arm"
                          else s).reset_index(drop=True)
    return out.drop(columns=[_NO_POINT], errors="ignore")


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


def _cell_text(mean: float, ci: float, n: int, seeds: int) -> str:
    """'+12.3 %', then '± 4.5' when a CI exists and 'n=1/2' when some seeds
    gave no pair; 'n/a' without a value."""
    if not np.isfinite(mean):
        return "n/a"
    v = 100 * mean
    # two decimals below 1 %: the green limit is 1 %, so 0.4 vs 0.04 matters
    text = f"{v:+.2f} %" if abs(v) < 1 else f"{v:+.1f} %"
    if np.isfinite(ci):
        text += f"\n± {100 * ci:.1f}"
    if n < seeds:
        text += f"\nn={n}/{seeds}"
    return text


def draw_boundary(table: pd.DataFrame, grid: dict, x_labels: dict, title: str) -> Figure:
    """Three maps side by side (iteration time, small FCT, large FCT change)
    per facet row; every cell coloured by the training slowdown class."""
    from matplotlib.patches import Patch, Rectangle

    y, x = boundary_axes(grid)
    facets = _facets(table, grid)
    ys, xs = _y_order(table, y), _x_order(table, x)
    width = 3 * max(3.4, 1.15 * len(xs) + 1.4) + 1.2
    fig, axes = _new_figure(width, len(facets) * max(2.6, 0.85 * len(ys) + 1.6) + 0.6,
                            nrows=len(facets), ncols=3)
    size = "medium" if len(xs) <= 4 else "small"
    for row, (facet, rows) in enumerate(facets):
        for col, (_, prefix, name) in enumerate(BOUNDARY_PANELS):
            ax = axes[row, col]
            for i, yv in enumerate(ys):
                for j, xv in enumerate(xs):
                    r = _map_cell(rows, y, yv, x, xv)
                    color, text = "n/a", "n/a"   # a point this facet lacks: nothing ran
                    if r is not None:
                        color = r["color"]
                        text = _cell_text(r[f"{prefix}_mean"], r[f"{prefix}_ci"],
                                          int(r[f"{prefix}_n"]), int(r["seeds"]))
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, edgecolor="white",
                                           linewidth=2, facecolor=BOUNDARY_COLORS[color]))
                    ax.text(j, i, text, ha="center", va="center", fontsize=size)
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_ylim(-0.5, len(ys) - 0.5)
            ax.set_xticks(range(len(xs)), [x_labels.get(v, str(v)) for v in xs])
            if col == 0:
                ax.set_yticks(range(len(ys)), [ratio_label(v) if y else _training_label(rows)
                                               for v in ys])
                ax.set_ylabel("U_training ≈ 1/R")
            else:
                ax.set_yticks(range(len(ys)), [""] * len(ys))
            ax.grid(False)
            ax.set_xlabel("U_background (offered load per host link)")
            letter = "abc"[col]
            ax.set_title(f"({letter}) {name}\nchange {facet} (%)", fontsize="medium")
    fig.legend(handles=[Patch(facecolor=BOUNDARY_COLORS[c], label=BOUNDARY_LEGEND[c])
                        for c in BOUNDARY_CLASSES],
               loc="outside lower center", ncols=4, title="cell colour: training slowdown "
               "(iteration-time change, every panel)", fontsize="small")
    fig.suptitle(title)
    return fig


def _training_label(rows: pd.DataFrame) -> str:
    """The single map row when R is not an axis: the measured training load."""
    u = rows["u_training"].mean()
    return f"U_training ≈ {_pct(u)} %" if np.isfinite(u) else "training"


PER_RATIO_STYLE = {"iteration_time": _DEEP[0], "fct_small_mean": _DEEP[1],
                   "fct_large_mean": _DEEP[4]}


def draw_per_ratio(frame: pd.DataFrame, grid: dict, x_labels: dict, title: str) -> Figure:
    """One panel per R (columns, descending R = rising training load) and per
    facet (rows): mean change in % over the background axis, 95 % CI bars."""
    y, x = boundary_axes(grid)
    facets = _facets(frame, grid)
    ratios = _y_order(frame, y)
    xs = _x_order(frame, x)
    # more than three R: wrap onto rows, so the figure stays page-shaped
    ncols = len(ratios) if len(ratios) <= 3 else -(-len(ratios) // 2)
    per_facet = -(-len(ratios) // ncols)
    fig, axes = _new_figure(max(4.0, 0.9 * len(xs) + 1.6) * ncols + 0.6,
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
                mean = m["mean"].to_numpy(dtype=float) * 100
                err = np.vstack([mean - m["ci95_low"].to_numpy(dtype=float) * 100,
                                 m["ci95_high"].to_numpy(dtype=float) * 100 - mean])
                ax.errorbar(pos, mean, yerr=np.nan_to_num(err), color=PER_RATIO_STYLE[metric],
                            marker="o", capsize=3, label=names[metric])
            ax.axhline(0, color="black", linewidth=0.8)
            # linear within the green limit, logarithmic beyond: iteration changes
            # of a fraction of a per cent stay visible next to FCT changes and
            # CIs of hundreds of per cent
            ax.set_yscale("symlog", linthresh=100 * SLOWDOWN_GREEN_MAX)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            for limit in (SLOWDOWN_GREEN_MAX, SLOWDOWN_YELLOW_MAX):
                ax.axhline(100 * limit, color="0.45", linestyle=":", linewidth=1)
            ax.set_xticks(range(len(xs)), [x_labels.get(v, str(v)).replace(" (", "\n(")
                                           for v in xs])
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_xlabel("background load per host link" if x != "background.rate"
                          else "background rate λ (offered load)")
            head = f"R={ratio:g} (U_training ≈ {_pct(1 / ratio)} %)" if y else "all points"
            ax.set_title(head + (f"\n{facet}" if len(facets) > 1 else ""), fontsize="medium")
            if col == 0:
                ax.set_ylabel(f"mean change vs {grid.get('reference')} (%, symlog)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    from matplotlib.lines import Line2D
    handles.append(Line2D([], [], color="0.45", linestyle=":"))
    labels.append(f"slowdown class limits ({100 * SLOWDOWN_GREEN_MAX:g} %, "
                  f"{100 * SLOWDOWN_YELLOW_MAX:g} %)")
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize="small")
    fig.suptitle(title)
    return fig


def draw_cdf_cells(frame: pd.DataFrame, title: str) -> Figure:
    """One panel per size class, one CDF step line per chosen cell."""
    fig, axes = _new_figure(13, 4, ncols=len(SIZE_CLASSES), sharey=True)
    labels = list(dict.fromkeys(frame["label"]))
    for ax, name in zip(axes[0], SIZE_CLASSES):
        here = frame[frame["size_class"] == name]
        for k, label in enumerate(labels):
            rows = here[here["label"] == label]
            if len(rows):
                ax.step(np.r_[rows["fct_ms"].iloc[0], rows["fct_ms"]], np.r_[0.0, rows["cdf"]],
                        where="post", color=_DEEP[k % len(_DEEP)],
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


APP_COLOR = {"training": _DEEP[0], "background": _DEEP[1]}
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
    fig, axes = _new_figure(max(7.0, 0.32 * 2 * len(arms) * n_groups + 3.5),
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
                    if not np.isfinite(value):   # every seed of this cell failed
                        ax.text(pos, 0, "n/a", rotation=90, ha="center", va="bottom",
                                fontsize="x-small")
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


def plot_sweep(sweep_dir: Path, out_dir: Path | None = None,
               formats: tuple[str, ...] = ("png", "pdf"),
               cells: list[str] | None = None) -> list[Path]:
    """Draw the figures a sweep directory's tables allow; returns the written
    files. A figure whose data is missing is skipped (no arms: no map and no
    per-ratio figure). `cells`: ids (or unique prefixes) for the FCT CDFs,
    default: both arms of the highest-load, lowest-R point. A directory
    without sweep.json/summary.parquet raises FileNotFoundError; an unknown
    cell id UnknownCellError."""
    sweep = load_sweep(sweep_dir)
    grid, summary = sweep.grid, sweep.summary
    # a wrong --cell fails before anything is drawn or written
    chosen = resolve_cells(summary, list(cells)) if cells else default_cdf_cells(summary, grid)
    out_dir = Path(out_dir) if out_dir is not None else sweep.dir / "plots"
    name = grid.get("grid", sweep.dir.name)
    seeds = int(summary[SEED_FIELD].nunique()) if SEED_FIELD in summary else 1
    over = f" (mean over {seeds} seeds)" if seeds > 1 else ""
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
