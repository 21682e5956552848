"""Published results a faithful simulator must reproduce, as pure functions:
the analytic side of the reference suite (harness.services.references runs
the simulations and compares). Each function names its source; units are
SI (seconds, bit/s, bytes) or packets, as its arguments say.

Also the intervals the comparisons carry: batch means for correlated
samples (a queue's delays), Clopper-Pearson for a proportion, a t interval
over independent runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import gammaln


# ---------------------------------------------------------------- the references

def dynamic_threshold_queue(alpha: float, n: int, pool: float) -> float:
    """Choudhury & Hahne (IEEE/ACM ToN 1998), steady state: n saturated
    queues with threshold T = alpha (B - sum Q) each hold alpha B / (1 + n alpha)."""
    return alpha * pool / (1 + n * alpha)


def dynamic_threshold_free(alpha: float, n: int, pool: float) -> float:
    """The pool left free in that steady state: B / (1 + n alpha)."""
    return pool / (1 + n * alpha)


def cobham_waits(rates: list[float], mean_service: list[float],
                 second_moment: list[float]) -> list[float]:
    """Cobham (1954), non-preemptive priority M/G/1: the mean wait in queue
    of each class, highest priority first: W_k = W0 / ((1 - s_(k-1)) (1 - s_k)),
    W0 = sum lambda_i E[S_i^2] / 2, s_k = the load of classes 1..k.
    rates: packets/s per class; mean_service, second_moment: E[S], E[S^2]."""
    load = np.cumsum(np.asarray(rates) * np.asarray(mean_service))
    if load[-1] >= 1:
        raise ValueError(f"total load {load[-1]:.3g} >= 1: no steady state")
    w0 = float(np.sum(np.asarray(rates) * np.asarray(second_moment)) / 2)
    above = np.concatenate([[0.0], load[:-1]])
    return [w0 / ((1 - a) * (1 - s)) for a, s in zip(above, load)]


def ecmp_all_distinct(flows: int, paths: int) -> float:
    """The probability that `flows` flows hashed uniformly onto `paths`
    equal-cost paths all take different ones: prod_{i<k} (n - i) / n
    (the birthday problem; 11 flows on 20 uplinks: 3.27 %)."""
    if flows > paths:
        return 0.0
    return float(np.prod([(paths - i) / paths for i in range(flows)]))


def busiest_bin_cdf(balls: int, bins: int) -> np.ndarray:
    """P(the busiest of `bins` holds <= m balls), m = 0..balls, for `balls`
    thrown uniformly and independently: k!/n^k [x^k] (sum_{j<=m} x^j/j!)^n,
    the coefficient computed in log space by repeated convolution."""
    out = np.zeros(balls + 1)
    for m in range(balls + 1):
        term = -gammaln(np.arange(m + 1) + 1)             # log(1/j!), j = 0..m
        poly = np.array([0.0])                            # log of the polynomial 1
        for _ in range(bins):
            poly = _log_convolve(poly, term)[: balls + 1]
        if len(poly) > balls:
            out[m] = math.exp(poly[balls] + gammaln(balls + 1) - balls * math.log(bins))
    return np.minimum(out, 1.0)


def _log_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The coefficients (logs) of the product of two polynomials given by
    the logs of their coefficients."""
    out = np.full(len(a) + len(b) - 1, -np.inf)
    for i, la in enumerate(a):
        if la > -np.inf:
            out[i: i + len(b)] = np.logaddexp(out[i: i + len(b)], la + b)
    return out


def dctcp_queue(flows: int, bdp_packets: float, k: int) -> dict[str, float]:
    """Alizadeh et al. (SIGCOMM 2010, section 3.3), the sawtooth of N
    synchronised flows: the queue's maximum K + N, its oscillation amplitude
    A = 1/2 sqrt(2 N (C RTT + K)) packets and period T_C = 1/2 sqrt(2 (C RTT + K) / N)
    round trips (C RTT: the bandwidth-delay product in packets)."""
    w = bdp_packets + k
    return {"max_packets": k + flows, "amplitude_packets": 0.5 * math.sqrt(2 * flows * w),
            "period_rtts": 0.5 * math.sqrt(2 * w / flows),
            "k_guideline_packets": bdp_packets / 7}


