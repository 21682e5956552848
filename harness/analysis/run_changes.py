"""Every change of one arm against its reference arm, from the runs' tables
(harness.analysis.tables.Run: in memory, or read_run(dir, ("flows",
"iterations"))): the intervals of harness.analysis.stats over pairs made as
follows.

Changes compare an arm with the reference arm of the same axes point:

- FCT changes are paired: both arms of a seed replay the same background
  flows (common random numbers), so flow i of one is flow i of the other. The
  change of a statistic (mean or p99 FCT of a size class) is
  stat(arm) / stat(reference) - 1 over the flows both arms measured and
  completed, pooled over seeds; its 95 % interval is a percentile bootstrap
  that resamples flows, pairs kept together, within each seed.
- The iteration-time change is paired too: both arms replay the same flows
  and both measure from the same warm-up on, so the k-th iteration each
  measured meets much the same background as the other's k-th. (Pairing by
  iteration number instead would compare iterations that run at different
  times wherever the arms' paces differ, and lose pairs: a slower arm is an
  iteration behind at warm-up, so its measured numbers start one lower.)
  Per seed and k up to the shorter arm's count, the change is arm / reference - 1 of the
  iteration's time (averaged over the workers: a ring's workers move in
  lockstep, they are one sample, not N); the estimate is the mean of these
  paired changes, pooled over seeds, and its interval a Student t interval
  over them (a handful of iterations: a bootstrap would return little more
  than their range). An arm whose job measured no iteration where the
  reference did has stalled: +inf.

Each service's statistics ([[service]]: query p99, RPC SLO attainment, ...)
are paired request by request, as the FCTs are flow by flow:
harness.analysis.service_changes.

Tails of the iteration time are paired as its mean is (seed and k-th
measured iteration) and bootstrapped as the FCT tails are: the change of
the q-quantile of the arm's iteration times against the reference's, its
interval a percentile bootstrap resampling the pairs within each seed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.analysis import lossless
from harness.analysis.metrics import end_spread
from harness.analysis.service_changes import service_changes
from harness.analysis.stats import (FCT_CLASSES, FLOW_CHANGES, ITERATION_TAILS,
                                    MIN_ITERATION_PAIRS, Interval, paired_change,
                                    paired_t_change, rng_for, unpaired_change)

if TYPE_CHECKING:
    from harness.analysis.tables import Run


def _done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["measured"] & flows["completed"]].set_index("id")


def fct_changes(reference: list["Run"], arm: list["Run"],
                key: tuple) -> dict[str, Interval]:
    """{"fct_small_mean": Interval, "fct_small_p99": ..., ...}: paired over the
    flows both arms of a seed measured and completed. key: what the
    bootstraps are seeded from, with the metric (cells_key of the runs' cells)."""
    columns = sorted({s.column for s in FLOW_CHANGES})
    pairs: dict[tuple[str, str], tuple[list[np.ndarray], list[np.ndarray]]] = {
        (c, col): ([], []) for c in FCT_CLASSES for col in columns}
    for ref, a in zip(reference, arm):
        r, x = _done(ref.flows), _done(a.flows)
        common = r.index.intersection(x.index)
        r, x = r.loc[common], x.loc[common]
        for cls in FCT_CLASSES:
            mask = np.ones(len(r), bool) if cls == "all" else (r["size_class"] == cls).to_numpy()
            for col in columns:
                pairs[cls, col][0].append(r[col].to_numpy()[mask])
                pairs[cls, col][1].append(x[col].to_numpy()[mask])
    out = {}
    for cls in FCT_CLASSES:
        for stat in FLOW_CHANGES:
            out[f"fct_{cls}_{stat.change}"] = paired_change(
                *pairs[cls, stat.column], stat.change, rng_for(*key, cls, stat.change))
    return out


def tail_changes(reference: list["Run"], arm: list["Run"], key: tuple) -> dict[str, Interval]:
    """{"iteration_time_p99": Interval, "iteration_time_p999": ...}: the
    iteration time's tails (iteration_tail_change), each bootstrap seeded
    from key (cells_key) and the metric."""
    return {f"iteration_time_{stat}": iteration_tail_change(
        reference, arm, stat, rng_for(*key, "iteration_time", stat)) for stat in ITERATION_TAILS}


def _in_step(reference: pd.Series, arm: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The k-th measured iteration of each arm side by side, k up to the
    shorter one's count (the series in iteration order)."""
    n = min(len(reference), len(arm))
    return reference.to_numpy()[:n], arm.to_numpy()[:n]


def _iteration_times(iterations: pd.DataFrame | None) -> pd.Series:
    """Measured iterations: iteration number -> time, averaged over workers."""
    if iterations is None or iterations.empty:
        return pd.Series(dtype=float)
    measured = iterations[iterations["measured"]]
    return measured.groupby("iteration", sort=True)["iteration_s"].mean()


def _paired_iterations(reference: list["Run"], arm: list["Run"]):
    """Each seed's measured iteration times of both arms, in step (seed and
    k-th measured iteration), and whether the arm stalled (measured no
    iteration where the reference did)."""
    ref_strata, arm_strata = [], []
    ref_any = arm_any = False
    for r, a in zip(reference, arm):
        rt, at = _iteration_times(r.iterations), _iteration_times(a.iterations)
        ref_any |= len(rt) > 0
        arm_any |= len(at) > 0
        ref_s, arm_s = _in_step(rt, at)
        ref_strata.append(ref_s.astype(float))
        arm_strata.append(arm_s.astype(float))
    return ref_strata, arm_strata, ref_any and not arm_any


def iteration_change(reference: list["Run"], arm: list["Run"], key: tuple = ()) -> Interval:
    """The arm's iteration-time change against the reference, paired by seed
    and measured iteration in order (see the module doc); +inf when the arm
    measured no iteration where the reference did."""
    ref_strata, arm_strata, stalled = _paired_iterations(reference, arm)
    if stalled:
        return Interval(math.inf, math.inf, math.inf, 0, len(reference))
    changes = [a / r - 1 for r, a in zip(ref_strata, arm_strata)]
    return paired_t_change(np.concatenate(changes) if changes else np.asarray([], dtype=float),
                           len(reference))


def iteration_tail_change(reference: list["Run"], arm: list["Run"], stat: str,
                          rng: np.random.Generator) -> Interval:
    """The change of a tail of the iteration time (stat: a key of
    ITERATION_TAILS): quantile(arm) / quantile(reference) - 1 over the
    iterations paired as iteration_change pairs them (seed, k-th measured),
    with a percentile bootstrap of the pairs within each seed (paired_change);
    "too few samples" below MIN_PAIRS[stat]; +inf when the arm stalled."""
    ref_strata, arm_strata, stalled = _paired_iterations(reference, arm)
    if stalled:
        return Interval(math.inf, math.inf, math.inf, 0, len(reference))
    return paired_change(ref_strata, arm_strata, stat, rng)


def _spreads(iterations: pd.DataFrame | None) -> pd.Series:
    """Measured iterations: iteration number -> spread of worker end times."""
    spread = end_spread(iterations)
    measured = spread[spread["measured"]] if len(spread) else spread
    return measured.set_index("iteration")["end_spread_s"].astype(float)


def end_spread_change(reference: list["Run"], arm: list["Run"], key: tuple = ()) -> Interval:
    """Change of the mean per-iteration spread of worker end times (the
    straggler metric, metrics.end_spread), paired by seed and measured
    iteration in order like the iteration time: the mean paired difference relative to the
    reference's mean spread, with a Student t interval (a spread can be ~0,
    so per-iteration ratios would not do)."""
    differences, base = [], []
    for r, a in zip(reference, arm):
        ref_s, arm_s = _in_step(_spreads(r.iterations), _spreads(a.iterations))
        differences.extend(arm_s - ref_s)
        base.extend(ref_s)
    mean_base = float(np.mean(base)) if base else 0.0
    if mean_base <= 0:
        return Interval.empty(len(reference))
    return paired_t_change(np.asarray(differences) / mean_base, len(reference))


def unpaired_changes(reference: list["Run"], arm: list["Run"], key: tuple) -> dict[str, Interval]:
    """Every change of paired_changes for runs that share no flows or seeds
    (harness compare): unpaired_change over the iteration times (averaged
    over workers; the mean needs MIN_ITERATION_PAIRS per side), the end
    spreads and each size class's measured, completed flows; +inf for an arm
    that measured no iteration where the reference did."""
    def times(runs):
        return [_iteration_times(r.iterations).to_numpy(dtype=float) for r in runs]

    def spreads(runs):
        return [_spreads(r.iterations).to_numpy(dtype=float) for r in runs]

    ref_t, arm_t = times(reference), times(arm)
    seeds = max(len(reference), len(arm))
    stalled = any(len(t) for t in ref_t) and not any(len(t) for t in arm_t)
    out = {}
    for metric, stat in (("iteration_time", "mean"),
                         *((f"iteration_time_{q}", q) for q in ITERATION_TAILS)):
        out[metric] = (Interval(math.inf, math.inf, math.inf, 0, seeds) if stalled else
                       unpaired_change(ref_t, arm_t, stat, rng_for(*key, metric),
                                       min_samples=(MIN_ITERATION_PAIRS if stat == "mean"
                                                    else None)))
    out["end_spread"] = unpaired_change(spreads(reference), spreads(arm), "mean",
                                        rng_for(*key, "end_spread"),
                                        min_samples=MIN_ITERATION_PAIRS)
    for cls in FCT_CLASSES:
        for flow_stat in FLOW_CHANGES:
            def values(runs):
                done = [_done(r.flows) for r in runs]
                return [(d if cls == "all" else d[d["size_class"] == cls])[flow_stat.column]
                        .to_numpy(dtype=float) for d in done]
            metric = f"fct_{cls}_{flow_stat.change}"
            out[metric] = unpaired_change(values(reference), values(arm), flow_stat.change,
                                          rng_for(*key, cls, flow_stat.change))
    out.update(service_changes(reference, arm, key, paired=False))
    out.update(pause_change(reference, arm))
    return out


def pause_change(reference: list["Run"], arm: list["Run"]) -> dict[str, Interval]:
    """{"pause_share": Interval} where both arms ran PFC: the mean over
    egresses and seeds of each egress's share of the window paused, arm
    less reference (points), with a Student t interval over those pairs (an
    egress is the same port in both); {} without PFC."""
    pairs = lossless.pause_share_pairs(reference, arm)
    if not len(pairs):
        return {}
    return {lossless.PAUSE_SHARE: paired_t_change(pairs, len(reference))}


def paired_changes(reference: list["Run"], arm: list["Run"], key: tuple) -> dict[str, Interval]:
    """Every change of a sweep's deltas_mean of one arm against its
    reference, paired per seed (the runs of reference[i] and arm[i] replay
    the same background flows): iteration time, its tails, the end spread,
    each size class's FCT statistics, each service's (the same requests) and,
    with PFC, the egresses' pause share. key: cells_key."""
    return {"iteration_time": iteration_change(reference, arm, key),
            **tail_changes(reference, arm, key),
            "end_spread": end_spread_change(reference, arm, key),
            **fct_changes(reference, arm, key),
            **service_changes(reference, arm, key),
            **pause_change(reference, arm)}
