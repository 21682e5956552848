"""Each service's change of one arm against its reference arm
(harness.analysis.services' CHANGED_STATS), with the intervals of
harness.analysis.stats, from the runs' services and streams tables.

Paired as the FCT changes are (harness.analysis.run_changes): a service's
arrivals, servers and sizes come from random streams of its own, so the two
arms of a seed send the very same requests, and request i of one is request
i of the other. Per seed, the pairs are

- a query service's queries (by query number) that both arms measured; the
  completion time's mean and p99 over those both answered (as FCTs pair the
  flows both completed), the deadline-miss fraction over all of them (an
  unanswered query misses);
- an RPC service's requests (by request id) that both arms measured; the
  latency's mean and p99 over those both answered, the SLO attainment over all of
  them (an unanswered request misses the SLO);
- a stream's packets (by sequence number) that both arms received in the
  window: the one-way delay's p99, and the jitter.

The change of a time is stat(arm) / stat(reference) - 1 and its interval a
percentile bootstrap that resamples the pairs within each seed, as the
FCTs'. A fraction (deadline miss, SLO attainment) changes by its difference,
arm - reference (points: 0.05 = 5 points more), bootstrapped the same way:
a relative change of a fraction near 0 says little.

The jitter's interval is that of the mean |D| (D: a packet's transit time
minus the previous one's, in arrival order), the quantity RFC 3550's J
smooths (J is its exponentially weighted mean, 1/16 per packet): J itself
is one running value per run, and resampling packets would break the order
it is defined on. Its per-seed change in deltas.parquet is J's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from harness.analysis.services import (CHANGED_STATS, ServiceStat, metric_name, named_services,
                                       query_table)
from harness.analysis.stats import Interval, paired_change, rng_for, unpaired_change

if TYPE_CHECKING:
    from harness.analysis.tables import Run

#: per kind: (service's runs tables -> {stat name: Series indexed by the pair's key})
Samples = dict[str, pd.Series]


def _targets(run: "Run", service: str) -> dict:
    return (run.summary.get("services") or {}).get(service) or {}


def _rows(table: pd.DataFrame | None, service: str) -> pd.DataFrame | None:
    """A service's rows of a run's services or streams table (None: none)."""
    if table is None or table.empty:
        return None
    return table[table["service_name"] == service]


def _query_samples(run: "Run", service: str) -> Samples:
    requests = _rows(run.services, service)
    if requests is None:
        return {}
    queries = query_table(requests)
    qct = queries[queries["measured"]].set_index("query")["qct_s"]
    out = {"p99": qct.dropna(), "mean": qct.dropna()}
    deadline = _targets(run, service).get("deadline_s")
    if deadline is not None:   # an unanswered query misses it
        out["deadline_miss"] = ((qct > deadline) | qct.isna()).astype(float)
    return out


def _rpc_samples(run: "Run", service: str) -> Samples:
    requests = _rows(run.services, service)
    if requests is None:
        return {}
    latency = requests[requests["measured"]].set_index("id")["latency_s"]
    slo = _targets(run, service).get("slo_s")
    # an unanswered request (NaN) is not within the SLO
    return {"p99": latency.dropna(), "mean": latency.dropna(),
            **({"slo_attainment": (latency <= slo).astype(float)} if slo is not None else {})}


def _stream_samples(run: "Run", service: str) -> Samples:
    packets = _rows(run.streams, service)
    if packets is None:
        return {}
    mine = (packets[packets["measured"]].drop_duplicates("seq")
            .sort_values("received_ns", kind="stable"))
    transit = (mine["received_ns"] - mine["sent_ns"]).to_numpy(dtype=float) / 1e9
    seq = mine["seq"].to_numpy()
    return {"delay_p99": pd.Series(mine["delay_s"].to_numpy(), index=seq),
            # |D| of every packet but the first to arrive (RFC 3550's D(i-1, i))
            "jitter": pd.Series(np.abs(np.diff(transit)), index=seq[1:])}


_SAMPLES: dict[str, Callable[["Run", str], Samples]] = {
    "query": _query_samples, "rpc": _rpc_samples, "stream": _stream_samples}


#: the requests' columns that make two runs' requests the same requests
REQUEST_IDENTITY = ("id", "client", "server", "request_bytes", "response_bytes", "planned_ns")


def _plan(run: "Run", kind: str, service: str) -> pd.DataFrame | None:
    """What a service sent, as planned (its requests, or its packets' send
    times): two runs pair only where it is the same."""
    if kind == "stream":
        packets = _rows(run.streams, service)
        return None if packets is None else (
            packets[["seq", "sent_ns"]].drop_duplicates("seq").sort_values("seq")
            .reset_index(drop=True))
    requests = _rows(run.services, service)
    return None if requests is None else (
        requests[list(REQUEST_IDENTITY)].sort_values("id").reset_index(drop=True))


def _same_plans(reference: list["Run"], arm: list["Run"], kind: str, service: str) -> bool:
    """Whether each seed's two runs sent the same requests (a stream: the
    packets both received were sent at the same times)."""
    for r, a in zip(reference, arm):
        pr, pa = _plan(r, kind, service), _plan(a, kind, service)
        if pr is None or pa is None:
            return False
        if kind == "stream":
            pr, pa = (p[p["seq"].isin(pr["seq"]) & p["seq"].isin(pa["seq"])]
                      .reset_index(drop=True) for p in (pr, pa))
        if not pr.equals(pa):
            return False
    return True


def _services(runs: list["Run"]) -> list[tuple[str, str, bool]]:
    """(service, kind, several of its kind) of the first run that has services."""
    for run in runs:
        if run.summary.get("services"):
            return named_services(run.summary["services"])
    return []


def _common(reference: pd.Series, arm: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The samples of the requests (or packets) both arms have, side by side."""
    common = reference.index.intersection(arm.index)
    return (reference.loc[common].to_numpy(dtype=float),
            arm.loc[common].to_numpy(dtype=float))


