"""Published results a faithful simulator must reproduce, as pure functions:
the analytic side of the reference suite (harness.usecases.references runs
the simulations and compares). Each function names its source; units are
SI (seconds, bit/s, bytes) or packets, as its arguments say.

Also the intervals the comparisons carry: batch means for correlated
samples (a queue's delays), Clopper-Pearson for a proportion, a t interval
over independent runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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


def priority_queue_waits(arrivals_s: np.ndarray, classes: np.ndarray,
                         service_s: np.ndarray, committed: int = 0) -> np.ndarray:
    """Each packet's wait before its transmission starts, at one link served
    by non-preemptive strict priority (class 0 highest, FIFO within a class),
    for the given arrival times (sorted), classes and service times.

    committed = 0 is Cobham's queue: the next packet is chosen when the wire
    frees. committed = k > 0 puts a FIFO of k packets between the priority
    queue and the wire, as a NetDevice's transmit queue of k packets does
    below ns-3's queue discipline: a packet leaves the priority queue for it
    as soon as it has room, so the next packet is chosen up to k
    transmissions early and cannot be overtaken. (Ties: the wire frees
    before a packet arriving at the same instant is seen.)"""
    from collections import deque

    n = len(arrivals_s)
    start = np.empty(n)
    queues = [deque() for _ in range(int(np.max(classes)) + 1 if n else 0)]
    fifo: deque = deque()          # committed packets, waiting for the wire
    free_at = -np.inf              # when the wire finishes its current packet
    busy = False

    def next_waiting():
        for q in queues:
            if q:
                return q.popleft()
        return None

    def free_until(t: float) -> None:
        nonlocal free_at, busy
        while busy and free_at <= t:
            nxt = fifo.popleft() if fifo else (next_waiting() if committed == 0 else None)
            if nxt is None:
                busy = False
                break
            start[nxt] = free_at
            free_at += service_s[nxt]
            if committed and len(fifo) < committed:   # the FIFO has room again
                refill = next_waiting()
                if refill is not None:
                    fifo.append(refill)

    for i in range(n):
        t = arrivals_s[i]
        free_until(t)
        if not busy:
            start[i], free_at, busy = t, t + service_s[i], True
        elif len(fifo) < committed:
            fifo.append(i)
        else:
            queues[classes[i]].append(i)
    free_until(np.inf)
    return start - arrivals_s


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


def bdp_packets(rate_bps: float, rtt_s: float, packet_bytes: float) -> float:
    """C x RTT in packets: the bandwidth-delay product of a link of
    `rate_bps` over a round trip of `rtt_s`, in packets of `packet_bytes` on
    the wire."""
    return rate_bps * rtt_s / (8 * packet_bytes)


def mathis_throughput(mss_bytes: float, rtt_s: float, loss: float,
                      segments_per_ack: int = 1) -> float:
    """Mathis, Semke, Mahdavi & Ott (CCR 1997): a long-lived TCP flow with
    random loss rate p moves (MSS / RTT) C / sqrt(p) (bit/s here), with
    C = sqrt(3 / (2 b)) for a receiver that acknowledges every b-th segment
    (sqrt(3/2) for every segment; sqrt(3/4) for delayed ACKs, b = 2)."""
    return mss_bytes * 8 / rtt_s * math.sqrt(3 / (2 * segments_per_ack)) / math.sqrt(loss)


@dataclass(frozen=True)
class DcqcnConstants:
    """DCQCN's reaction and notification points as the fluid model takes
    them: tau the CNP interval, tau' the alpha timer, T the rate-increase
    timer (s), B the byte counter (bytes), F the fast-recovery steps, g,
    R_AI (bit/s)."""

    cnp_interval_s: float = 50e-6
    alpha_period_s: float = 55e-6
    increase_period_s: float = 55e-6
    byte_counter: float = 10e6
    fast_recovery: int = 5
    additive_increase_bps: float = 40e6


def dcqcn_fixed_point(rate_bps: float, flows: int, packet_bytes: float, kmin: float,
                      kmax: float, pmax: float, c: DcqcnConstants = DcqcnConstants()) -> dict:
    """Zhu, Ghobadi, Misra & Padhye ("ECN or Delay", CoNEXT 2016, section 3):
    DCQCN's fluid model of N flows through one bottleneck of `rate_bps`, at
    its fixed point. Each flow sends R_C = C / N (packets of `packet_bytes`
    on the wire); with p the marking probability, a flow is cut at the rate
    A / tau, A = 1 - (1 - p)^(tau R_C) (a mark within a CNP interval),
    alpha* = 1 - (1 - p)^(tau' R_C), and its timer and byte counter expire
    at R_C p / ((1 - p)^-n - 1) (n = T R_C or B packets), past fast
    recovery with probability (1 - p)^(F n). Setting dR_T/dt = dR_C/dt = 0:

        alpha* A^2 / (tau^2 (b_B + b_T)) = R_AI R_C ((1 - p)^(F B) b_B + (1 - p)^(F T R_C) b_T)

    with b_n = p / ((1 - p)^-n - 1): one equation in p, solved here. The
    RED-like profile maps p to the queue: Kmin + p / Pmax (Kmax - Kmin)
    (bytes, as kmin and kmax; none where p > Pmax, the queue is beyond
    Kmax). Returns {p, alpha, queue_bytes, flow_rate_bps}."""
    from scipy.optimize import brentq

    rc = rate_bps / 8 / packet_bytes / flows                      # packets/s per flow
    rai = c.additive_increase_bps / 8 / packet_bytes
    counter = c.byte_counter / packet_bytes                        # packets
    timer = c.increase_period_s * rc                               # packets per timer period

    def expiries(log_q: float, n: float) -> float:   # b_n / p, with log_q = log(1 - p)
        return 1.0 / np.expm1(min(-n * log_q, 700.0))

    def balance(log_p: float) -> float:               # log(decrease) - log(increase)
        p = math.exp(log_p)
        log_q = math.log1p(-p)
        cut = -math.expm1(c.cnp_interval_s * rc * log_q)
        alpha = -math.expm1(c.alpha_period_s * rc * log_q)
        b_b, b_t = p * expiries(log_q, counter), p * expiries(log_q, timer)
        decrease = alpha * cut ** 2 / (c.cnp_interval_s ** 2 * (b_b + b_t))
        increase = rai * rc * (math.exp(c.fast_recovery * counter * log_q) * b_b
                               + math.exp(c.fast_recovery * timer * log_q) * b_t)
        return math.log(decrease) - math.log(increase)

    p = math.exp(brentq(balance, math.log(1e-12), math.log(0.5), xtol=1e-12))
    alpha = -math.expm1(c.alpha_period_s * rc * math.log1p(-p))
    queue = kmin + p / pmax * (kmax - kmin) if p <= pmax else math.nan
    return {"p": p, "alpha": alpha, "queue_bytes": queue, "flow_rate_bps": rate_bps / flows}


def ps_slowdown(load: float) -> float:
    """M/G/1 processor sharing: a job's mean response time is its size over
    the rate times 1 / (1 - rho), whatever the size distribution."""
    if not 0 <= load < 1:
        raise ValueError(f"load {load:g} outside [0, 1)")
    return 1 / (1 - load)


# ---------------------------------------------------------------- a queue's sawtooth

@dataclass(frozen=True)
class Cycles:
    """The complete cycles of a sampled sawtooth, one value of each per cycle."""

    period_s: np.ndarray    # from one rising crossing of the midline to the next
    peak: np.ndarray        # the cycle's largest sample
    trough: np.ndarray      # and its smallest
    midline: float
    hysteresis: float
    peak_s: np.ndarray = field(default_factory=lambda: np.array([]))     # when (the first)
    trough_s: np.ndarray = field(default_factory=lambda: np.array([]))   # when (the first)

    @property
    def rise_s(self) -> np.ndarray:
        """From each cycle's trough to the next cycle's peak: the rise alone
        (one fewer than the cycles)."""
        return self.peak_s[1:] - self.trough_s[:-1]

    @property
    def amplitude(self) -> np.ndarray:
        """Peak to trough, per cycle (Alizadeh et al.'s A = Q_max - Q_min)."""
        return self.peak - self.trough

    def __len__(self) -> int:
        return len(self.period_s)


def sawtooth_cycles(times_s: np.ndarray, values: np.ndarray,
                    hysteresis: float | None = None) -> Cycles:
    """Cut a sampled sawtooth (a queue's backlog every few microseconds)
    into its cycles: each from one rising crossing of the midline (the
    median) to the next, a crossing counted only once the series has been
    below midline - h since the last one and rises above midline + h. The
    hysteresis h (default a fifth of the 5th-95th percentile range, at
    least one packet) keeps the packet-by-packet jitter around the midline
    from counting as cycles. Each cycle holds one rise, one peak and one
    fall: its period, peak and trough come from its own samples.

    Why crossings rather than the autocorrelation's first peak: the
    crossings give each cycle's own period, peak and trough, so the
    quantities come with their spread over the cycles (an interval), and a
    cycle's peak is the maximum the analysis predicts (K + N), not an
    average shape. Flows that are not synchronised make the cycles
    irregular; that shows in the spread, not as a biased period."""
    t = np.asarray(times_s, dtype=float)
    q = np.asarray(values, dtype=float)
    if len(q) < 3:
        raise ValueError(f"{len(q)} samples: too few for a sawtooth")
    mid = float(np.median(q))
    if hysteresis is None:
        lo, hi = np.percentile(q, [5, 95])
        hysteresis = max(1.0, (hi - lo) / 5)
    h = float(hysteresis)
    rises = []
    armed = False
    for i, v in enumerate(q):
        if v < mid - h:
            armed = True
        elif armed and v > mid + h:
            rises.append(i)
            armed = False
    periods, peaks, troughs, peak_s, trough_s = [], [], [], [], []
    for a, b in zip(rises, rises[1:]):
        periods.append(t[b] - t[a])
        top, bottom = a + int(np.argmax(q[a:b])), a + int(np.argmin(q[a:b]))
        peaks.append(q[top])
        troughs.append(q[bottom])
        peak_s.append(t[top])
        trough_s.append(t[bottom])
    return Cycles(np.array(periods), np.array(peaks), np.array(troughs), mid, h,
                  np.array(peak_s), np.array(trough_s))


def block_extremes(times_s: np.ndarray, values: np.ndarray,
                   block_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(largest, smallest) sample of each whole block of `block_s` seconds:
    a series without a sawtooth (sawtooth_cycles finds no cycle) still has
    a maximum and a range, read over blocks as long as the cycle expected."""
    t = np.asarray(times_s, dtype=float)
    q = np.asarray(values, dtype=float)
    step = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    whole = int((t[-1] - t[0] + step) / block_s + 1e-9) if len(t) else 0   # the last may be cut
    block = np.floor((t - t[0]) / block_s).astype(int)
    return (np.array([q[block == i].max() for i in range(whole)]),
            np.array([q[block == i].min() for i in range(whole)]))


def cycle_estimate(values: np.ndarray, batches: int = 10) -> Estimate:
    """The mean of a per-cycle quantity and its 95 % interval: batch means
    over `batches` runs of consecutive cycles where there are at least two
    cycles a batch (successive cycles of a sawtooth are not independent: a
    deep fall is followed by a long rise), else a t interval over the cycles."""
    x = np.asarray(values, dtype=float)
    if len(x) >= 2 * batches:
        return batch_means(x, batches)
    return t_interval(x)


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


__all__ = ["Cycles", "Estimate", "batch_means", "bdp_packets", "block_extremes",
           "busiest_bin_cdf", "cobham_waits", "priority_queue_waits",
           "cycle_estimate", "dctcp_queue", "sawtooth_cycles",
           "dynamic_threshold_free", "dynamic_threshold_queue", "ecmp_all_distinct",
           "mathis_throughput", "poisson_count_interval", "proportion", "ps_slowdown", "t_interval"]
