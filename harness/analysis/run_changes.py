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
- The iteration-time change is paired too, by time: both arms of a seed
  replay the same flows under the same schedule of conditions (link-rate
  changes, load steps), so what one arm met between two instants the other
  met too. Each seed's window is cut into time blocks, one at each of the
  reference's measured iteration starts (time_blocks; a block in which the
  arm started no iteration joins the next), and each iteration (averaged
  over the workers: a ring's workers move in lockstep, they are one sample,
  not N) belongs to the block it started in. The change is the ratio of the
  two arms' pooled mean iteration times less 1 (so it agrees with the means
  printed beside it, whatever the conditions did); its interval a Student t
  interval on the log of that ratio, from each block's influence on it
  (block_ratio_change: the delta method for a ratio estimator), which stays
  above -100 %. (Pairing the k-th measured iteration of one arm with the
  k-th of the other, as this did before, compares iterations of different
  phases once the arms' paces differ and conditions change: +113 % beside
  means 31 % apart.) An arm whose job measured no iteration where the
  reference did has stalled: +inf.

Each service's statistics ([[service]]: query p99, RPC SLO attainment, ...)
are paired request by request, as the FCTs are flow by flow:
harness.analysis.service_changes.

Tails of the iteration time are paired as its mean is, by time block: the
change of the q-quantile of the arm's pooled iteration times against the
reference's, its interval a percentile bootstrap resampling whole blocks,
the same for both arms (block_quantile_change). The end spread's change is
the ratio of its pooled means, paired as the iteration time's mean.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.analysis import lossless
from harness.analysis.metrics import ITERATION_PARTS, end_spread
from harness.analysis.service_changes import service_changes
from harness.analysis.stats import (FCT_CLASSES, FLOW_CHANGES, ITERATION_TAILS,
                                    MIN_ITERATION_PAIRS, Interval, block_quantile_change,
                                    block_ratio_change, paired_change, paired_t_change,
                                    rng_for, unpaired_change)

if TYPE_CHECKING:
    from harness.analysis.tables import Run


def _done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["measured"] & flows["completed"]].set_index("id")


def flow_pairs(reference: "Run", arm: "Run") -> tuple[pd.DataFrame, pd.DataFrame]:
    """One seed's flow pairs: the flows both runs measured and completed,
    indexed by flow id, in the same order in both."""
    r, x = _done(reference.flows), _done(arm.flows)
    common = r.index.intersection(x.index)
    return r.loc[common], x.loc[common]


def fct_changes(reference: list["Run"], arm: list["Run"],
                key: tuple) -> dict[str, Interval]:
    """{"fct_small_mean": Interval, "fct_small_p99": ..., ...}: paired over the
    flows both arms of a seed measured and completed. key: what the
    bootstraps are seeded from, with the metric (cells_key of the runs' cells)."""
    columns = sorted({s.column for s in FLOW_CHANGES})
    pairs: dict[tuple[str, str], tuple[list[np.ndarray], list[np.ndarray]]] = {
        (c, col): ([], []) for c in FCT_CLASSES for col in columns}
    for ref, a in zip(reference, arm):
        r, x = flow_pairs(ref, a)
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


def iteration_units(iterations: pd.DataFrame | None) -> pd.DataFrame:
    """Measured iterations, one row each (a job's workers move in lockstep:
    one sample, not N): start_ns (its first worker's start) and
    iteration_s (averaged over its workers, as is each of its parts the
    table has: metrics.ITERATION_PARTS), in order of start."""
    if iterations is None or iterations.empty:
        return pd.DataFrame({"start_ns": pd.Series(dtype="int64"),
                             "iteration_s": pd.Series(dtype=float)})
    measured = iterations[iterations["measured"]]
    keys = [k for k in ("job", "iteration") if k in measured.columns]
    g = measured.groupby(keys, sort=True)
    units = pd.DataFrame({"start_ns": g["start_ns"].min(), "iteration_s": g["iteration_s"].mean(),
                          **{part: g[part].mean() for part in ITERATION_PARTS
                             if part in measured.columns}})
    return units.sort_values("start_ns", kind="stable").reset_index(drop=True)


