"""Intervals of a change and the verdicts on them, for the operating-boundary
map: pure functions over arrays of paired samples (no ns-3). Each
metric's change of an arm's runs against its reference's, from the runs'
tables: harness.analysis.run_changes (which says how the pairs are made).

Every verdict, its thresholds and its wording live here (the figures, the
report, the claims table, the boundary searches and the CLI take them from
this module). A verdict is decided when the interval lies inside one class:

- training: green = slowdown <= 1 %, yellow <= 30 %, red above;
  an interval across a class boundary is undecided (e.g. "green/yellow").

An interval and a verdict need enough pairs; with fewer the estimate is
shown without an interval, as "too few samples" (and an adaptive sweep adds
seeds there):

- iteration time and end spread: MIN_ITERATION_PAIRS = 5 time blocks
  (block_ratio_change; about as many paired iterations). The t interval
  assumes the log ratio's estimate is near normal; from 2-4 blocks its
  spread is estimated from 1-3 degrees of freedom, one odd iteration sets
  it, and t's factor is 12.7-3.2.
- FCT means: MIN_FLOW_PAIRS["mean"] = 10 flow pairs. A percentile bootstrap
  of n pairs has few distinct resamples when n is small (one pair: a single
  one, so "-4.5 % [-4.5, -4.5]"), and its interval undercovers heavy tails.
- Tails (p99, p999 of FCTs and of iteration times): min_tail_samples(q)
  pairs, the fewest n with q ** n <= (1 - CONFIDENCE) / 2 (p99: 368, p999:
  3,688; about 3.7 expected observations beyond the quantile). With fewer,
  the chance that no observation at all lies beyond the q-quantile exceeds
  2.5 %: not even the distribution-free interval of the quantile (between
  two order statistics) has an upper end, and a bootstrap, which never
  draws beyond the largest value, would return an interval that says
  nothing.

Every bootstrap is seeded from the cells it reads (cells_key: the ids,
i.e. the scenario digests, of both arms' cells) and the metric, never from
the point's label or place in a grid: the same cells give byte-identical
intervals in any grid.

A service's statistic (harness.analysis.service_changes: query p99, RPC
SLO attainment, ...) changes "lower" or "higher" when its interval
excludes 0, else "n.s."; a fraction's change is its difference in points.

The background's change is significant when its interval excludes 0:
"faster" or "slower", else "n.s." (no significant change at 95 %). Small
flows' FCTs are heavy-tailed (a few flows that waited for a retransmission
timeout dominate a mean), so an interval of +-20-40 % from one seed is
common: significance is what the data can decide, equivalence to zero
within a few per cent is not.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis import services
from harness.analysis.metrics import FLOW_STATS, SIZE_CLASSES

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 1000
GREEN_MAX = 0.01          # training slowdown classes (docs/model/metrics.md)
YELLOW_MAX = 0.30
FCT_CLASSES = (*SIZE_CLASSES, "all")
# the per-flow statistics with a paired change (harness.analysis.metrics.FLOW_STATS)
FLOW_CHANGES = tuple(s for s in FLOW_STATS if s.change)
MIN_ITERATION_PAIRS = 5


def min_tail_samples(q: float) -> int:
    """The fewest pairs an interval of a q-quantile needs: the smallest n
    with q ** n <= (1 - CONFIDENCE) / 2, i.e. the chance that no observation
    lies beyond the quantile is below 2.5 % (p99: 368, p999: 3,688)."""
    return math.ceil(math.log((1 - CONFIDENCE) / 2) / math.log(q) - 1e-9)


MIN_FLOW_PAIRS = {s.change: (min_tail_samples(s.quantile) if s.quantile else s.min_pairs)
                  for s in FLOW_CHANGES}
_QUANTILE = {s.change: s.quantile for s in FLOW_CHANGES}
#: the iteration time's tails (deltas: iteration_time_<stat>), bootstrapped
ITERATION_TAILS = {"p99": 0.99, "p999": 0.999}
#: pairs an interval needs, per statistic (means: MIN_FLOW_PAIRS; tails: min_tail_samples)
#: the iteration time's parts (harness.analysis.cause_changes.iteration_cause_metrics)
ITERATION_PART_METRICS = ("iteration_time_compute", "iteration_time_rto", "iteration_time_rest")
MIN_PAIRS = {**MIN_FLOW_PAIRS, **{k: min_tail_samples(q) for k, q in ITERATION_TAILS.items()}}
_QUANTILE.update(ITERATION_TAILS)

# the verdicts' words
TOO_FEW = "too few samples"     # an estimate without an interval
NOT_APPLICABLE = "n/a"          # no change measured
TRAINING_CLASSES = ("green", "yellow", "red")     # slowdown classes, by GREEN_MAX / YELLOW_MAX
#: what each training class means, for legends and captions
CLASS_MEANING = {"green": f"slowdown \u2264 {100 * GREEN_MAX:g} %",
                 "yellow": f"slowdown \u2264 {100 * YELLOW_MAX:g} %",
                 "red": f"slowdown > {100 * YELLOW_MAX:g} %"}
#: what "decided" means, said once: `harness sweep --help` and the docs take these words
DECIDED_MEANING = (
    f"A training verdict is decided when the whole 95 % interval of the slowdown lies in one "
    f"class (green: slowdown <= {100 * GREEN_MAX:g} %, yellow: <= {100 * YELLOW_MAX:g} %, red: "
    "above); an interval across a class boundary is undecided (e.g. green/yellow), and the map "
    "hatches it. A background change is significant, faster or slower, when its interval "
    "excludes 0, else n.s.")
FASTER, SLOWER, NOT_SIGNIFICANT = "faster", "slower", "n.s."   # background FCT changes
SMALLER, LARGER = "smaller", "larger"                          # the straggler spread
LOWER, HIGHER = "lower", "higher"                              # a service's statistic
UNDECIDED = "undecided"       # an arm against another (claims), a slowdown against a threshold
BELOW, ABOVE = "below", "above"   # a slowdown against a threshold (harness.sweeps.boundary)


@dataclass(frozen=True)
class Interval:
    """A change (value / reference - 1) and its 95 % bootstrap interval."""

    change: float
    low: float
    high: float
    samples: int     # pairs it rests on: flows, or iterations
    seeds: int

    @staticmethod
    def empty(seeds: int = 0) -> "Interval":
        nan = float("nan")
        return Interval(nan, nan, nan, 0, seeds)

    @staticmethod
    def too_few(change: float, samples: int, seeds: int) -> "Interval":
        """An estimate from fewer pairs than an interval needs: no interval."""
        nan = float("nan")
        return Interval(change, nan, nan, samples, seeds)

    @property
    def has_too_few(self) -> bool:
        """An estimate without an interval (stats.TOO_FEW)."""
        return self.samples > 0 and math.isfinite(self.change) and math.isnan(self.low)


def min_pairs_of(metric: str) -> int | None:
    """The pairs an interval of a deltas metric needs (iteration_time,
    iteration_time_p99, end_spread, fct_small_p999, ...); None if unknown."""
    if metric in ("iteration_time", "end_spread") or metric in ITERATION_PART_METRICS:
        return MIN_ITERATION_PAIRS
    service = services.stat_of(metric)
    if service is not None:
        return MIN_PAIRS[service.change]
    return MIN_PAIRS.get(metric.rsplit("_", 1)[-1])


def too_few_words(metric: str, samples: float) -> str:
    """"too few samples: 7 of 368 pairs": the verdict with its rule."""
    need = min_pairs_of(metric)
    n = int(samples) if samples == samples else 0
    return f"{TOO_FEW}: {n:,} of {need:,} pairs" if need else f"{TOO_FEW}: {n:,} pairs"


def rng_for(*key) -> np.random.Generator:
    """A generator seeded from a key (cells_key and the metric): the same
    inputs give the same intervals."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def cells_key(reference: list[str], arm: list[str]) -> tuple:
    """What a change's bootstrap is seeded from: the ids (scenario digests)
    of the cells of both arms it reads, each side sorted; never the point's
    label or place in a grid, so the same cells give the same interval in
    any grid."""
    return ("cells", tuple(sorted(map(str, reference))), tuple(sorted(map(str, arm))))