def _interval(stat: ServiceStat, reference: list[np.ndarray], arm: list[np.ndarray],
              rng: np.random.Generator, paired: bool) -> Interval:
    change = paired_change if paired else unpaired_change
    return change(reference, arm, stat.change, rng, difference=stat.fraction)


def service_changes(reference: list["Run"], arm: list["Run"], key: tuple,
                    paired: bool = True) -> dict[str, Interval]:
    """{"query_p99": Interval, "rpc_slo_attainment": ..., ...}: every changed
    statistic of every service of the runs (reference[i] and arm[i]: the
    same seed). paired: over the requests both arms of a seed sent (see the
    module's doc); False: each side resampled on its own (harness compare of
    runs that share no seed; also where a seed's two runs did not send the
    same requests, e.g. arms that change a service's rate). key: cells_key,
    with the metric."""
    out = {}
    for service, kind, several in _services([*reference, *arm]):
        same = paired and _same_plans(reference, arm, kind, service)
        ref_samples = [_SAMPLES[kind](r, service) for r in reference]
        arm_samples = [_SAMPLES[kind](a, service) for a in arm]
        for stat in CHANGED_STATS:
            if stat.kind != kind:
                continue
            metric = metric_name(kind, service, several, stat.name)
            if same:
                pairs = [_common(r[stat.name], a[stat.name]) for r, a in
                         zip(ref_samples, arm_samples) if stat.name in r and stat.name in a]
                ref_sides, arm_sides = [r for r, _ in pairs], [a for _, a in pairs]
            else:
                ref_sides = [r[stat.name].to_numpy(dtype=float) for r in ref_samples
                             if stat.name in r]
                arm_sides = [a[stat.name].to_numpy(dtype=float) for a in arm_samples
                             if stat.name in a]
            if not ref_sides or not arm_sides:
                continue   # no target (a deadline, an SLO) or no table: no such metric
            out[metric] = _interval(stat, ref_sides, arm_sides, rng_for(*key, metric), same)
    return out
