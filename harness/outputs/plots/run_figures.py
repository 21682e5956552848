"""Figures of one run, drawn from its tables only (never from ns-3): a run
directory or a Run in memory (harness.analysis.tables.Run, the same type either way).

draw_run(run) draws and plot_run(run) writes, for the tables the run has:
- training-timeline: worker 0's per-layer compute over a few iterations of
  the measurement window, above the ring transfer of each fusion buffer
  (parameter servers: each tensor's first push to its last pull);
- fct-cdf: CDF of measured background FCTs per size class;
- utilization: host-uplink utilisation over time per application and class;
- job-phases (several jobs): when each job communicates, over a stretch of the
  window, and how much of that time the jobs communicate at once (whether
  they take turns).

Data preparation lives in small pure functions on DataFrames (testable
without pixels); the draw_* functions only turn their output into axes. The
report's per-cell figures are these (draw_run), with the iteration-time
distribution (iteration_figure) beside them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from harness.analysis.metrics import SIZE_CLASSES
from harness.outputs.plots.style import PALETTE, new_figure, save_figure  # noqa: F401 (save_figure: plots')
from harness.analysis.tables import Run, read_run

REQUIRED = ("config.json", "summary.json")
PHASE_LABEL = {"fp": "forward", "bp": "backward"}
# blue/orange for compute phases, red/green/purple for the classes, so a
# class never shares a colour with a phase in the timeline.
PHASE_COLOR = {"fp": PALETTE[0], "bp": PALETTE[1]}
CLASS_COLOR = {"high": PALETTE[3], "normal": PALETTE[2], "low": PALETTE[4]}
APP_STYLE = {"background": "-", "training": "--", "other": ":"}


# the tables the figures read
FIGURE_TABLES = ("flows", "utilization", "iterations", "transfers", "compute", "services",
                 "streams")


# --------------------------------------------------------------------------
# reading


def load_run(run_dir: Path) -> Run:
    """Read a run directory's tables the figures need (harness.analysis.tables.read_run);
    FileNotFoundError names what makes it not a run directory."""
    return read_run(run_dir, FIGURE_TABLES, REQUIRED)


def measurement_window(config: dict, summary: dict | None = None) -> tuple[float, float]:
    """The window flows and iterations were measured in, seconds: the run's
    own (summary.json), else [warmup, duration - cooldown] of the scenario."""
    if summary and "window_s" in summary:
        start, end = summary["window_s"]
        return float(start), float(end)
    run = config["scenario"]["run"]
    return float(run["warmup"]), float(run["duration"]) - float(run["cooldown"])


def class_order(config: dict) -> list[str]:
    """Traffic classes by band (highest priority first)."""
    bands = config.get("classes", {}).get("class_band", {})
    return sorted(bands, key=lambda name: (bands[name], name))


def class_colors(classes: list[str]) -> dict[str, str]:
    """A stable colour per class: fixed for high/normal/low, the rest in turn."""
    spare = iter(PALETTE[5:])
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


def job_phases(transfers: pd.DataFrame) -> pd.DataFrame:
    """When each job communicates: the union of its transfers' [start, end)
    over every worker, as disjoint intervals (job, start_ms, end_ms).
    Unfinished transfers (end_ns -1) count until the job's last end (or
    their start, if later)."""
    rows = []
    for job, t in transfers.groupby("job", sort=True):
        last = t["end_ns"].max()
        spans = sorted((s, e if e >= 0 else max(s, last)) for s, e in zip(t["start_ns"],
                                                                          t["end_ns"]))
        cur_start, cur_end = spans[0]
        for start, end in spans[1:]:
            if start > cur_end:
                rows.append((job, cur_start, cur_end))
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        rows.append((job, cur_start, cur_end))
    out = pd.DataFrame(rows, columns=["job", "start_ns", "end_ns"])
    return pd.DataFrame({"job": out["job"], "start_ms": out["start_ns"] / 1e6,
                         "end_ms": out["end_ns"] / 1e6})


def overlap_share(phases: pd.DataFrame, window_ms: tuple[float, float]) -> float | None:
    """Of the time in `window_ms` that some job communicates, the share in
    which two or more do: 0 = they take turns, 1 = always together."""
    lo, hi = window_ms
    edges = []
    for start, end in zip(phases["start_ms"].clip(lo, hi), phases["end_ms"].clip(lo, hi)):
        if end > start:
            edges += [(start, 1), (end, -1)]
    edges.sort()
    busy = both = 0.0
    active, prev = 0, None
    for t, step in edges:
        if prev is not None and active:
            busy += t - prev
            both += (t - prev) if active > 1 else 0.0
        active += step
        prev = t
    return both / busy if busy else None


def draw_job_phases(phases: pd.DataFrame, names: dict[int, str], span_ms: tuple[float, float],
                    title: str) -> Figure:
    """One row per job, a bar wherever it communicates, over `span_ms`."""
    jobs = sorted(phases["job"].unique())
    fig, axes = new_figure(10, 1.2 + 0.5 * len(jobs))
    ax = axes[0, 0]
    for row, job in enumerate(jobs):
        p = phases[(phases["job"] == job) & (phases["end_ms"] > span_ms[0])
                   & (phases["start_ms"] < span_ms[1])]
        ax.broken_barh(list(zip(p["start_ms"], p["end_ms"] - p["start_ms"])), (row - 0.35, 0.7),
                       color=PALETTE[row % len(PALETTE)])
    ax.set_yticks(range(len(jobs)), [names.get(int(j), str(j)) for j in jobs])
    ax.set_ylim(-0.6, len(jobs) - 0.4)
    ax.invert_yaxis()
    ax.set_xlim(*span_ms)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("job communicating")
    fig.suptitle(title)
    return fig


def _job_phases_figure(run: Run, window: tuple[float, float]) -> Figure | None:
    """Several jobs: their communication phases over ~6 iterations of the
    first job from the window start, titled with the overlap share."""
    if run.transfers is None or run.transfers["job"].nunique() < 2:
        return None
    phases = job_phases(run.transfers)
    names = {j["job"]: j["name"] for j in run.config.get("jobs", [])}
    mean_s = (run.summary.get("training") or {}).get("mean_iteration_s") or 0.05
    span = (window[0] * 1e3, min(window[1] * 1e3, window[0] * 1e3 + 6 * mean_s * 1e3))
    share = overlap_share(phases, (window[0] * 1e3, window[1] * 1e3))
    together = f"{share:.0%} of communicating time together" if share is not None else ""
    return draw_job_phases(phases, names, span, f"{run.config['scenario']['name']}: "
                           f"communication phases per job ({together})")


def draw_timeline(compute_rows: pd.DataFrame, spans: pd.DataFrame, edges: list[float],
                  colors: dict[str, str], title: str, tensors: bool = False) -> Figure:
    """Top: layer compute bars; bottom: buffer ring spans (tensors: a
    parameter-server job's push-to-pull spans per tensor); shared time axis."""
    n_layers = int(compute_rows["layer"].max()) + 1 if len(compute_rows) else 1
    buffers = spans[["buffer", "layers"]].drop_duplicates().sort_values("buffer")
    fig, axes = new_figure(10, 3 + 0.1 * n_layers + 0.25 * len(buffers), nrows=2,
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
    if tensors:  # tensor i is layer i: same order as the layers above
        bottom.set_ylim(-0.8, len(buffers) - 0.2)
        bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.set_ylabel("tensor: first push to last pull")
    else:
        bottom.set_yticks(buffers["buffer"],
                          [f"{b}: {l}" for b, l in buffers.itertuples(index=False)])
        bottom.invert_yaxis()  # buffer 0 holds the last layers: on top, like the layers above
        bottom.set_ylabel("fusion buffer: layers")
    bottom.set_xlabel("simulated time (ms)")
    if bottom.get_legend_handles_labels()[0]:   # no transfer yet: nothing to name
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
    fig, axes = new_figure(6.5, 4)
    ax = axes[0, 0]
    for k, name in enumerate(SIZE_CLASSES):
        rows = cdf[cdf["size_class"] == name]
        if len(rows):
            ax.step(np.r_[rows["fct_ms"].iloc[0], rows["fct_ms"]], np.r_[0.0, rows["cdf"]],
                    where="post", color=PALETTE[k], label=f"{name} (n={len(rows)})")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of flows")
    ax.legend(title="size class", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title)
    return fig


def service_latency_frame(run: Run) -> pd.DataFrame:
    """Each [[service]]'s measured latency as its kind measures it (a
    query's completion time, an RPC's latency, a stream packet's one-way
    delay: ServiceKind.latency), sorted, with its empirical CDF and its
    target (deadline or SLO), for the service-latency figure. Columns:
    service, kind, what, latency_ms, cdf, target_ms, target (its words:
    deadline or SLO). Empty without services."""
    from harness.config import registry

    columns = ["service", "kind", "what", "latency_ms", "cdf", "target_ms", "target"]
    kinds = registry.service_kinds()
    frames = []
    for name, entry in (run.summary.get("services") or {}).items():
        kind = kinds.get((entry or {}).get("kind"))
        if kind is None or kind.latency is None:
            continue
        what, key = kind.latency
        values = kind.samples(run, name).get(key)
        if values is None or not len(values.dropna()):
            continue
        ms = np.sort(values.dropna().to_numpy(dtype=float)) * 1e3
        target, words = ((entry["slo_s"], "SLO") if entry.get("slo_s") is not None
                         else (entry.get("deadline_s"), "deadline"))
        frames.append(pd.DataFrame({
            "service": name, "kind": kind.name, "what": what, "latency_ms": ms,
            "cdf": np.arange(1, len(ms) + 1) / len(ms),
            "target_ms": np.nan if target is None else target * 1e3, "target": words}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def draw_service_latency(frame: pd.DataFrame, title: str) -> Figure:
    """One CDF step line per service (its kind's latency, log-scaled), its
    target a dashed line of its colour where it has one."""
    fig, axes = new_figure(6.5, 4)
    ax = axes[0, 0]
    for k, (name, rows) in enumerate(frame.groupby("service", sort=False)):
        color = PALETTE[k % len(PALETTE)]
        ax.step(np.r_[rows["latency_ms"].iloc[0], rows["latency_ms"]], np.r_[0.0, rows["cdf"]],
                where="post", color=color,
                label=f"{name}: {rows['what'].iloc[0]} (n={len(rows):,})")
        target = rows["target_ms"].iloc[0]
        if target == target:
            ax.axvline(target, color=color, linestyle="--", linewidth=0.9,
                       label=f"{name}: {rows['target'].iloc[0]} {target:g} ms")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("latency (ms)")
    ax.set_ylabel("fraction of requests or packets")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title)
    return fig


def draw_utilization(frame: pd.DataFrame, interval_s: float, window: tuple[float, float],
                     colors: dict[str, str], title: str) -> Figure:
    """Step lines per (application, class): colour = class, line style = app."""
    fig, axes = new_figure(8, 4)
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


def _timeline_figure(run: Run, window: tuple[float, float], colors: dict) -> Figure | None:
    if run.iterations["job"].nunique() > 1:  # several jobs: the first one's timeline
        first = run.iterations["job"].min()
        run = dataclasses.replace(run, **{name: t[t["job"] == first] for name, t in (
            ("iterations", run.iterations), ("transfers", run.transfers),
            ("compute", run.compute))})
    compute_rows, spans = timeline_frames(run.compute, run.transfers, run.iterations, window)
    if compute_rows.empty:
        return None
    edges = iteration_edges(run.iterations, sorted(compute_rows["iteration"].unique()))
    mean_s = run.summary.get("training", {}).get("mean_iteration_s")
    mean = f"mean iteration {mean_s * 1e3:.1f} ms" if mean_s else "no measured iteration"
    name = run.config["scenario"]["name"]
    return draw_timeline(compute_rows, spans, edges, colors,
                         f"{name}: training timeline ({mean})",
                         tensors="direction" in run.transfers.columns)


def iteration_figure(iterations: pd.DataFrame, title: str) -> Figure | None:
    """Histogram of the measured iteration times (all workers), mean marked;
    None without a measured iteration."""
    measured = iterations.loc[iterations["measured"], "iteration_s"] * 1e3
    if measured.empty:
        return None
    fig, axes = new_figure(6.5, 3.5)
    ax = axes[0, 0]
    ax.hist(measured, bins=min(40, max(5, len(measured) // 3)), color=PALETTE[0])
    ax.axvline(measured.mean(), color="black", linestyle="--",
               label=f"mean {measured.mean():.2f} ms (n={len(measured)})")
    ax.set_xlabel("iteration time (ms)")
    ax.set_ylabel("iterations")
    ax.legend(fontsize="small")
    fig.suptitle(title)
    return fig


def draw_run(run: Run, name: str | None = None,
                stems: tuple[str, ...] | None = None) -> list[tuple[str, Figure]]:
    """(stem, figure) of each figure the run's tables allow, in plot_run's
    order (training-timeline, job-phases, fct-cdf, service-latency,
    utilization); a Run read
    from a directory or one in memory alike. name: what the titles call the
    run (default the scenario's name); stems: only these figures."""
    window = measurement_window(run.config, run.summary)
    colors = class_colors(class_order(run.config))
    name = run.config["scenario"]["name"] if name is None else name
    wanted = (lambda stem: True) if stems is None else (lambda stem: stem in stems)
    figures: list[tuple[str, Figure | None]] = []

    if (wanted("training-timeline") and run.compute is not None
            and run.transfers is not None and run.iterations is not None):
        figures.append(("training-timeline", _timeline_figure(run, window, colors)))
    if wanted("job-phases"):
        figures.append(("job-phases", _job_phases_figure(run, window)))
    if wanted("fct-cdf") and run.flows is not None:
        cdf = fct_cdf_frame(run.flows)
        if len(cdf):
            figures.append(("fct-cdf", draw_fct_cdf(cdf, f"{name}: background FCT, measured flows")))
    if wanted("service-latency") and (run.services is not None or run.streams is not None):
        latency = service_latency_frame(run)
        if len(latency):
            figures.append(("service-latency", draw_service_latency(
                latency, f"{name}: service latency, measured requests and packets")))
    if wanted("utilization") and run.utilization is not None:
        frame = uplink_utilization(run.utilization, int(run.config["topology"]["hosts"]))
        if len(frame):
            interval = float(run.config["scenario"]["run"]["utilization_interval"])
            figures.append(("utilization", draw_utilization(
                frame, interval, window, colors, f"{name}: host-uplink utilisation")))
    return [(stem, fig) for stem, fig in figures if fig is not None]


def plot_run(run: "Run | Path", out_dir: Path | None = None,
             formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Draw the figures the run's tables allow (draw_run); returns the
    written files. run: a run directory, or a Run (one in memory, its `dir`
    None, needs out_dir). Missing optional tables skip their figure; a
    directory without config.json/summary.json raises FileNotFoundError.
    out_dir (default RUN/plots) is checked before anything is drawn
    (outdir.check_figure_dir: new, or holding nothing but the harness's
    figures; else OutputError)."""
    from harness.io import outdir
    from harness.outputs.plots.registry import FIGURE_NAMES

    if not isinstance(run, Run):
        run = load_run(Path(run))
    if out_dir is None and run.dir is None:
        raise TypeError("plot_run: out_dir: a Run in memory only (its dir is None) needs "
                        "out_dir")
    formats = tuple(formats)
    out_dir = outdir.check_figure_dir(Path(out_dir) if out_dir is not None
                                      else Path(run.dir) / "plots",
                                      "-o" if out_dir is not None else "DIRECTORY", formats,
                                      len(outdir.RUN_FIGURES), FIGURE_NAMES)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, fig in draw_run(run):
        written += save_figure(fig, out_dir, stem, formats)
    return written
