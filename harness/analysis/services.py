"""The services' tables and metrics (scenario `[[service]]`): pure pandas on
what ns-3's ServiceLog and stream receivers record, one row per request and
per stream packet.

- a query completes when its last worker's response is in: query completion
  time = last answer - start (a query missing any answer has none and misses
  its deadline); p999 only where the sample has at least 1,000 queries;
- an RPC's latency = answer - send; SLO attainment = the fraction of
  requests answered within the SLO (an unanswered one is not); achieved QPS
  = requests answered in the window / the window / the clients;
- a stream packet's one-way delay = arrival - send; jitter is RFC 3550's
  interarrival jitter (J += (|D| - J) / 16 over the packets in arrival
  order, D the change in transit time); a packet is late past the playout
  deadline, lost when it never arrives.

Only what starts in the measurement window [warm-up, end] is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: the fewest samples a tail quantile is reported from: p99 from 100, p999 from 1,000
TAIL_SAMPLES = {0.99: 100, 0.999: 1000}


def request_table(raw: pd.DataFrame, window: tuple[float, float],
                  names: dict[int, tuple[str, str]]) -> pd.DataFrame:
    """ns-3's ServiceLog rows with the service's name and kind, the latency
    (s; NaN if unanswered), and whether the request is measured (sent in the
    window; closed-loop requests never sent are not)."""
    sent = raw["sent_ns"]
    answered = raw["answered_ns"] >= 0
    latency = ((raw["answered_ns"] - sent) / 1e9).where(answered & (sent >= 0))
    return raw.assign(
        service_name=raw["service"].map(lambda i: names[i][0]),
        kind=raw["service"].map(lambda i: names[i][1]),
        answered=answered, latency_s=latency,
        measured=(sent >= window[0] * 1e9) & (sent <= window[1] * 1e9))


def query_table(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per query: its start, last answer and completion time (NaN
    unless every worker answered), and whether it is measured."""
    q = requests[requests["kind"] == "query"]
    grouped = q.groupby(["service", "query"], sort=True)
    out = grouped.agg(service_name=("service_name", "first"), workers=("server", "size"),
                      start_ns=("sent_ns", "min"), end_ns=("answered_ns", "max"),
                      answered=("answered", "all"), measured=("measured", "all")).reset_index()
    out["qct_s"] = ((out["end_ns"] - out["start_ns"]) / 1e9).where(out["answered"])
    return out


def _tail(values: np.ndarray, q: float) -> float | None:
    return float(np.quantile(values, q)) if len(values) >= TAIL_SAMPLES[q] else None


def _quantiles(values: np.ndarray) -> dict:
    return {"p50_s": float(np.median(values)) if len(values) else None,
            "p99_s": _tail(values, 0.99), "p999_s": _tail(values, 0.999)}


def query_summary(queries: pd.DataFrame, deadline: float | None) -> dict:
    """A query service's tail: count, answered, mean, p50, p99, p999 of the
    completion time, and the deadline-miss fraction (None without a deadline)."""
    m = queries[queries["measured"]]
    qct = m["qct_s"].dropna().to_numpy()
    missed = None
    if deadline is not None and len(m):
        missed = float(((m["qct_s"] > deadline) | m["qct_s"].isna()).mean())
    return {"queries": int(len(m)), "answered": int(m["answered"].sum()),
            "mean_qct_s": float(qct.mean()) if len(qct) else None,
            **{k.replace("_s", "_qct_s"): v for k, v in _quantiles(qct).items()},
            "deadline_s": deadline, "deadline_miss": missed}


def rpc_summary(requests: pd.DataFrame, slo: float | None, window: tuple[float, float],
                clients: int) -> dict:
    """An RPC service's tail: count, answered, p50/p99/p999 latency, SLO
    attainment (None without an SLO), and achieved QPS per client."""
    m = requests[requests["measured"]]
    latency = m["latency_s"].dropna().to_numpy()
    span = window[1] - window[0]
    return {"requests": int(len(m)), "answered": int(m["answered"].sum()),
            "mean_latency_s": float(latency.mean()) if len(latency) else None,
            **{k.replace("_s", "_latency_s"): v for k, v in _quantiles(latency).items()},
            "slo_s": slo,
            "slo_attainment": (float((m["latency_s"] <= slo).mean())
                               if slo is not None and len(m) else None),
            "achieved_qps": float(m["answered"].sum() / span / clients) if span > 0 else None}


def stream_table(raw: pd.DataFrame, name: str, window: tuple[float, float]) -> pd.DataFrame:
    """A stream's packets as received (one row each, in arrival order) with
    their one-way delay and whether they are measured (sent in the window)."""
    return raw.assign(service_name=name, delay_s=(raw["received_ns"] - raw["sent_ns"]) / 1e9,
                      measured=(raw["sent_ns"] >= window[0] * 1e9)
                      & (raw["sent_ns"] <= window[1] * 1e9))


