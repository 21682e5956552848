"""Stragglers: a per-worker, per-iteration compute factor drawn in Python
from a seeded distribution (training.straggler) and handed to C++ as a table
(TrainingJobHelper::SetComputeFactors): iteration k of worker r computes
every layer factors[r][k] times slower. The ring and PS jobs wait for the
slow worker as they do for any (a ring step needs every rank; a shard
aggregates every worker's push).

Same scenario seed, same factors: each worker draws from its own generator
(seed, stream, job index, rank), so its factors do not depend on the other
workers or on how many iterations the run holds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.config.errors import ConfigError
from harness.config.units import NS3_TIME_MAX_S

# Distinct from the background schedule's stream (harness.traffic.background).
_STRAGGLER_STREAM = 0x57A6
#: No more factors than this per worker (a run of tiny compute and long duration).
MAX_ITERATIONS = 1_000_000


def draws(straggler, rng: np.random.Generator, n: int) -> np.ndarray:
    """n factors from the straggler's distribution."""
    if straggler.distribution == "fixed":
        return np.full(n, straggler.factor)
    if straggler.distribution == "uniform":
        return rng.uniform(straggler.factor_min, straggler.factor_max, n)
    return straggler.median * np.exp(straggler.sigma * rng.standard_normal(n))


def plan(straggler, n_workers: int, compute_s: float, duration: float, seed: int,
         job_index: int = 0) -> tuple[tuple[float, ...], ...]:
    """Factors of every worker's iterations 0..n-1 (() for a worker that is no
    straggler: factor 1). n covers the run: a worker's iteration takes at
    least its compute x factor, so once the factors' compute adds up to
    `duration` no further iteration can start."""
    if straggler is None:
        return ()
    slow = set(straggler.workers or range(n_workers))
    seeds = np.random.SeedSequence([seed, _STRAGGLER_STREAM, job_index]).spawn(n_workers)
    out = []
    for rank in range(n_workers):
        if rank not in slow:
            out.append(())
            continue
        rng = np.random.default_rng(seeds[rank])
        factors = np.empty(0)
        while factors.sum() * compute_s < duration:
            if len(factors) >= MAX_ITERATIONS:
                raise ConfigError("training.straggler", f"more than {MAX_ITERATIONS:,} "
                                  f"iterations fit in {duration:g} s: {compute_s * 1e3:.3g} ms "
                                  f"compute x the drawn factors (mean {factors.mean():.3g}) is "
                                  f"{compute_s * factors.mean() * 1e3:.3g} ms an iteration; "
                                  "raise the factors or shorten the run")
            # chunked draws give the same sequence as one long draw
            factors = np.concatenate([factors, draws(straggler, rng, max(64, len(factors)))])
        n = int(np.searchsorted(np.cumsum(factors) * compute_s, duration)) + 1
        _check_simulable(factors[:n], compute_s, duration, rank)
        out.append(tuple(float(f) for f in factors[:n]))
    return tuple(out)


def _check_simulable(factors: np.ndarray, compute_s: float, duration: float, rank: int) -> None:
    """The factors as drawn (not only as written) must give compute times that
    ns-3 can schedule: a delay past its 64-bit nanosecond clock aborts it."""
    longest = float(factors.max()) * compute_s
    if not np.isfinite(longest) or duration + longest > NS3_TIME_MAX_S:
        raise ConfigError("training.straggler", f"worker {rank} drew a factor of "
                          f"{factors.max():.3g}: {compute_s * 1e3:.3g} ms compute becomes "
                          f"{longest:.3g} s, beyond ns-3's clock ({NS3_TIME_MAX_S:.3g} s); "
                          "a factor is at most "
                          f"{(NS3_TIME_MAX_S - duration) / compute_s:.3g} for this job")


def with_factors(iterations: pd.DataFrame, factors: tuple[tuple[float, ...], ...]) -> pd.DataFrame:
    """The iteration table with each row's `compute_factor` (1 beyond the
    table or for a worker that is no straggler)."""
    def factor(worker: int, iteration: int) -> float:
        row = factors[worker] if worker < len(factors) else ()
        return row[iteration] if iteration < len(row) else 1.0

    return iterations.assign(compute_factor=[
        factor(w, k) for w, k in zip(iterations["worker"], iterations["iteration"])])


def mean_factor(factors: tuple[tuple[float, ...], ...]) -> float | None:
    """Mean factor the straggling workers drew (None: no straggler)."""
    values = [f for row in factors for f in row]
    return math.fsum(values) / len(values) if values else None