def _iteration_times(iterations: pd.DataFrame | None) -> pd.Series:
    """Measured iterations' times (averaged over workers), in order of start."""
    return iteration_units(iterations)["iteration_s"]


def _spread_units(iterations: pd.DataFrame | None) -> pd.DataFrame:
    """Measured iterations' spread of worker end times (metrics.end_spread),
    with each one's start_ns, in order of start."""
    spread = end_spread(iterations)
    if not len(spread):
        return pd.DataFrame({"start_ns": pd.Series(dtype="int64"),
                             "end_spread_s": pd.Series(dtype=float)})
    spread = spread[spread["measured"]]
    starts = iterations.groupby("iteration")["start_ns"].min()
    units = pd.DataFrame({"start_ns": spread["iteration"].map(starts).to_numpy(),
                          "end_spread_s": spread["end_spread_s"].astype(float).to_numpy()})
    return units.sort_values("start_ns", kind="stable").reset_index(drop=True)


def time_blocks(reference_starts: np.ndarray, arm_starts: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Spans of time that pair two arms of one seed: a block begins at each
    of the reference's iteration starts (the first reaches back to the
    start of time, the last on to its end), a block the arm started no
    iteration in joins the next one (the last such, the one before). Each
    iteration belongs to the block it started in. Returns the reference's
    and the arm's block of each iteration and the number of blocks."""
    ref = np.asarray(reference_starts)
    arm = np.asarray(arm_starts)
    if not len(ref) or not len(arm):
        return np.zeros(len(ref), int), np.zeros(len(arm), int), 0
    edges = np.sort(ref)[1:]
    ref_raw = np.searchsorted(edges, ref, side="right")
    arm_raw = np.searchsorted(edges, arm, side="right")
    has_arm = np.bincount(arm_raw, minlength=len(edges) + 1) > 0
    # a block's merged number: how many arm-holding blocks close before it
    merged = np.cumsum(has_arm) - has_arm
    merged = np.minimum(merged, merged[has_arm].max() if has_arm.any() else 0)
    return merged[ref_raw], merged[arm_raw], int(has_arm.sum())


def _blocked(reference: list[pd.DataFrame], arm: list[pd.DataFrame], column: str):
    """Each seed's values of both arms in time blocks (time_blocks), block
    numbers running on across seeds: ((ref values, ref blocks), (arm
    values, arm blocks), blocks, per-block sums and counts)."""
    ref_v, ref_b, arm_v, arm_b, sums = [], [], [], [], []
    offset = 0
    for r, a in zip(reference, arm):
        rb, ab, n = time_blocks(r["start_ns"].to_numpy(), a["start_ns"].to_numpy())
        if n == 0:
            continue
        rv, av = r[column].to_numpy(float), a[column].to_numpy(float)
        sums.append((np.bincount(rb, rv, n), np.bincount(rb, minlength=n),
                     np.bincount(ab, av, n), np.bincount(ab, minlength=n)))
        ref_v.append(rv), arm_v.append(av)
        ref_b.append(rb + offset), arm_b.append(ab + offset)
        offset += n

    def joined(parts, dtype):
        return np.concatenate(parts) if parts else np.asarray([], dtype)

    return ((joined(ref_v, float), joined(ref_b, int)), (joined(arm_v, float), joined(arm_b, int)),
            offset, sums)


def _stalled(reference: list[pd.DataFrame], arm: list[pd.DataFrame]) -> bool:
    """The reference measured iterations and the arm none."""
    return any(len(r) for r in reference) and not any(len(a) for a in arm)