def mathis_throughput(mss_bytes: float, rtt_s: float, loss: float,
                      segments_per_ack: int = 1) -> float:
    """Mathis, Semke, Mahdavi & Ott (CCR 1997): a long-lived TCP flow with
    random loss rate p moves (MSS / RTT) C / sqrt(p) (bit/s here), with
    C = sqrt(3 / (2 b)) for a receiver that acknowledges every b-th segment
    (sqrt(3/2) for every segment; sqrt(3/4) for delayed ACKs, b = 2)."""
    return mss_bytes * 8 / rtt_s * math.sqrt(3 / (2 * segments_per_ack)) / math.sqrt(loss)


def ps_slowdown(load: float) -> float:
    """M/G/1 processor sharing: a job's mean response time is its size over
    the rate times 1 / (1 - rho), whatever the size distribution."""
    if not 0 <= load < 1:
        raise ValueError(f"load {load:g} outside [0, 1)")
    return 1 / (1 - load)


# ---------------------------------------------------------------- intervals

@dataclass(frozen=True)
class Estimate:
    """A measured value and its 95 % interval."""

    value: float
    low: float
    high: float
    samples: int

    def within(self, expected: float, tolerance: float) -> bool | None:
        """True: the interval lies within expected x (1 +- tolerance), or
        contains expected; False: it lies wholly outside that band; None:
        the interval straddles the band's edge (undecided)."""
        lo, hi = expected * (1 - tolerance), expected * (1 + tolerance)
        lo, hi = min(lo, hi), max(lo, hi)
        if self.low <= expected <= self.high or (lo <= self.low and self.high <= hi):
            return True
        if self.high < lo or self.low > hi:
            return False
        return None


def batch_means(samples: np.ndarray, batches: int = 20) -> Estimate:
    """The mean of correlated samples (a queue's successive delays) with a
    95 % t interval over `batches` consecutive batch means."""
    x = np.asarray(samples, dtype=float)
    if len(x) < 2 * batches:
        raise ValueError(f"{len(x)} samples: too few for {batches} batches")
    means = np.array([b.mean() for b in np.array_split(x, batches)])
    half = stats.t.ppf(0.975, batches - 1) * means.std(ddof=1) / math.sqrt(batches)
    return Estimate(float(x.mean()), float(x.mean() - half), float(x.mean() + half), len(x))


def t_interval(values: np.ndarray) -> Estimate:
    """The mean of independent values (one per run or per flow) and its 95 % t interval."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return Estimate(float(x.mean()) if len(x) else math.nan, math.nan, math.nan, len(x))
    res = stats.ttest_1samp(x, 0.0).confidence_interval(0.95)
    return Estimate(float(x.mean()), float(res.low), float(res.high), len(x))


def poisson_count_interval(count: float) -> tuple[float, float]:
    """The exact (Garwood) 95 % interval of a Poisson mean, `count` observed."""
    return (float(stats.chi2.ppf(0.025, 2 * count) / 2) if count > 0 else 0.0,
            float(stats.chi2.ppf(0.975, 2 * (count + 1)) / 2))


def proportion(successes: int, trials: int) -> Estimate:
    """A proportion and its exact (Clopper-Pearson) 95 % interval."""
    ci = stats.binomtest(successes, trials).proportion_ci(0.95, method="exact")
    return Estimate(successes / trials, float(ci.low), float(ci.high), trials)


__all__ = ["Estimate", "batch_means", "busiest_bin_cdf", "cobham_waits", "dctcp_queue",
           "dynamic_threshold_free", "dynamic_threshold_queue", "ecmp_all_distinct",
           "mathis_throughput", "poisson_count_interval", "proportion", "ps_slowdown", "t_interval"]
