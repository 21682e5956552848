"""Metrics over a run's tables: pure functions on DataFrames, no ns-3.

FCT = last byte received - flow start. Slowdown = FCT / ideal FCT, with the
ideal FCT = size / bottleneck rate + base RTT (twice the propagation delay of
the path). Flow classes by size: small (0, 100 KB], medium (100 KB, 10 MB],
large > 10 MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis import lossless, services

SIZE_CLASSES = ("small", "medium", "large")
SMALL_MAX = 100_000
MEDIUM_MAX = 10_000_000


def size_class(size: pd.Series) -> pd.Series:
    labels = np.where(size <= SMALL_MAX, "small", np.where(size <= MEDIUM_MAX, "medium", "large"))
    return pd.Series(pd.Categorical(labels, categories=SIZE_CLASSES), index=size.index)


def flow_table(raw: pd.DataFrame, window: tuple[float, float], ideal: pd.Series,
               traffic_class: dict[int, str], size_scale: int = 1) -> pd.DataFrame:
    """The flows table of a run from the FlowLog's raw table.

    window: flows starting in [start, end] seconds are measured.
    ideal: ideal FCT in seconds per flow (aligned with raw).
    traffic_class: ToS -> class name.
    size_scale: the scenario's scale k: a flow's size class is that of its
    size in the network as written (simulated bytes x k).
    """
    start = raw["start_ns"] / 1e9
    completed = raw["end_ns"] >= 0
    fct = np.where(completed, (raw["end_ns"] - raw["start_ns"]) / 1e9, np.nan)
    return pd.DataFrame({
        "id": raw["id"],
        "src": raw["src_node"],
        "dst": raw["dst_node"],
        "size": raw["size"],
        "size_class": size_class(raw["size"] * size_scale),
        "traffic_class": raw["tos"].map(traffic_class).fillna("unknown"),
        "tos": raw["tos"],
        "start_s": start,
        "fct_s": fct,
        "completed": completed,
        "measured": (start >= window[0]) & (start <= window[1]),
        "received_bytes": raw["received_bytes"],
        # what delayed it besides queueing (its sender's TCP, counted in ns-3)
        **({"timeouts": raw["timeouts"], "spurious_timeouts": raw["spurious_timeouts"],
            "timeout_wait_s": raw["timeout_wait_ns"] / 1e9,
            "fast_retransmits": raw["fast_retransmits"]} if "timeouts" in raw else {}),
        "ideal_fct_s": ideal.to_numpy(),
        "slowdown": fct / ideal.to_numpy(),
        "error": raw["error"].fillna("").astype(str),
    })


@dataclass(frozen=True)
class FlowStat:
    """One statistic of a size class's measured, completed flows, declared
    once: summary.json computes it, and summary.parquet, the deltas and
    their intervals (harness.analysis.stats) take it where it says so."""

    key: str                    # summary.json: fct.<class>.<key>
    column: str                 # of the flows table: fct_s or slowdown
    quantile: float | None      # None: the mean
    flat: str | None = None     # summary.parquet: fct_<class>_<flat>
    change: str | None = None   # deltas: fct_<class>_<change>, paired per flow (needs `flat`)
    min_pairs: int = 0          # flow pairs a mean's interval needs (a quantile's:
                                # harness.analysis.stats.min_tail_samples)

    def of(self, values: pd.Series) -> float:
        return float(values.mean() if self.quantile is None else values.quantile(self.quantile))


#: The per-flow statistics, in summary.json's (and the columns') order.
FLOW_STATS = (
    FlowStat("mean_fct_s", "fct_s", None, flat="mean_s", change="mean", min_pairs=10),
    FlowStat("p50_fct_s", "fct_s", 0.5, flat="p50_s"),
    FlowStat("p99_fct_s", "fct_s", 0.99, flat="p99_s", change="p99"),
    FlowStat("p999_fct_s", "fct_s", 0.999, flat="p999_s", change="p999"),
    FlowStat("mean_slowdown", "slowdown", None, flat="mean_slowdown"),
    FlowStat("p99_slowdown", "slowdown", 0.99),
)


def _stats(flows: pd.DataFrame) -> dict[str, float | int | None]:
    if len(flows) == 0:
        return {"count": 0, **{s.key: None for s in FLOW_STATS}}
    return {"count": int(len(flows)), **{s.key: s.of(flows[s.column]) for s in FLOW_STATS}}


def fct_summary(flows: pd.DataFrame) -> dict[str, dict]:
    """FCT statistics of the measured, completed flows, per size class and 'all'."""
    done = flows[flows["measured"] & flows["completed"]]
    out = {"all": _stats(done)}
    for cls in SIZE_CLASSES:
        out[cls] = _stats(done[done["size_class"] == cls])
    return out


#: what delayed a flow besides queueing, counted by its sender's TCP in ns-3
#: (the flows table's columns; runs from before they were counted lack them)
TCP_DELAYS = ("timeouts", "spurious_timeouts", "timeout_wait_s", "fast_retransmits")
#: a training job's (its summary's tcp_delays: spurious ones are not judged)
JOB_TCP_DELAYS = ("timeouts", "timeout_wait_s", "fast_retransmits")


def tcp_delays(flows: pd.DataFrame) -> dict[str, float | int] | None:
    """The measured flows' TCP delays summed (summary.json's tcp_delays),
    and how many flows had a timeout; None for a flows table without them."""
    if not all(c in flows for c in TCP_DELAYS):
        return None
    measured = flows[flows["measured"]]
    out: dict[str, float | int] = {c: (float(measured[c].sum()) if c.endswith("_s")
                                       else int(measured[c].sum())) for c in TCP_DELAYS}
    out["flows_with_timeouts"] = int((measured["timeouts"] > 0).sum())
    return out


def job_tcp_delays(sums) -> dict[str, float | int]:
    """A training job's TCP delays (its summary's tcp_delays) from ns-3's
    per-host sums (TcpSocketDdnn::LossEvents of the job's connections):
    timeouts, timeout_wait_s, fast_retransmits. Spurious timeouts are
    judged for background flows only (a training connection has no
    receiver's count to judge them by)."""
    return {"timeouts": int(sum(s.timeouts for s in sums)),
            "timeout_wait_s": float(sum(s.timeoutWait.GetSeconds() for s in sums)),
            "fast_retransmits": int(sum(s.fastRetransmits for s in sums))}


def job_tcp_delays_line(delays: dict, whose: str = "training's") -> str:
    """The words for a job's tcp_delays (the console's under its job's line:
    whose="its")."""
    return (f"{whose} TCP connections: {delays['timeouts']:,} retransmission timeouts, "
            f"{delays['timeout_wait_s'] * 1e3:,.1f} ms without progress before them, "
            f"{delays['fast_retransmits']:,} fast retransmits")


def tcp_delays_line(delays: dict) -> str:
    """The console's words for tcp_delays."""
    return (f"background TCP: {delays['timeouts']:,} retransmission timeouts in "
            f"{delays['flows_with_timeouts']:,} measured flows ({delays['spurious_timeouts']:,} "
            f"spurious: the segment had arrived), {delays['timeout_wait_s'] * 1e3:,.1f} ms "
            f"without progress before them, {delays['fast_retransmits']:,} fast retransmits")


def completion(flows: pd.DataFrame) -> dict[str, float | int]:
    measured = flows[flows["measured"]]
    n = len(measured)
    done = int(measured["completed"].sum())
    return {"measured_flows": n, "completed_flows": done,
            "completion_ratio": done / n if n else 1.0,
            "socket_errors": int((flows["error"] != "").sum())}


def utilization_table(raw: pd.DataFrame, interval_s: float, link_rate: dict[int, float],
                      traffic_class: dict[int, str], app_names: dict[int, str]) -> pd.DataFrame:
    """Per link direction, interval, traffic class and application: bytes on
    the wire and the fraction of the link's capacity they used."""
    rate = raw["link"].map(link_rate)
    return pd.DataFrame({
        "link": raw["link"], "from_node": raw["from_node"], "to_node": raw["to_node"],
        "t_s": raw["interval"] * interval_s,
        "traffic_class": raw["tos"].map(traffic_class).fillna("unknown"),
        "app": raw["app"].map(app_names).fillna("other"),
        "bytes": raw["bytes"],
        "utilization": raw["bytes"] * 8 / (rate * interval_s),
    })


def host_uplink_utilization(util: pd.DataFrame, n_hosts: int, window: tuple[float, float],
                            interval_s: float) -> dict[str, float]:
    """Mean utilisation of the host uplinks (host -> switch) per application
    over the measurement window: U_training and U_background of the map."""
    up = util[(util["from_node"] < n_hosts) & (util["t_s"] >= window[0] - 1e-12)
              & (util["t_s"] + interval_s <= window[1] + 1e-12)]
    # whole bins inside the window (the ones selected above)
    n_bins = max(1, math.floor(window[1] / interval_s + 1e-9)
                 - math.ceil(window[0] / interval_s - 1e-9))
    per_app = up.groupby("app")["utilization"].sum() / (n_hosts * n_bins)
    return {app: float(per_app.get(app, 0.0)) for app in ("training", "background")}


def band_totals(queues: pd.DataFrame) -> pd.DataFrame:
    """Queue statistics summed over every egress, per band (the time a band
    was starved too, where the table has it: with_starvation)."""
    cols = ["enqueued_packets", "dequeued_packets", "dropped_packets"]
    cols += [c for c in ("marked_packets", "starved_s") if c in queues]   # ECN CE marks
    out = queues.groupby("band")[cols].sum()
    out["max_backlog_packets"] = queues.groupby("band")["max_backlog_packets"].max()
    return out.reset_index()


def with_starvation(queues: pd.DataFrame, rates_bps: dict[int, float]) -> pd.DataFrame:
    """The queues table with backlogged_s (how long each band held a packet,
    over the run: ns-3's backlogged_ns) and starved_s: of that time, the
    part the egress sent other bands' packets (strict priority's higher
    bands, a DRR's other turns, a lower band's packet already on the wire):
    the band's backlogged time less its own bytes at the link's rate, at
    least 0. The link's rate at the start (a run.link_changes rate is not
    followed), and a packet's time in the device's one-packet queue is its
    own: both small against a busy period."""
    if "backlogged_ns" not in queues:
        return queues
    backlogged = queues["backlogged_ns"] / 1e9
    own = queues["dequeued_bytes"] * 8 / queues["link"].map(rates_bps).astype(float)
    return queues.drop(columns="backlogged_ns").assign(
        backlogged_s=backlogged, starved_s=(backlogged - own).clip(lower=0.0))


#: where an egress is (the queues table's `place`), in words
PLACES = {"uplink": "host uplinks", "downlink": "switch ports to hosts",
          "fabric": "switch-to-switch ports"}


def with_places(queues: pd.DataFrame, n_hosts: int) -> pd.DataFrame:
    """The queues table with `place`: uplink (a host's egress), downlink (a
    switch's port to a host) or fabric (a switch's port to a switch); hosts
    are the topology's first n_hosts nodes."""
    place = np.where(queues["from_node"] < n_hosts, "uplink",
                     np.where(queues["to_node"] < n_hosts, "downlink", "fabric"))
    return queues.assign(place=place)


#: a drop's reason: the shared buffer refused it, a lossless band's PFC
#: headroom could not hold it, or the band's own limit (the rest)
DROP_REASONS = ("buffer", "headroom", "limit")


def losses(queues: pd.DataFrame) -> pd.DataFrame:
    """Per place (with_places) and band that carried a packet: its class, the
    egresses that dropped, dropped_packets and by reason
    (<reason>_dropped_packets, DROP_REASONS), and the egress that dropped
    most (link, from_node, to_node, its dropped_packets): 0 where none
    did, so that a sweep's columns say 0, not nothing. Empty for a queues
    table without places (a run before them)."""
    columns = ["place", "band", "traffic_class", "egresses", "dropped_packets",
               *(f"{r}_dropped_packets" for r in DROP_REASONS), "link", "from_node", "to_node",
               "most_dropped_packets"]
    if "place" not in queues:
        return pd.DataFrame(columns=columns)
    q = queues[(queues["enqueued_packets"] > 0) | (queues["dropped_packets"] > 0)]
    buffer = q.get("buffer_dropped_packets", pd.Series(0, index=q.index))
    headroom = q.get("headroom_dropped_packets", pd.Series(0, index=q.index))
    q = q.assign(buffer_dropped_packets=buffer, headroom_dropped_packets=headroom,
                 limit_dropped_packets=q["dropped_packets"] - buffer - headroom)
    rows = []
    q = q.assign(order=q["place"].map({p: i for i, p in enumerate(PLACES)}))
    for (_, place, band), part in q.groupby(["order", "place", "band"], sort=True):
        worst = part.loc[part["dropped_packets"].idxmax()]
        rows.append({"place": place, "band": int(band),
                     "traffic_class": worst.get("traffic_class", ""),
                     "egresses": int((part["dropped_packets"] > 0).sum()),
                     **{c: int(part[c].sum()) for c in columns[4:8]},
                     "link": int(worst["link"]), "from_node": int(worst["from_node"]),
                     "to_node": int(worst["to_node"]),
                     "most_dropped_packets": int(worst["dropped_packets"])})
    return pd.DataFrame(rows, columns=columns)


def iteration_summary(iterations: pd.DataFrame) -> dict[str, float | int | None]:
    """Iteration time (start of forward layer 0 to the next) over the window:
    `iterations` the measured rows of every worker, `distinct_iterations`
    the iterations they belong to."""
    measured = iterations[iterations["measured"]]
    it = measured["iteration_s"]
    if len(it) == 0:
        return {"iterations": 0, "mean_iteration_s": None, "p50_iteration_s": None,
                "p99_iteration_s": None, "p999_iteration_s": None}
    # `iterations` counts every worker's row (the sweeps' column since the
    # start); `distinct_iterations` the iterations themselves
    # what the iterations were made of (metrics.with_iteration_parts), where measured
    parts = {f"mean_{c}": (float(measured[c].mean()) if measured[c].notna().any() else None)
             for c in ITERATION_PARTS if c in measured}
    return {"iterations": int(len(it)),
            "distinct_iterations": int(measured["iteration"].nunique()),
            "mean_iteration_s": float(it.mean()),
            "p50_iteration_s": float(it.quantile(0.5)),
            "p99_iteration_s": float(it.quantile(0.99)),
            "p999_iteration_s": float(it.quantile(0.999)), **parts}


def end_spread(iterations: pd.DataFrame) -> pd.DataFrame:
    """The straggler metric (TicTac's): per iteration, the spread of the
    workers' iteration end times, max - min over workers, for the iterations
    every worker of the job completed. Columns: iteration, workers,
    first_end_ns, last_end_ns, end_spread_s, measured (every worker's row of
    it is inside the window)."""
    columns = ["iteration", "workers", "first_end_ns", "last_end_ns", "end_spread_s",
               "measured"]
    if iterations is None or iterations.empty:
        return pd.DataFrame(columns=columns)
    n_workers = iterations["worker"].nunique()
    g = iterations.groupby("iteration", sort=True)
    out = pd.DataFrame({"workers": g["worker"].nunique(), "first_end_ns": g["end_ns"].min(),
                        "last_end_ns": g["end_ns"].max(),
                        "measured": g["measured"].all()}).reset_index()
    out = out[out["workers"] == n_workers]
    out.insert(4, "end_spread_s", (out["last_end_ns"] - out["first_end_ns"]) / 1e9)
    return out[columns].reset_index(drop=True)


def with_end_spread(iterations: pd.DataFrame) -> pd.DataFrame:
    """The iterations table with column end_spread_s: on every worker's row,
    the spread of its iteration's end times (NaN where a worker did not
    complete it)."""
    spread = end_spread(iterations).set_index("iteration")["end_spread_s"]
    return iterations.assign(end_spread_s=iterations["iteration"].map(spread).astype(float))


def backoff_spans(text: str) -> np.ndarray:
    """TcpSocketDdnn::BackoffsOnPorts's "from_ns,to_ns" lines as an (n, 2)
    int64 array, in order of start."""
    rows = [line.split(",") for line in text.splitlines() if line]
    spans = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
    return spans[np.argsort(spans[:, 0], kind="stable")]


def _coverage(spans: np.ndarray):
    """C(t): how long the union of `spans` (from, to rows) lies before t,
    for an array of t: the time a set of possibly overlapping spans
    covers in [a, b) is C(b) - C(a)."""
    starts: list[float] = []
    ends: list[float] = []
    for a, b in spans[np.argsort(spans[:, 0], kind="stable")]:
        if starts and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)     # overlapping spans of two connections: once
        else:
            starts.append(a)
            ends.append(b)
    start, end = np.asarray(starts, float), np.asarray(ends, float)
    before = np.concatenate([[0.0], np.cumsum(end - start)])

    def covered(t) -> np.ndarray:
        t = np.asarray(t, float)
        if not len(start):
            return np.zeros_like(t)
        i = np.maximum(np.searchsorted(start, t, side="right") - 1, 0)
        return before[i] + np.clip(t - start[i], 0.0, end[i] - start[i])
    return covered


#: an iteration's parts (the iterations table's columns, harness.analysis.
#: run_changes.iteration_parts): computing, and waiting on the network in
#: and out of TCP's retransmission back-off
ITERATION_PARTS = ("compute_s", "network_wait_s", "rto_wait_s")


def with_iteration_parts(iterations: pd.DataFrame, compute: pd.DataFrame | None,
                         backoffs: np.ndarray | None) -> pd.DataFrame:
    """The iterations table with what each worker's iteration was made of:
    compute_s (its layers' forward and backward computations in it, the
    compute table's rows of that worker and iteration), network_wait_s
    (the rest: it waited on the network, for gradients or parameters) and
    rto_wait_s (of that wait, the time one of the job's TCP connections
    was in a back-off, waiting without progress for a retransmission
    timeout: `backoffs`, TcpSocketDdnn's spans; NaN without them, a job
    over RDMA). Unchanged without a compute table."""
    if compute is None or not len(compute) or not len(iterations):
        return iterations
    keys = ["worker", "iteration"]
    busy = compute.assign(busy_ns=compute["end_ns"] - compute["start_ns"])
    per = busy.groupby(keys)["busy_ns"].sum()
    index = pd.MultiIndex.from_frame(iterations[keys])
    compute_s = per.reindex(index).fillna(0).to_numpy(float) / 1e9
    out = iterations.assign(compute_s=compute_s,
                            network_wait_s=iterations["iteration_s"].to_numpy(float) - compute_s)
    if backoffs is None:
        return out.assign(rto_wait_s=np.nan)
    covered = _coverage(backoffs)
    # back-off inside the iteration, less the back-off while the worker computed
    in_iteration = covered(iterations["end_ns"]) - covered(iterations["start_ns"])
    busy_cov = pd.Series(covered(busy["end_ns"]) - covered(busy["start_ns"]), index=busy.index)
    in_compute = busy_cov.groupby([busy[k] for k in keys]).sum().reindex(index).fillna(0)
    rto = (in_iteration - in_compute.to_numpy(float)) / 1e9
    return out.assign(rto_wait_s=np.clip(rto, 0.0, out["network_wait_s"].to_numpy(float)))


def spread_summary(iterations: pd.DataFrame) -> dict[str, float | None]:
    """Mean and p99 of the per-iteration end spread over measured iterations."""
    spread = end_spread(iterations)
    values = spread.loc[spread["measured"], "end_spread_s"]
    if len(values) == 0:
        return {"mean_end_spread_s": None, "p99_end_spread_s": None}
    return {"mean_end_spread_s": float(values.mean()),
            "p99_end_spread_s": float(values.quantile(0.99))}


# --------------------------------------------------------------------------
# sweep tables: one flat row per run, paired changes between arms

# (column of the flat summary, name of its change in the deltas tables)
DELTA_METRICS = (
    ("mean_iteration_s", "iteration_time"),
    ("p99_iteration_s", "iteration_time_p99"),
    ("p999_iteration_s", "iteration_time_p999"),
    ("mean_end_spread_s", "end_spread"),
    *((f"fct_{c}_{s.flat}", f"fct_{c}_{s.change}") for s in FLOW_STATS if s.change
      for c in (*SIZE_CLASSES, "all")),
)


_CLASS_WORDS = {"small": "small-flow FCT (<= 100 KB)", "medium": "medium-flow FCT (100 KB-10 MB)",
                "large": "large-flow FCT (> 10 MB)", "all": "FCT of every flow"}
_STAT_WORDS = {"mean": "mean", "p99": "99th percentile (p99)", "p999": "99.9th percentile (p999)",
               # a sweep's cause layer (harness.analysis.cause_changes.cause_metrics)
               "rto": "mean, its part in RTO back-off",
               "rest": "mean, its part in queueing and the rest",
               "compute": "mean, its part computing"}


def in_points(metric: str) -> bool:
    """Whether a deltas metric changes by its difference in points (a
    service's fraction, the pause share) rather than relatively."""
    stat = services.stat_of(metric)
    return (stat is not None and stat.fraction) or metric == lossless.PAUSE_SHARE


def delta_metric_words(metric: str) -> str:
    """A deltas metric in words: "fct_small_p99" -> "small-flow FCT (<= 100 KB),
    99th percentile (p99)"; the name itself when unknown."""
    if metric == "iteration_time":
        return "training iteration time, mean"
    service = services.metric_words(metric)
    if service is not None:
        return service
    if metric == "end_spread":
        return "straggler spread (last - first worker's end of an iteration), mean"
    if metric == lossless.PAUSE_SHARE:
        return "share of the window an egress was paused by PFC (difference, points)"
    if metric.startswith("iteration_time_"):
        stat = metric.removeprefix("iteration_time_")
        return f"training iteration time, {_STAT_WORDS.get(stat, stat)}"
    parts = metric.split("_")
    if len(parts) == 3 and parts[0] == "fct" and parts[1] in _CLASS_WORDS:
        return f"{_CLASS_WORDS[parts[1]]}, {_STAT_WORDS.get(parts[2], parts[2])}"
    return metric


def flat_summary(summary: dict) -> dict[str, float | int | None]:
    """A run's summary.json as one flat row (the sweep's summary columns)."""
    row: dict[str, float | int | None] = {}
    for cls, s in summary["fct"].items():
        row[f"fct_{cls}_count"] = s["count"]
        for stat in FLOW_STATS:
            if stat.flat:
                row[f"fct_{cls}_{stat.flat}"] = s.get(stat.key)   # older runs: no p999
    for key in ("measured_flows", "completed_flows", "completion_ratio", "socket_errors"):
        row[key] = summary[key]
    util = summary.get("host_uplink_utilization", {})
    row["u_training"] = util.get("training")
    row["u_background"] = util.get("background")
    training = summary.get("training") or {}
    for key in ("iterations", "mean_iteration_s", "p50_iteration_s", "p99_iteration_s",
                "p999_iteration_s", "mean_end_spread_s", "p99_end_spread_s",
                *(f"mean_{part}" for part in ITERATION_PARTS)):
        row[key] = training.get(key)
    # what delayed the background flows besides queueing (runs before: none)
    delays = summary.get("tcp_delays") or {}
    for key in (*TCP_DELAYS, "flows_with_timeouts"):
        row[f"tcp_{key}"] = delays.get(key)
    # each band's starvation summed over its egresses (runs before: none)
    for band in summary.get("queues") or []:
        if "starved_s" in band:
            row[f"starved_s_band_{band['band']}"] = band["starved_s"]
    # its drops by place and reason (runs before: none)
    for loss in summary.get("losses") or []:
        for reason in ("", *(f"{r}_" for r in DROP_REASONS)):
            key = f"{reason}dropped_band_{loss['band']}_{loss['place']}"
            row[key] = loss[f"{reason}dropped_packets"]
    # and the (first) job's own connections (runs before, or over RDMA: none)
    job_delays = training.get("tcp_delays") or {}
    for key in JOB_TCP_DELAYS:
        row[f"training_tcp_{key}"] = job_delays.get(key)
    row["training_socket_errors"] = training.get("socket_errors") or None
    # a job that completed no iteration inside the window is stalled: its
    # iteration time is longer than anything measured (an infinite change)
    row["training_stalled"] = bool(training) and not training.get("iterations")
    # [[service]]: each service's tails (query_p99_s, rpc_slo_attainment, ...)
    row.update(services.flat_columns(summary.get("services")))
    # the lossless fabric: pause time per class, pause frames, CNPs, drops
    row.update(lossless.flat_columns(summary.get("lossless")))
    # several jobs ([[training]]): each job's columns, by its name
    for job in summary.get("jobs", ()):
        for key in ("iterations", "mean_iteration_s", "p99_iteration_s", "slowdown_vs_ideal"):
            row[f"job_{job['name']}_{key}"] = job.get(key)
    return row


def paired_deltas(summary: pd.DataFrame, keys: list[str], arm_col: str, reference: str,
                  metric_pairs=DELTA_METRICS) -> pd.DataFrame:
    """Per axes point (incl. seed), each arm against the reference arm: relative
    change (value / reference - 1) of each metric (a service's fraction, e.g.
    its SLO attainment: value - reference). Long format: one row per
    (point, arm, metric)."""
    cols = [m for m, _ in metric_pairs]
    summary = summary.reindex(columns=list(dict.fromkeys([*summary.columns, *cols,
                                                          "training_stalled"])))
    ref = summary[summary[arm_col] == reference].set_index(keys)[cols] if keys else \
        summary[summary[arm_col] == reference][cols]
    rows = []
    for _, r in summary[summary[arm_col] != reference].iterrows():
        key = tuple(r[k] for k in keys)
        label = key if len(keys) > 1 else key[0] if keys else None  # one axis: a plain Index
        if keys and label not in ref.index:
            continue  # its reference cell failed
        base = ref.loc[label] if keys else ref.iloc[0]
        for col, name in metric_pairs:
            b, v = base[col], r[col]
            if in_points(name) and pd.notna(b) and pd.notna(v):
                change = float(v) - float(b)   # a fraction: its difference, in points
            elif pd.notna(b) and pd.notna(v) and b != 0:
                change = float(v) / float(b) - 1.0
            elif col.endswith("iteration_s") and pd.notna(b) and r["training_stalled"] is True:
                change = math.inf  # the arm stalled where the reference ran
            else:
                change = float("nan")
            rows.append({**dict(zip(keys, key)), arm_col: r[arm_col], "metric": name,
                         "reference": b, "value": v, "change": change})
    columns = [*keys, arm_col, "metric", "reference", "value", "change"]
    return pd.DataFrame(rows, columns=columns)


def seed_mean(values) -> tuple[int, float, float, float]:
    """(n, mean, low, high): the mean over seeds with its 95 % Student t
    interval (NaN bounds with fewer than two values; NaNs left out)."""
    from scipy import stats

    x = pd.Series(values, dtype=float).dropna()
    n, mean = len(x), float(x.mean()) if len(x) else float("nan")
    half = float("nan")
    if n > 1:
        half = float(stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return n, mean, mean - half, mean + half


def delta_means(deltas: pd.DataFrame, keys: list[str], arm_col: str) -> pd.DataFrame:
    """Mean change and its 95 % confidence interval (Student t) over seeds."""

    def summarise(g: pd.DataFrame) -> pd.Series:
        n, mean, low, high = seed_mean(g["change"])
        return pd.Series({"n": n, "mean": mean, "ci95_low": low, "ci95_high": high})

    by = [*keys, arm_col, "metric"]
    if deltas.empty:
        return pd.DataFrame(columns=[*by, "n", "mean", "ci95_low", "ci95_high"])
    return deltas.groupby(by, sort=False, dropna=False).apply(
        summarise, include_groups=False).reset_index()
