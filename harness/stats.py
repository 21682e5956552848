"""Confidence intervals and verdicts for the operating-boundary map: pure
functions over the runs' tables (no ns-3).

Changes compare an arm with the reference arm of the same axes point:

- FCT changes are paired: both arms of a seed replay the same background
  flows (common random numbers), so flow i of one is flow i of the other. The
  change of a statistic (mean or p99 FCT of a size class) is
  stat(arm) / stat(reference) - 1 over the flows both arms measured and
  completed, pooled over seeds; its 95 % interval is a percentile bootstrap
  that resamples flows, pairs kept together, within each seed.
- The iteration-time change is mean iteration time (arm) / (reference) - 1
  over the measured iterations of every worker, pooled over seeds; its
  interval resamples whole iterations (all workers of one iteration
  together: they are not independent) within each seed and arm. An arm whose
  job measured no iteration where the reference did has stalled: +inf.

A verdict is decided when the interval lies inside one class:

- training (SPEC §5): green = slowdown <= 1 %, yellow <= 30 %, red above;
- background: "faster" (interval below -5 %), "slower" (above +5 %) or
  "unchanged" (inside +-5 %); an interval across a boundary is undecided.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.metrics import SIZE_CLASSES, end_spread

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 1000
GREEN_MAX = 0.01          # training slowdown classes (SPEC §5)
YELLOW_MAX = 0.30
UNCHANGED_MARGIN = 0.05   # background: |change| below this is "unchanged"
FCT_CLASSES = (*SIZE_CLASSES, "all")
FCT_STATS = ("mean", "p99")


@dataclass(frozen=True)
class Interval:
    """A change (value / reference - 1) and its 95 % bootstrap interval."""

    change: float
    low: float
    high: float
    samples: int     # flows (pairs) or iterations (both arms) it rests on
    seeds: int

    @staticmethod
    def empty(seeds: int = 0) -> "Interval":
        nan = float("nan")
        return Interval(nan, nan, nan, 0, seeds)


def rng_for(*key) -> np.random.Generator:
    """A generator seeded from a key (the point, arm and metric): the same
    inputs give the same intervals."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _statistic(values: np.ndarray, stat: str, axis: int = -1) -> np.ndarray:
    if stat == "mean":
        return values.mean(axis=axis)
    return np.quantile(values, 0.99, axis=axis, method="linear")


def _percentiles(replicates: np.ndarray) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(replicates, [tail, 100 - tail])
    return float(low), float(high)