def rfc3550_jitter(sent_ns: np.ndarray, received_ns: np.ndarray) -> float:
    """RFC 3550's interarrival jitter (s) after the last of these packets,
    in arrival order: J += (|D(i-1, i)| - J) / 16."""
    transit = (np.asarray(received_ns, dtype=float) - np.asarray(sent_ns, dtype=float)) / 1e9
    j = 0.0
    for d in np.abs(np.diff(transit)):
        j += (d - j) / 16
    return j


def stream_summary(packets: pd.DataFrame, sent: int, interval_s: float | None,
                   window: tuple[float, float], deadline: float | None) -> dict:
    """A stream's delay p50/p99, RFC 3550 jitter, late and lost fractions
    over the packets sent in the window (`sent` packets were sent in all,
    every `interval_s` from 0; None: Poisson gaps, so the packets sent in
    the window are those numbered from the first to the last received of
    it, and a loss at either edge goes uncounted)."""
    m = packets[packets["measured"]]
    if interval_s is None:
        expected = int(m["seq"].max() - m["seq"].min() + 1) if len(m) else 0
    else:
        first = int(np.ceil(window[0] / interval_s - 1e-9))
        last = min(sent - 1, int(np.floor(window[1] / interval_s + 1e-9)))
        expected = max(0, last - first + 1)
    arrived = m["seq"].drop_duplicates()
    delay = m["delay_s"].to_numpy()
    return {"packets": expected, "received": int(len(arrived)),
            "mean_delay_s": float(delay.mean()) if len(delay) else None,
            "p50_delay_s": float(np.median(delay)) if len(delay) else None,
            "p99_delay_s": _tail(delay, 0.99),
            "jitter_s": rfc3550_jitter(m["sent_ns"].to_numpy(), m["received_ns"].to_numpy()),
            "deadline_s": deadline,
            "late": (float((delay > deadline).sum() / expected)
                     if deadline is not None and expected else None),
            "lost": float(1 - len(arrived) / expected) if expected else None}


def bulk_summary(received: list[tuple[int, int]], window: tuple[float, float]) -> dict:
    """Long-lived flows' goodput over the window: (bytes delivered at its
    start, at its end) per flow -> each flow's bit/s, their sum, and Jain's
    fairness index of them."""
    span = window[1] - window[0]
    rates = np.array([(end - start) * 8 / span for start, end in received], dtype=float)
    total = float(rates.sum())
    return {"flows": int(len(rates)), "goodput_bps": total,
            "flow_goodput_bps": [float(r) for r in rates],
            "jain_fairness": (float(total ** 2 / (len(rates) * (rates ** 2).sum()))
                              if total > 0 else None)}


# --------------------------------------------------------------------------
# the services' metrics in a sweep's tables: summary.parquet's columns and
# the changes of deltas / deltas_mean (harness.analysis.service_changes)

KINDS = ("query", "rpc", "stream")


@dataclass(frozen=True)
class ServiceStat:
    """One statistic of a service, declared once: summary.json's key, its
    summary.parquet column and, where `change` is set, its change in the
    deltas tables (metric `<kind>[_<service>]_<name>`)."""

    kind: str
    name: str                   # the metric's last part: p99, slo_attainment, jitter, ...
    key: str                    # summary.json: services.<service>.<key>
    unit: str                   # "s", "fraction", "1/s"
    words: str
    change: str | None = None   # the statistic its paired change bootstraps: mean or p99
    fraction: bool = False      # a fraction: its change is a difference (arm - reference)
    higher_is_better: bool = False

    def column(self, metric: str) -> str:
        """summary.parquet's column of `metric`: seconds carry `_s`."""
        return f"{metric}_s" if self.unit == "s" else metric