def mean_iteration_s(runs: list["Run"]) -> float:
    """The mean measured iteration time of runs pooled (each iteration
    averaged over its workers): the mean iteration_change compares."""
    times = pd.concat([_iteration_times(r.iterations) for r in runs]) if runs else pd.Series()
    return float(times.mean()) if len(times) else float("nan")


def iteration_change(reference: list["Run"], arm: list["Run"], key: tuple = ()) -> Interval:
    """The arm's iteration-time change against the reference: the ratio of
    the pooled means (mean_iteration_s) less 1, paired by time block (see
    the module doc); +inf when the arm measured no iteration where the
    reference did."""
    return _mean_change(_iteration_blocks(reference, arm), len(reference))


def iteration_tail_change(reference: list["Run"], arm: list["Run"], stat: str,
                          rng: np.random.Generator) -> Interval:
    """The change of a tail of the iteration time (stat: a key of
    ITERATION_TAILS): quantile(arm) / quantile(reference) - 1 of the pooled
    measured iterations, with a percentile bootstrap of the time blocks
    (block_quantile_change); "too few samples" below MIN_PAIRS[stat]; +inf
    when the arm stalled."""
    return _tail_change(_iteration_blocks(reference, arm), stat, rng, len(reference))


def _iteration_blocks(reference: list["Run"], arm: list["Run"]):
    """The runs' measured iterations in time blocks (_blocked), or None
    where the arm stalled: what every iteration-time change reads."""
    ref = [iteration_units(r.iterations) for r in reference]
    new = [iteration_units(a.iterations) for a in arm]
    return None if _stalled(ref, new) else _blocked(ref, new, "iteration_s")


def _stalled_change(seeds: int) -> Interval:
    return Interval(math.inf, math.inf, math.inf, 0, seeds)


def _mean_change(blocked, seeds: int) -> Interval:
    if blocked is None:
        return _stalled_change(seeds)
    return block_ratio_change(blocked[3], seeds)


def _tail_change(blocked, stat: str, rng: np.random.Generator, seeds: int) -> Interval:
    if blocked is None:
        return _stalled_change(seeds)
    ref_side, arm_side, blocks, _ = blocked
    return block_quantile_change(ref_side, arm_side, blocks, stat, rng, seeds)


def iteration_changes(reference: list["Run"], arm: list["Run"], key: tuple) -> dict[str, Interval]:
    """{"iteration_time": ..., "iteration_time_p99": ..., ...}: the mean's
    change (iteration_change) and each tail's (iteration_tail_change, its
    bootstrap seeded from key, cells_key, and the metric), from one
    blocking of the runs' iterations."""
    blocked, seeds = _iteration_blocks(reference, arm), len(reference)
    return {"iteration_time": _mean_change(blocked, seeds),
            **{f"iteration_time_{stat}": _tail_change(
                blocked, stat, rng_for(*key, "iteration_time", stat), seeds)
               for stat in ITERATION_TAILS}}


def _spreads(iterations: pd.DataFrame | None) -> pd.Series:
    """Measured iterations' spreads of worker end times, in order of start."""
    return _spread_units(iterations)["end_spread_s"]


def end_spread_change(reference: list["Run"], arm: list["Run"], key: tuple = ()) -> Interval:
    """Change of the mean per-iteration spread of worker end times (the
    straggler metric, metrics.end_spread): the ratio of the pooled means
    less 1, paired by time block as the iteration time is (a spread can be
    ~0 in one iteration; the ratio is of the means)."""
    ref = [_spread_units(r.iterations) for r in reference]
    new = [_spread_units(a.iterations) for a in arm]
    *_, sums = _blocked(ref, new, "end_spread_s")
    return block_ratio_change(sums, len(reference))


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
        out[metric] = (_stalled_change(seeds) if stalled else
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
    return {**iteration_changes(reference, arm, key),
            "end_spread": end_spread_change(reference, arm, key),
            **fct_changes(reference, arm, key),
            **service_changes(reference, arm, key),
            **pause_change(reference, arm)}