def paired_change(reference: list[np.ndarray], arm: list[np.ndarray], stat: str,
                  rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES) -> Interval:
    """stat(arm) / stat(reference) - 1 over pairs pooled from every stratum
    (seed); reference[s][i] and arm[s][i] are the same flow. Bootstrap: pairs
    resampled with replacement within each stratum."""
    strata = [(r, a) for r, a in zip(reference, arm) if len(r)]
    n = sum(len(r) for r, _ in strata)
    if n == 0:
        return Interval.empty(len(reference))
    ref_all = np.concatenate([r for r, _ in strata])
    arm_all = np.concatenate([a for _, a in strata])
    base = float(_statistic(ref_all, stat))
    change = float(_statistic(arm_all, stat)) / base - 1 if base > 0 else float("nan")
    # resampled pairs of every stratum side by side, in chunks of replicates
    # (memory: chunk x n indices)
    offsets = np.cumsum([0] + [len(r) for r, _ in strata])
    chunk = max(1, min(resamples, 2_000_000 // n))
    replicates = []
    for done in range(0, resamples, chunk):
        size = min(chunk, resamples - done)
        picks = np.concatenate([rng.integers(start, stop, size=(size, stop - start))
                                for start, stop in zip(offsets[:-1], offsets[1:])], axis=1)
        ref_stat = _statistic(ref_all[picks], stat, axis=1)
        arm_stat = _statistic(arm_all[picks], stat, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            replicates.append(arm_stat / ref_stat - 1)
    low, high = _percentiles(np.concatenate(replicates))
    return Interval(change, low, high, n, len(reference))


def grouped_mean_change(reference: list[list[np.ndarray]], arm: list[list[np.ndarray]],
                        rng: np.random.Generator,
                        resamples: int = BOOTSTRAP_RESAMPLES) -> Interval:
    """Mean over every value of the arm / of the reference - 1, for unpaired
    samples that come in groups (an iteration's values of every worker):
    reference[s] is the list of groups of stratum s. Bootstrap: groups
    resampled within each stratum and side."""
    def pooled(side: list[list[np.ndarray]]) -> tuple[float, float]:
        values = [g for groups in side for g in groups]
        return (float(sum(g.sum() for g in values)), float(sum(len(g) for g in values)))

    seeds = len(reference)
    ref_sum, ref_n = pooled(reference)
    arm_sum, arm_n = pooled(arm)
    if ref_n == 0:
        return Interval.empty(seeds)
    if arm_n == 0:
        return Interval(math.inf, math.inf, math.inf, int(ref_n), seeds)  # stalled
    change = (arm_sum / arm_n) / (ref_sum / ref_n) - 1

    def replicate_means(side: list[list[np.ndarray]]) -> np.ndarray:
        sums = np.zeros(resamples)
        counts = np.zeros(resamples)
        for groups in side:
            if not groups:
                continue
            g_sum = np.array([g.sum() for g in groups])
            g_n = np.array([len(g) for g in groups], dtype=float)
            picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
            sums += g_sum[picks].sum(axis=1)
            counts += g_n[picks].sum(axis=1)
        return sums / counts

    replicates = replicate_means(arm) / replicate_means(reference) - 1
    low, high = _percentiles(replicates)
    return Interval(change, low, high, int(ref_n + arm_n), seeds)


# --------------------------------------------------------------------------
# one (point, arm): every change of the map, from the runs' tables


@dataclass(frozen=True)
class RunTables:
    """What a pair's statistics need of one run."""

    flows: pd.DataFrame                 # flows.parquet
    iterations: pd.DataFrame | None     # iterations.parquet (training runs)


def _done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["measured"] & flows["completed"]].set_index("id")


def fct_changes(reference: list[RunTables], arm: list[RunTables],
                key: tuple) -> dict[str, Interval]:
    """{"fct_small_mean": Interval, "fct_small_p99": ..., ...}: paired over the
    flows both arms of a seed measured and completed."""
    pairs: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {
        c: ([], []) for c in FCT_CLASSES}
    for ref, a in zip(reference, arm):
        r, x = _done(ref.flows), _done(a.flows)
        common = r.index.intersection(x.index)
        r, x = r.loc[common], x.loc[common]
        for cls in FCT_CLASSES:
            mask = np.ones(len(r), bool) if cls == "all" else (r["size_class"] == cls).to_numpy()
            pairs[cls][0].append(r["fct_s"].to_numpy()[mask])
            pairs[cls][1].append(x["fct_s"].to_numpy()[mask])
    out = {}
    for cls in FCT_CLASSES:
        for stat in FCT_STATS:
            out[f"fct_{cls}_{stat}"] = paired_change(*pairs[cls], stat,
                                                     rng_for(*key, cls, stat))
    return out


def _iteration_groups(iterations: pd.DataFrame | None) -> list[np.ndarray]:
    if iterations is None or iterations.empty:
        return []
    measured = iterations[iterations["measured"]]
    return [g["iteration_s"].to_numpy() for _, g in measured.groupby("iteration", sort=True)]


def iteration_change(reference: list[RunTables], arm: list[RunTables], key: tuple) -> Interval:
    return grouped_mean_change([_iteration_groups(r.iterations) for r in reference],
                               [_iteration_groups(a.iterations) for a in arm],
                               rng_for(*key, "iteration_time"))


def _spread_groups(iterations: pd.DataFrame | None) -> list[np.ndarray]:
    """One group per measured iteration: its spread of worker end times."""
    spread = end_spread(iterations)
    return [np.array([v]) for v in spread.loc[spread["measured"], "end_spread_s"]]


def end_spread_change(reference: list[RunTables], arm: list[RunTables], key: tuple) -> Interval:
    """Change of the mean per-iteration spread of worker end times (the
    straggler metric, metrics.end_spread); the bootstrap resamples iterations
    within each seed and arm."""
    return grouped_mean_change([_spread_groups(r.iterations) for r in reference],
                               [_spread_groups(a.iterations) for a in arm],
                               rng_for(*key, "end_spread"))


# --------------------------------------------------------------------------
# verdicts


def training_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, decided) of a slowdown interval: green <= 1 %, yellow <= 30 %,
    red above; decided when the whole interval is in one class."""
    if not (np.isfinite(low) or low == math.inf):
        return "n/a", False

    def cls(x: float) -> str:
        return "green" if x <= GREEN_MAX else "yellow" if x <= YELLOW_MAX else "red"

    a, b = cls(low), cls(high)
    return (a, True) if a == b else (f"{a}/{b}", False)


def background_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, decided) of a background FCT change interval: faster (all of it
    below -5 %), slower (above +5 %), unchanged (inside +-5 %)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "n/a", False
    if high < -UNCHANGED_MARGIN:
        return "faster", True
    if low > UNCHANGED_MARGIN:
        return "slower", True
    if -UNCHANGED_MARGIN <= low and high <= UNCHANGED_MARGIN:
        return "unchanged", True
    if high < 0:
        return "faster?", False
    if low > 0:
        return "slower?", False
    return "?", False


def spread_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, decided) of a change of the straggler spread: smaller (all of
    the interval below -5 %), larger (above +5 %), unchanged (inside +-5 %)."""
    verdict, decided = background_verdict(low, high)
    names = {"faster": "smaller", "slower": "larger", "faster?": "smaller?",
             "slower?": "larger?"}
    return names.get(verdict, verdict), decided


# --------------------------------------------------------------------------
# scale check: the same cells at several scales (harness.scaling)

SCALE_FIELD = "scale"


def compare_scales(deltas_mean: pd.DataFrame, point_keys: list[str]) -> pd.DataFrame:
    """For a grid with a `scale` axis: per point (the other fields), arm and
    metric, the change at the smallest scale (the reference fidelity) and at
    each larger one, their difference with a 95 % interval (normal
    approximation: the two bootstrap half-widths added in quadrature), whether
    the scaled change lies inside the reference's interval, and whether the two
    agree in sign. Columns: point fields, arm, metric, scale, reference_scale,
    reference_change, reference_low, reference_high, change, change_low,
    change_high, difference, difference_low, difference_high, within,
    same_sign."""
    others = [k for k in point_keys if k != SCALE_FIELD]
    columns = [*others, "arm", "metric", "scale", "reference_scale", "reference_change",
               "reference_low", "reference_high", "change", "change_low", "change_high",
               "difference", "difference_low", "difference_high", "within", "same_sign"]
    if SCALE_FIELD not in point_keys or deltas_mean.empty or "change" not in deltas_mean:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, group in deltas_mean.groupby([*others, "arm", "metric"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        group = group.sort_values(SCALE_FIELD)
        ref = group.iloc[0]
        for _, row in group.iloc[1:].iterrows():
            half = math.hypot((ref["change_high"] - ref["change_low"]) / 2,
                              (row["change_high"] - row["change_low"]) / 2)
            diff = row["change"] - ref["change"]
            rows.append({**dict(zip([*others, "arm", "metric"], key)),
                         "scale": row[SCALE_FIELD], "reference_scale": ref[SCALE_FIELD],
                         "reference_change": ref["change"], "reference_low": ref["change_low"],
                         "reference_high": ref["change_high"], "change": row["change"],
                         "change_low": row["change_low"], "change_high": row["change_high"],
                         "difference": diff, "difference_low": diff - half,
                         "difference_high": diff + half,
                         "within": bool(ref["change_low"] <= row["change"] <= ref["change_high"]),
                         "same_sign": bool(np.sign(row["change"]) == np.sign(ref["change"]))})
    return pd.DataFrame(rows, columns=columns)
