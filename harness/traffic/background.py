"""Background traffic: flow-size CDFs, the seeded Poisson flow schedule, and
its lines in the scenario recipe (harness.engine.recipe), which ns-3 installs as
FlowSend/FlowSink applications.

The schedule is pure Python and depends only on (seed, hosts, rate, steps,
duration, CDF): two arms of an experiment (training high vs low) replay the
very same flows, so their FCTs compare flow by flow (common random numbers).

Load steps (``background.steps``) make the arrival rate piecewise constant.
The arrivals are those of the constant-rate schedule at the base rate, moved
in time so that the k-th arrival comes when the cumulative rate reaches its
value (time rescaling of a Poisson process): the flows before the first step
are exactly the constant-rate schedule's, and each flow keeps its size,
source and destination whatever the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.config.scenario import CDF_DIR, BackgroundConfig, ConfigError, resolve_data_file
from harness.traffic.arrivals import poisson_times

# Stream label: background randomness never shares draws with anything else.
_BACKGROUND_STREAM = 0xB6


@dataclass(frozen=True)
class FlowSizeCdf:
    """Piecewise-linear flow-size distribution (linear in size between points)."""

    name: str
    sizes: tuple[float, ...]
    probs: tuple[float, ...]

    @property
    def mean(self) -> float:
        s, p = np.asarray(self.sizes), np.asarray(self.probs)
        return float(np.sum(np.diff(p) * (s[1:] + s[:-1]) / 2))

    def quantile(self, u: np.ndarray) -> np.ndarray:
        return np.interp(u, self.probs, self.sizes)


def load_cdf(name: str, where: str = "background.workload") -> FlowSizeCdf:
    path = resolve_data_file(name, CDF_DIR, ".csv", where)
    try:
        table = pd.read_csv(path, comment="#")
    except Exception as e:  # malformed CSV of any kind
        raise ConfigError(where, f"{path}: cannot read CSV: {e}") from None
    if list(table.columns) != ["bytes", "cdf"]:
        raise ConfigError(where, f"{path}: expected columns bytes,cdf; got {','.join(table.columns)}")
    if len(table) < 2:
        raise ConfigError(where, f"{path}: needs at least two points")
    try:
        sizes = table["bytes"].astype(float).to_numpy()
        probs = table["cdf"].astype(float).to_numpy()
    except ValueError as e:
        raise ConfigError(where, f"{path}: non-numeric value: {e}") from None
    if not (np.isfinite(sizes).all() and np.isfinite(probs).all()):
        raise ConfigError(where, f"{path}: every value must be a finite number (no nan, inf)")
    if np.any(sizes < 0) or np.any(np.diff(sizes) <= 0):
        raise ConfigError(where, f"{path}: bytes must be >= 0 and strictly increasing")
    if np.any(np.diff(probs) < 0) or probs[0] < 0 or abs(probs[-1] - 1.0) > 1e-9:
        raise ConfigError(where, f"{path}: cdf must be non-decreasing from >= 0 and end at 1")
    cdf = FlowSizeCdf(path.stem, tuple(sizes), tuple(probs))
    if cdf.mean < 1:  # a load needs a mean size to divide by; a flow needs a byte
        raise ConfigError(where, f"{path}: the mean flow size is {cdf.mean:.3g} bytes (the cdf "
                          f"reaches {probs[0]:g} at {sizes[0]:g} bytes); flows need at least "
                          "1 byte on average")
    return cdf


def rate_per_host(cfg: BackgroundConfig, cdf: FlowSizeCdf, host_link_bps: float) -> float:
    """Flows/s per host: the configured rate, or the one giving the configured
    load U_bg = lambda * mean_size * 8 / link_bps."""
    if cfg.rate is not None:
        return cfg.rate
    return cfg.load * host_link_bps / (8 * cdf.mean)


# The schedule and the ns-3 flow log hold every flow in memory: 2 M flows
# are ~100 times the largest preset's (and ~3 TB of web-search traffic).
MAX_FLOWS = 2_000_000


def check_flow_count(rate: float, n_hosts: int, duration: float, where: str) -> None:
    """Refuse a schedule too large to hold, before drawing it."""
    expected = rate * n_hosts * duration
    if expected > MAX_FLOWS:
        raise ConfigError(where, f"{rate:.3g} flows/s per host x {n_hosts} hosts x "
                          f"{duration:g} s is {expected:.3g} flows; at most {MAX_FLOWS:,} per "
                          "run (lower it or run.duration)")


def step_rates(cfg: BackgroundConfig, cdf: FlowSizeCdf,
               host_link_bps: float) -> tuple[tuple[float, float], ...]:
    """The load steps as (time s, flows/s per host) pairs."""
    return tuple((step.at, step.rate if step.rate is not None
                  else step.load * host_link_bps / (8 * cdf.mean)) for step in cfg.steps)


def offered_load(rate: float, cdf: FlowSizeCdf, host_link_bps: float) -> float:
    return rate * cdf.mean * 8 / host_link_bps


def _cumulative_rate(rate: float, steps, duration: float) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """(knots, rates, cumulative): the piecewise-constant rate per host as
    segment boundaries [0, step times..., duration], the rate of each segment
    and the integral of the rate at each boundary."""
    knots = np.array([0.0, *(at for at, _ in steps if at < duration), duration])
    rates = np.array([rate, *(r for at, r in steps if at < duration)], dtype=float)
    cumulative = np.concatenate([[0.0], np.cumsum(rates * np.diff(knots))])
    return knots, rates, cumulative


def _rescale(arrivals: np.ndarray, rate: float, knots: np.ndarray, rates: np.ndarray,
             cumulative: np.ndarray) -> np.ndarray:
    """Arrival times of a process at constant `rate` moved to the piecewise
    rate: an arrival at s comes when the cumulative rate reaches rate * s."""
    target = rate * arrivals
    # segment k holds cumulative[k] < target <= cumulative[k + 1] (never a
    # zero-rate segment, which has no width in the cumulative rate)
    seg = np.clip(np.searchsorted(cumulative, target, side="left") - 1, 0, len(rates) - 1)
    return knots[seg] + (target - cumulative[seg]) / rates[seg]


def schedule(hosts: tuple[int, ...], rate: float, duration: float, cdf: FlowSizeCdf,
             seed: int, steps: tuple[tuple[float, float], ...] = ()) -> pd.DataFrame:
    """Poisson flow arrivals (rate per host, so len(hosts) * rate in total) in
    [0, duration); source uniform over `hosts`, destination uniform over the
    others; sizes from the CDF. steps: (time s, rate per host) pairs, the
    rate from that time on (piecewise constant; see the module doc).
    Columns: id, start_ns, src, dst, size."""
    if len(hosts) < 2:
        raise ConfigError("background.hosts", "needs at least 2 hosts")
    knots = rates = cumulative = None
    if steps:
        knots, rates, cumulative = _cumulative_rate(rate, steps, duration)
        duration = cumulative[-1] / rate  # the constant-rate schedule's span
    # One generator per quantity, so that a flow's draws do not depend on how
    # many flows there are (a longer run extends the same schedule).
    seeds = np.random.SeedSequence([seed, _BACKGROUND_STREAM]).spawn(4)
    arrivals, sources, destinations, sizes = (np.random.default_rng(s) for s in seeds)
    start = poisson_times(arrivals, rate * len(hosts), duration)
    if steps:
        start = _rescale(start, rate, knots, rates, cumulative)
    n = len(start)
    src_idx = sources.integers(0, len(hosts), size=n)
    dst_idx = destinations.integers(0, len(hosts) - 1, size=n)
    dst_idx = dst_idx + (dst_idx >= src_idx)  # uniform over the others
    size = np.maximum(1, np.ceil(cdf.quantile(sizes.random(size=n)))).astype(np.int64)
    host_arr = np.asarray(hosts, dtype=np.int64)
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64),
        "start_ns": np.round(start * 1e9).astype(np.int64),
        "src": host_arr[src_idx],
        "dst": host_arr[dst_idx],
        "size": size,
    })


def recipe_lines(flows: pd.DataFrame, hosts: tuple[int, ...], tos: int, ack_tos: int,
                 port: int) -> list[str]:
    """The background in the scenario recipe (harness.engine.recipe): a FlowLog,
    sinks on every background host and a sender per host, then every flow
    of the schedule (ids in order). A `tos` column in `flows`, if present,
    overrides `tos` per flow."""
    lines = [f"flow-apps {port}"]
    lines += [f"flow-host {h} {ack_tos} {tos}" for h in hosts]
    flow_tos = flows["tos"] if "tos" in flows else [tos] * len(flows)
    lines += [f"flow {row.id} {row.src} {row.dst} {row.size} {int(t)} {row.start_ns}"
              for row, t in zip(flows.itertuples(index=False), flow_tos)]
    return lines
