"""Poisson arrivals, drawn the one way every traffic source of the harness
draws them (the background's flows, the services' queries and requests):
pure numpy, no configuration, so that any of them may import it."""

from __future__ import annotations

import numpy as np


def poisson_times(rng: np.random.Generator, rate: float, duration: float) -> np.ndarray:
    """Poisson arrival times at `rate` in [0, duration), in seconds (the
    background's flows and the services' queries and requests alike)."""
    starts, t = [], 0.0
    while t < duration:  # chunked draws give the same sequence as one long draw
        gaps = rng.exponential(1.0 / rate, size=max(16, int(rate * duration)))
        chunk = t + np.cumsum(gaps)
        starts.append(chunk)
        t = chunk[-1]
    start = np.concatenate(starts) if starts else np.empty(0)
    return start[start < duration]
