"""Each service's change of one arm against its reference arm
(each kind's `stats` with a change, harness.traffic.services), with the
intervals of harness.analysis.stats, from the runs' services and streams
tables: each kind says what its samples are and what pairs them.

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

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.analysis.services import ServiceStat, metric_name, named_services
from harness.config import registry
from harness.analysis.stats import Interval, paired_change, rng_for, unpaired_change

if TYPE_CHECKING:
    from harness.analysis.tables import Run


def same_plans(reference: list["Run"], arm: list["Run"], kind, service: str) -> bool:
    """Whether each seed's two runs sent the same requests (a stream: the
    packets both received were sent at the same times): the kind's identity."""
    for r, a in zip(reference, arm):
        pr, pa = kind.identity(r, service), kind.identity(a, service)
        if pr is None or pa is None:
            return False
        key = kind.received_key
        if key is not None:
            pr, pa = (p[p[key].isin(pr[key]) & p[key].isin(pa[key])]
                      .reset_index(drop=True) for p in (pr, pa))
        if not pr.equals(pa):
            return False
    return True


def services_of(runs: list["Run"]) -> list[tuple[str, str, bool]]:
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
    for service, name, several in services_of([*reference, *arm]):
        kind = registry.service_kinds().get(name)
        stats = [stat for stat in (kind.stats if kind is not None else ()) if stat.change]
        if not stats:
            continue   # a kind without changes (a Poisson source, bulk flows)
        same = paired and same_plans(reference, arm, kind, service)
        ref_samples = [kind.samples(r, service) for r in reference]
        arm_samples = [kind.samples(a, service) for a in arm]
        for stat in stats:
            metric = metric_name(name, service, several, stat.name)
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