def _statistic(values: np.ndarray, stat: str, axis: int = -1) -> np.ndarray:
    q = _QUANTILE[stat]
    if q is None:
        return values.mean(axis=axis)
    return np.quantile(values, q, axis=axis, method="linear")


def _percentiles(replicates: np.ndarray) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(replicates, [tail, 100 - tail])
    return float(low), float(high)


def _change(arm: np.ndarray | float, reference: np.ndarray | float, difference: bool):
    """arm / reference - 1, or arm - reference for a fraction (`difference`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return arm - reference if difference else arm / reference - 1


def paired_change(reference: list[np.ndarray], arm: list[np.ndarray], stat: str,
                  rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
                  difference: bool = False) -> Interval:
    """stat(arm) / stat(reference) - 1 over pairs pooled from every stratum
    (seed); reference[s][i] and arm[s][i] are the same flow. Bootstrap: pairs
    resampled with replacement within each stratum. difference: the change
    is stat(arm) - stat(reference) (a fraction's, in points)."""
    strata = [(r, a) for r, a in zip(reference, arm) if len(r)]
    n = sum(len(r) for r, _ in strata)
    if n == 0:
        return Interval.empty(len(reference))
    ref_all = np.concatenate([r for r, _ in strata])
    arm_all = np.concatenate([a for _, a in strata])
    base = float(_statistic(ref_all, stat))
    change = (float(_change(float(_statistic(arm_all, stat)), base, difference))
              if base > 0 or difference else float("nan"))
    if n < MIN_PAIRS[stat]:
        return Interval.too_few(change, n, len(reference))
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
        replicates.append(_change(arm_stat, ref_stat, difference))
    low, high = _percentiles(np.concatenate(replicates))
    return Interval(change, low, high, n, len(reference))


def unpaired_change(reference: list[np.ndarray], arm: list[np.ndarray], stat: str,
                    rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
                    min_samples: int | None = None, difference: bool = False) -> Interval:
    """stat(arm) / stat(reference) - 1 where the two sides share no pairs
    (harness compare of runs with different background flows or seeds): a
    percentile bootstrap resampling each side on its own, within each of its
    strata (seeds). "too few samples" when the smaller side has fewer than
    min_samples (default MIN_PAIRS[stat]) values; samples: that smaller side.
    difference: as paired_change's."""
    ref = [r for r in reference if len(r)]
    new = [a for a in arm if len(a)]
    seeds = max(len(reference), len(arm))
    n = min(sum(map(len, ref)), sum(map(len, new)))
    if n == 0:
        return Interval.empty(seeds)
    ref_all, arm_all = np.concatenate(ref), np.concatenate(new)
    base = float(_statistic(ref_all, stat))
    change = (float(_change(float(_statistic(arm_all, stat)), base, difference))
              if base > 0 or difference else float("nan"))
    if n < (min_samples if min_samples is not None else MIN_PAIRS[stat]):
        return Interval.too_few(change, n, seeds)

    def replicates(side: list[np.ndarray]) -> np.ndarray:
        values = np.concatenate(side)
        offsets = np.cumsum([0] + [len(x) for x in side])
        out = []
        chunk = max(1, min(resamples, 2_000_000 // len(values)))
        for done in range(0, resamples, chunk):
            size = min(chunk, resamples - done)
            picks = np.concatenate([rng.integers(a, b, size=(size, b - a))
                                    for a, b in zip(offsets[:-1], offsets[1:])], axis=1)
            out.append(_statistic(values[picks], stat, axis=1))
        return np.concatenate(out)

    ref_stat, arm_stat = replicates(ref), replicates(new)
    low, high = _percentiles(_change(arm_stat, ref_stat, difference))
    return Interval(change, low, high, n, seeds)


def block_ratio_change(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                       seeds: int) -> Interval:
    """The ratio of two arms' pooled means less 1, paired by time block.

    blocks: per block (a span of time both arms ran through, in one seed)
    the arrays' entries (reference sum, reference count, arm sum, arm
    count) of the values that fell in it. The change is
    (sum arm / count arm) / (sum ref / count ref) - 1 over every block,
    so it agrees with the two means it compares, whatever the conditions
    did inside the window; its 95 % interval is a Student t interval on
    the log of the ratio, the spread from each block's linearised
    influence on it (the delta method for a ratio estimator) with
    blocks - 1 degrees of freedom. On the log scale the interval of a
    non-negative quantity never reaches below -100 %. samples: the blocks;
    "too few samples" below MIN_ITERATION_PAIRS."""
    ref_sum, ref_n, arm_sum, arm_n = (np.concatenate([b[i] for b in blocks]).astype(float)
                                      if blocks else np.asarray([], float) for i in range(4))
    n = len(ref_sum)
    if n == 0 or ref_n.sum() == 0 or arm_n.sum() == 0:
        return Interval.empty(seeds)
    ref_mean, arm_mean = ref_sum.sum() / ref_n.sum(), arm_sum.sum() / arm_n.sum()
    if not ref_mean > 0:
        return Interval.empty(seeds)
    change = float(arm_mean / ref_mean - 1)
    if n < MIN_ITERATION_PAIRS:
        return Interval.too_few(change, n, seeds)
    if arm_mean == 0:     # every arm value 0 (a spread that vanished): -100 %, exactly
        return Interval(-1.0, -1.0, -1.0, n, seeds)
    from scipy import stats as sps

    influence = ((arm_sum - arm_mean * arm_n) / arm_sum.sum()
                 - (ref_sum - ref_mean * ref_n) / ref_sum.sum())
    sd = math.sqrt(n / (n - 1) * float(np.sum(influence ** 2)))
    half = float(sps.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd
    log_ratio = math.log(arm_mean / ref_mean)
    return Interval(change, math.expm1(log_ratio - half), math.expm1(log_ratio + half),
                    n, seeds)


def _weighted_quantile(sorted_values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """np.quantile(method="linear") of each row's multiset: sorted_values[i]
    taken weights[r, i] times (integers), for every row r at once."""
    cumulative = np.cumsum(weights, axis=1)
    total = cumulative[:, -1]
    h = q * (total - 1)
    below = np.floor(h)
    lo = np.argmax(cumulative > below[:, None], axis=1)
    hi = np.argmax(cumulative > np.minimum(below + 1, total - 1)[:, None], axis=1)
    return sorted_values[lo] + (h - below) * (sorted_values[hi] - sorted_values[lo])


def block_quantile_change(reference: tuple[np.ndarray, np.ndarray],
                          arm: tuple[np.ndarray, np.ndarray], blocks: int, stat: str,
                          rng: np.random.Generator, seeds: int,
                          resamples: int = BOOTSTRAP_RESAMPLES) -> Interval:
    """quantile(arm) / quantile(reference) - 1 of two arms' pooled values,
    each side given as (values, block of each value), the blocks spans of
    time both arms ran through (block_ratio_change's). The interval: a
    percentile bootstrap that resamples whole blocks, the same picks for
    both arms (paired by time). samples: the smaller side's values; "too
    few samples" below MIN_PAIRS[stat]."""
    (ref_v, ref_b), (arm_v, arm_b) = reference, arm
    n = min(len(ref_v), len(arm_v))
    if n == 0 or blocks == 0:
        return Interval.empty(seeds)
    base = float(_statistic(ref_v, stat))
    change = float(_statistic(arm_v, stat)) / base - 1 if base > 0 else float("nan")
    if n < MIN_PAIRS[stat]:
        return Interval.too_few(change, n, seeds)
    order_r, order_a = np.argsort(ref_v, kind="stable"), np.argsort(arm_v, kind="stable")
    ref_v, ref_b, arm_v, arm_b = ref_v[order_r], ref_b[order_r], arm_v[order_a], arm_b[order_a]
    q = _QUANTILE[stat]
    replicates = []
    chunk = max(1, min(resamples, 2_000_000 // max(len(ref_v), len(arm_v), blocks)))
    for done in range(0, resamples, chunk):
        size = min(chunk, resamples - done)
        picks = rng.integers(0, blocks, size=(size, blocks))
        counts = np.zeros((size, blocks), dtype=np.int64)
        np.add.at(counts, (np.arange(size)[:, None], picks), 1)
        w_ref, w_arm = counts[:, ref_b], counts[:, arm_b]
        usable = (w_ref.sum(axis=1) > 0) & (w_arm.sum(axis=1) > 0)
        ref_q = _weighted_quantile(ref_v, w_ref[usable], q)
        arm_q = _weighted_quantile(arm_v, w_arm[usable], q)
        replicates.append(_change(arm_q, ref_q, False))
    low, high = _percentiles(np.concatenate(replicates))
    return Interval(change, low, high, n, seeds)


def paired_t_change(changes: np.ndarray, seeds: int) -> Interval:
    """Mean of paired relative changes and its Student t interval."""
    iv = mean_difference(changes, seeds, MIN_ITERATION_PAIRS)
    if not np.isfinite(iv.low):
        return iv
    # the changes are of non-negative quantities (times, spreads): none can
    # fall below -100 %, so the interval is cut there (it covers as often)
    return Interval(iv.change, max(iv.low, -1.0), iv.high, iv.samples, iv.seeds)


def _t_half(values: np.ndarray) -> float:
    """Half the width of the 95 % Student t interval of values' mean."""
    from scipy import stats as sps

    n = len(values)
    return float(sps.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * np.std(values, ddof=1) / math.sqrt(n))


def mean_difference(differences: np.ndarray, seeds: int, min_pairs: int) -> Interval:
    """The mean of paired differences (arm - reference, in their unit: not a
    relative change) and its Student t interval over the pairs; "too few
    samples" below min_pairs."""
    n = len(differences)
    if n == 0:
        return Interval.empty(seeds)
    mean = float(np.mean(differences))
    if n < max(min_pairs, 2):
        return Interval.too_few(mean, n, seeds)
    half = _t_half(differences)
    return Interval(mean, mean - half, mean + half, n, seeds)


def share_of_difference(part: np.ndarray, whole: np.ndarray, seeds: int,
                        min_pairs: int) -> Interval:
    """mean(part) / mean(whole) of paired differences (what share of a
    change one of its parts is, the parts summing to the whole pair by
    pair) and its Student t interval by the delta method for a ratio of
    means; no estimate (nan) where the whole's mean is 0, no interval below
    min_pairs or where the whole's own interval contains 0 (a share of a
    change not told from none says nothing)."""
    n = len(whole)
    if n == 0 or not np.mean(whole):
        return Interval.empty(seeds)
    share = float(np.mean(part) / np.mean(whole))
    total = mean_difference(whole, seeds, min_pairs)
    if n < max(min_pairs, 2) or not (total.low > 0 or total.high < 0):
        return Interval.too_few(share, n, seeds)
    half = _t_half((part - share * whole) / np.mean(whole))   # each pair's influence
    return Interval(share, share - half, share + half, n, seeds)


def _block_means(ref_sum, ref_n, arm_sum, arm_n):
    """Pooled means of both arms and each block's linearised influence on
    their difference (the delta method for ratio estimators): arrays, an
    entry per block."""
    ref_mean, arm_mean = ref_sum.sum() / ref_n.sum(), arm_sum.sum() / arm_n.sum()
    influence = (arm_sum - arm_mean * arm_n) / arm_n.sum() - (ref_sum - ref_mean * ref_n) / ref_n.sum()
    return ref_mean, arm_mean, influence


def block_part_change(ref_part: np.ndarray, arm_part: np.ndarray, ref_total: np.ndarray,
                      ref_n: np.ndarray, arm_n: np.ndarray, seeds: int) -> Interval:
    """One part's contribution to the change of a pooled mean paired by time
    block (block_ratio_change's): (mean arm part - mean reference part) /
    mean reference total, so that parts which add up to the total, value by
    value, add up to its change. Arrays with an entry per block: the
    part's and the reference total's sums and each arm's counts. Its 95 %
    interval is a Student t interval from each block's linearised influence
    (blocks - 1 degrees of freedom); "too few samples" below
    MIN_ITERATION_PAIRS blocks."""
    n = len(ref_n)
    if n == 0 or ref_n.sum() == 0 or arm_n.sum() == 0:
        return Interval.empty(seeds)
    ref_p, arm_p, part_influence = _block_means(ref_part, ref_n, arm_part, arm_n)
    total = ref_total.sum() / ref_n.sum()
    if not total > 0:
        return Interval.empty(seeds)
    change = float((arm_p - ref_p) / total)
    if n < MIN_ITERATION_PAIRS:
        return Interval.too_few(change, n, seeds)
    influence = (part_influence - change * (ref_total - total * ref_n) / ref_n.sum()) / total
    half = _t_half(n * influence)
    return Interval(change, change - half, change + half, n, seeds)


def block_part_share(ref_part: np.ndarray, arm_part: np.ndarray, ref_total: np.ndarray,
                     arm_total: np.ndarray, ref_n: np.ndarray, arm_n: np.ndarray,
                     seeds: int) -> Interval:
    """What share of the change of a pooled mean (block_part_change's
    blocks) one part is: its change over the total's, with a Student t
    interval by the delta method; no interval below MIN_ITERATION_PAIRS
    blocks or where the total's own change is not told from none (a share
    of a change that may be zero says nothing), no estimate where it is 0."""
    n = len(ref_n)
    if n == 0 or ref_n.sum() == 0 or arm_n.sum() == 0:
        return Interval.empty(seeds)
    ref_t, arm_t, total_influence = _block_means(ref_total, ref_n, arm_total, arm_n)
    ref_p, arm_p, part_influence = _block_means(ref_part, ref_n, arm_part, arm_n)
    whole = arm_t - ref_t
    if not whole:
        return Interval.empty(seeds)
    share = float((arm_p - ref_p) / whole)
    if n < MIN_ITERATION_PAIRS or n < 2:
        return Interval.too_few(share, n, seeds)
    whole_half = _t_half(n * total_influence)
    if abs(whole) <= whole_half:
        return Interval.too_few(share, n, seeds)
    half = _t_half(n * (part_influence - share * total_influence) / whole)
    return Interval(share, share - half, share + half, n, seeds)


# --------------------------------------------------------------------------
# verdicts


def judge(metric: str, iv: Interval) -> tuple[str, bool]:
    """(verdict, decided) of one metric's change: the training classes for the
    iteration time, smaller/larger for the end spread, faster/slower for FCTs;
    TOO_FEW (undecided) for an estimate without an interval."""
    if iv.has_too_few:
        return TOO_FEW, False
    if services.stat_of(metric) is not None:
        return service_verdict(iv.low, iv.high)
    verdict = {"iteration_time": training_verdict, "end_spread": spread_verdict,
               "pause_share": spread_verdict}.get(metric, background_verdict)
    return verdict(iv.low, iv.high)


def training_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, decided) of a slowdown interval: green <= 1 %, yellow <= 30 %,
    red above; decided when the whole interval is in one class."""
    if not (np.isfinite(low) or low == math.inf):
        return NOT_APPLICABLE, False
    a, b = slowdown_class(low), slowdown_class(high)
    return (a, True) if a == b else (f"{a}/{b}", False)


def slowdown_class(change: float) -> str:
    """The training class of one slowdown (an estimate, or an interval's
    end): green <= GREEN_MAX, yellow <= YELLOW_MAX, red above (a stall, +inf,
    is red); "n/a" for NaN."""
    if not (np.isfinite(change) or change == math.inf):
        return NOT_APPLICABLE
    return "green" if change <= GREEN_MAX else "yellow" if change <= YELLOW_MAX else "red"


def threshold_side(low: float, high: float, threshold: float) -> str:
    """A slowdown interval's side of a threshold at 95 % (harness.sweeps.boundary's
    searches): below (all of it <= threshold), above (all of it >
    threshold) or undecided (it straddles the threshold, or there is no
    interval: too few samples, no measurement). A stalled arm (+inf) is above."""
    if low == math.inf:
        return ABOVE
    if not (math.isfinite(low) and (math.isfinite(high) or high == math.inf)):
        return UNDECIDED
    if high <= threshold:
        return BELOW
    if low > threshold:
        return ABOVE
    return UNDECIDED


def comparison_verdict(low: float, high: float) -> str:
    """An arm's iteration-time change against another arm (harness.analysis.claims):
    faster (all of the interval below 0), slower (above 0), else undecided."""
    return FASTER if high < 0 else SLOWER if low > 0 else UNDECIDED


def paired_spread(change: float, high: float, samples: float) -> float:
    """The standard deviation of the paired changes behind a Student t
    interval of `samples` of them around `change` up to `high`
    (paired_t_change backwards). The upper half: the lower end may be cut
    at -100 %."""
    from scipy import stats as sps

    return (high - change) * math.sqrt(samples) / sps.t.ppf(0.5 + CONFIDENCE / 2, samples - 1)


def seeds_to_decide(change: float, low: float, high: float, samples: float,
                    seeds: float) -> float:
    """A rough projection, for an undecided training verdict: the number of
    seeds at which its interval would lie in one class, were the paired
    changes' mean and spread what they are now (a Student t half-width
    shrinks as t / sqrt(samples); samples per seed as now). NaN when decided
    or not a finite interval; inf when the estimate sits on a class boundary.
    From a handful of samples the spread is itself uncertain: an order of
    magnitude, not a promise."""
    finite = all(np.isfinite(v) for v in (change, low, high, samples, seeds))
    if not finite or samples < 2 or seeds < 1 or training_verdict(low, high)[1]:
        return math.nan
    from scipy import stats as sps

    crossed = [b for b in (GREEN_MAX, YELLOW_MAX) if low <= b < high]
    distance = min(abs(change - b) for b in crossed)
    if distance == 0:
        return math.inf
    spread = paired_spread(change, high, samples)
    need = float(samples)
    for _ in range(20):   # n = (t(n - 1) * sd / d)^2, t itself depending on n
        t = sps.t.ppf(0.5 + CONFIDENCE / 2, max(need, 2.0) - 1)
        need = max(float(samples), (t * spread / distance) ** 2)
    per_seed = samples / seeds
    return float(max(seeds + 1, math.ceil(need / per_seed - 1e-9)))


def background_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, significant) of a background FCT change interval: "faster"
    (all of it below 0), "slower" (above 0), else "n.s."."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return NOT_APPLICABLE, False
    if high < 0:
        return FASTER, True
    if low > 0:
        return SLOWER, True
    return NOT_SIGNIFICANT, False


def service_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, significant) of a change of a service's statistic: lower (all
    of the interval below 0), higher (above 0), else "n.s."; whether that is
    better is the statistic's (services.ServiceStat.higher_is_better)."""
    verdict, decided = background_verdict(low, high)
    return {FASTER: LOWER, SLOWER: HIGHER}.get(verdict, verdict), decided


def spread_verdict(low: float, high: float) -> tuple[str, bool]:
    """(class, significant) of a change of the straggler spread: smaller (all
    of the interval below 0), larger (above 0), else "n.s."."""
    verdict, decided = background_verdict(low, high)
    return {FASTER: SMALLER, SLOWER: LARGER}.get(verdict, verdict), decided


# --------------------------------------------------------------------------
# scale check: the same cells at several scales (harness.engine.scaling)

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