#: Every statistic of each kind in summary.parquet, those with a change first.
SERVICE_STATS = (
    ServiceStat("query", "p99", "p99_qct_s", "s", "query completion time, 99th percentile (p99)",
                change="p99"),
    ServiceStat("query", "mean", "mean_qct_s", "s", "query completion time, mean",
                change="mean"),
    ServiceStat("query", "deadline_miss", "deadline_miss", "fraction",
                "fraction of queries missing their deadline", change="mean", fraction=True),
    ServiceStat("query", "p999", "p999_qct_s", "s",
                "query completion time, 99.9th percentile (p999)"),
    ServiceStat("rpc", "p99", "p99_latency_s", "s", "RPC latency, 99th percentile (p99)",
                change="p99"),
    ServiceStat("rpc", "mean", "mean_latency_s", "s", "RPC latency, mean", change="mean"),
    ServiceStat("rpc", "slo_attainment", "slo_attainment", "fraction",
                "RPC SLO attainment (fraction answered within the SLO)", change="mean",
                fraction=True, higher_is_better=True),
    ServiceStat("rpc", "p50", "p50_latency_s", "s", "RPC latency, median"),
    ServiceStat("rpc", "p999", "p999_latency_s", "s", "RPC latency, 99.9th percentile (p999)"),
    ServiceStat("rpc", "achieved_qps", "achieved_qps", "1/s",
                "RPC requests answered per second per client"),
    ServiceStat("stream", "delay_p99", "p99_delay_s", "s",
                "stream one-way delay, 99th percentile (p99)", change="p99"),
    ServiceStat("stream", "jitter", "jitter_s", "s", "stream interarrival jitter (RFC 3550)",
                change="mean"),
    ServiceStat("stream", "late", "late", "fraction", "fraction of stream packets late"),
    ServiceStat("stream", "lost", "lost", "fraction", "fraction of stream packets lost"),
)
CHANGED_STATS = tuple(s for s in SERVICE_STATS if s.change)


def metric_name(kind: str, service: str, several: bool, stat: str) -> str:
    """A service's metric: `query_p99`, or `query_search_p99` where the
    scenario has several services of that kind (named by their service)."""
    return f"{kind}_{service}_{stat}" if several else f"{kind}_{stat}"


def named_services(services: dict) -> list[tuple[str, str, bool]]:
    """(service, kind, several of its kind) of summary.json's `services`."""
    kinds = [s.get("kind") for s in services.values()]
    return [(name, s.get("kind"), kinds.count(s.get("kind")) > 1)
            for name, s in services.items()]


def flat_columns(services: dict | None) -> dict:
    """summary.json's `services` as summary.parquet's columns (SERVICE_STATS)."""
    row: dict = {}
    for name, kind, several in named_services(services or {}):
        for stat in SERVICE_STATS:
            if stat.kind == kind:
                row[stat.column(metric_name(kind, name, several, stat.name))] = \
                    services[name].get(stat.key)
    return row


def _match(metric: str, stats) -> tuple[ServiceStat, str] | None:
    """(statistic, service name or "") of a service's metric among `stats`."""
    for stat in stats:
        if metric == f"{stat.kind}_{stat.name}":
            return stat, ""
        if metric.startswith(f"{stat.kind}_") and metric.endswith(f"_{stat.name}"):
            return stat, metric[len(stat.kind) + 1:-len(stat.name) - 1]
    return None


def stat_of(metric: str) -> ServiceStat | None:
    """The changed statistic a deltas metric is (query_p99, rpc_kv_slo_attainment,
    ...); None for a metric that is not a service's."""
    found = _match(metric, CHANGED_STATS)
    return found[0] if found else None


def column_meaning(column: str) -> tuple[str, str] | None:
    """(unit, meaning) of a service's summary.parquet column (SERVICE_STATS);
    None for another column."""
    for stat in SERVICE_STATS:
        found = _match(column.removesuffix("_s") if stat.unit == "s" else column, (stat,))
        if found:
            return stat.unit, f"{found[1]}: {stat.words}" if found[1] else stat.words
    return None


def delta_pairs(columns) -> list[tuple[str, str]]:
    """(summary.parquet column, deltas metric) of every service change among
    `columns` (paired_deltas' metric pairs)."""
    out = []
    for column in columns:
        metric = str(column).removesuffix("_s")
        stat = stat_of(metric)
        if stat is not None and stat.column(metric) == column:
            out.append((column, metric))
    return out


#: the statistics a sweep's report maps, one map each (`harness plot --metric` draws any)
MAPPED = (("query", "p99"), ("rpc", "p99"), ("rpc", "slo_attainment"), ("stream", "delay_p99"))


def mapped_metrics(metrics) -> list[str]:
    """Those of a deltas table's metrics that the report maps (MAPPED), in order."""
    return [m for m in dict.fromkeys(metrics)
            if (s := stat_of(m)) is not None and (s.kind, s.name) in MAPPED]


def summary_columns(columns) -> dict[str, tuple[str, float]]:
    """The services' changed statistics among summary.parquet's `columns`,
    as the report's cell columns: column -> (header, scale)."""
    out = {}
    for column, metric in delta_pairs(columns):
        stat = stat_of(metric)
        out[column] = ((f"{metric} ms", 1e3) if stat.unit == "s" else (f"{metric} %", 100))
    return out


def metric_words(metric: str) -> str | None:
    """A service's metric in words ("query completion time, 99th percentile
    (p99)", with the service's name where the metric carries it); None if
    it is not a service's."""
    found = _match(metric, CHANGED_STATS)
    if found is None:
        return None
    stat, service = found
    words = f"{service}: {stat.words}" if service else stat.words
    return f"{words} (difference, points)" if stat.fraction else words
