"""The services' tables and metrics (scenario `[[service]]`): pure pandas on
what ns-3's ServiceLog and stream receivers record, one row per request and
per stream packet, and the vocabulary of the statistics each kind declares
(harness.traffic.services: each kind's summary and `stats`, read here
through harness.config.registry) in a sweep's tables.

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

from harness.config import registry

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


def tail(values: np.ndarray, q: float) -> float | None:
    """The q-quantile, or None below TAIL_SAMPLES[q] samples."""
    return float(np.quantile(values, q)) if len(values) >= TAIL_SAMPLES[q] else None


def quantiles(values: np.ndarray) -> dict:
    """p50_s, p99_s and p999_s of `values` (a tail None where too few)."""
    return {"p50_s": float(np.median(values)) if len(values) else None,
            "p99_s": tail(values, 0.99), "p999_s": tail(values, 0.999)}


def stream_table(raw: pd.DataFrame, name: str, window: tuple[float, float]) -> pd.DataFrame:
    """A stream's packets as received (one row each, in arrival order) with
    their one-way delay and whether they are measured (sent in the window)."""
    return raw.assign(service_name=name, delay_s=(raw["received_ns"] - raw["sent_ns"]) / 1e9,
                      measured=(raw["sent_ns"] >= window[0] * 1e9)
                      & (raw["sent_ns"] <= window[1] * 1e9))


# --------------------------------------------------------------------------
# the services' metrics in a sweep's tables: summary.parquet's columns and
# the changes of deltas / deltas_mean (harness.analysis.service_changes)

@dataclass(frozen=True)
class ServiceStat:
    """One statistic of a service, declared once by its kind
    (harness.traffic.services): summary.json's key, its summary.parquet
    column and, where `change` is set, its change in the deltas tables
    (metric `<kind>[_<service>]_<name>`)."""

    kind: str
    name: str                   # the metric's last part: p99, slo_attainment, jitter, ...
    key: str                    # summary.json: services.<service>.<key>
    unit: str                   # "s", "fraction", "1/s"
    words: str
    change: str | None = None   # the statistic its paired change bootstraps: mean or p99
    fraction: bool = False      # a fraction: its change is a difference (arm - reference)
    higher_is_better: bool = False
    mapped: bool = False        # a sweep's report maps it (`harness plot --metric` draws any)

    def column(self, metric: str) -> str:
        """summary.parquet's column of `metric`: seconds carry `_s`."""
        return f"{metric}_s" if self.unit == "s" else metric


def service_stats() -> tuple[ServiceStat, ...]:
    """Every statistic of every service kind in summary.parquet, in the
    kinds' order, each kind's with a change first."""
    return tuple(stat for kind in registry.service_kinds().values() for stat in kind.stats)


def changed_stats() -> tuple[ServiceStat, ...]:
    """The statistics with a change in the deltas tables."""
    return tuple(s for s in service_stats() if s.change)


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
    """summary.json's `services` as summary.parquet's columns (service_stats())."""
    row: dict = {}
    for name, kind, several in named_services(services or {}):
        for stat in service_stats():
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
    found = _match(metric, changed_stats())
    return found[0] if found else None


def column_meaning(column: str) -> tuple[str, str] | None:
    """(unit, meaning) of a service's summary.parquet column (service_stats());
    None for another column."""
    for stat in service_stats():
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


def mapped_metrics(metrics) -> list[str]:
    """Those of a deltas table's metrics that the report maps (ServiceStat.mapped), in order."""
    return [m for m in dict.fromkeys(metrics) if (s := stat_of(m)) is not None and s.mapped]


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
    found = _match(metric, changed_stats())
    if found is None:
        return None
    stat, service = found
    words = f"{service}: {stat.words}" if service else stat.words
    return f"{words} (difference, points)" if stat.fraction else words
