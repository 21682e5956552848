"""A run's rough cost, estimated before it runs: the bytes it sends
(predicted_bytes), the events and wall time they take (Cost), and the note a
long run gets (long_run_note). docs/performance/sweep-cost.md."""

from __future__ import annotations

import os
from dataclasses import dataclass


def predicted_bytes(p) -> float:
    """Payload bytes a planned cell will send: its background flows, its
    training job's iterations at max(compute, communication at line rate)
    each, and its services' requests, responses and stream packets. The simulation cost grows with the bytes
    (docs/performance/sweep-cost.md), so a sweep starts the cells with the most bytes first, to
    end less often on one long cell running alone. A proxy only: ns-3's TCP
    send buffer costs more per segment as the congestion window grows, so
    cells of equal bytes can differ several-fold in wall time."""
    expected = p.expected_duration
    flows = p.flows[p.flows["start_ns"] < expected * 1e9] if len(p.flows) else p.flows
    total = float(flows["size"].sum()) if len(flows) else 0.0
    from harness import training
    for job in p.all_jobs:  # every job of [[training]]
        per_iteration = training.architecture(job.config.architecture).bytes_per_iteration(job)
        iteration_ms = max(job.profile.compute_ms, job.network_ms)
        total += per_iteration * expected * 1e3 / iteration_ms
    if p.services:   # [[service]]: what each kind sends (requests and responses, packets, ...)
        from harness.traffic.services import planning as service_planning
        total += service_planning.sent_bytes(p.services, expected)
    return total


# Calibrated on the `quick` preset with its adaptive seeds (86 cells,
# docs/performance/sweep-cost.md): 1,011 M events for 124 GB of predicted
# bytes (6,200-13,300 per MB over cells), and one core simulated 218-373
# thousand events per second with the TCP fast path (245 k on the 10 Gbit/s
# thesis cell of `python -m bench --only speed`).
EVENTS_PER_MB = 8_000
EVENTS_PER_CORE_S = (350_000, 200_000)   # fast, slow
SWEEP_START_S = 3.0  # loading ns-3 and warming up, once per sweep (local executor)


@dataclass(frozen=True)
class Cost:
    """A rough cost from the bytes a run sends (predicted_bytes)."""
    bytes: float

    @property
    def events(self) -> float:
        return self.bytes / 1e6 * EVENTS_PER_MB

    @property
    def core_s(self) -> tuple[float, float]:
        return tuple(self.events / rate for rate in EVENTS_PER_CORE_S)

    def describe(self, jobs: int = 1) -> str:
        """Bytes, events, CPU time (what the estimate rests on: a core's
        rate of events, measured idle) and the wall time that makes on
        `jobs` cores at the machine's present load (machine_share)."""
        low, high = self.core_s
        share, load = machine_share(jobs)
        wall_low, wall_high = (t / jobs / share for t in (low, high))
        on = "1 core" if jobs == 1 else f"{jobs} cores"
        at = ("idle" if load < 0.5 else f"at the present load (load average {load:.1f} on "
              f"{os.cpu_count() or 1} CPUs)")
        return (f"~{self.bytes / 1e6:,.0f} MB to send, ~{self.events / 1e6:,.1f} M events, "
                f"~{_duration(low)} to {_duration(high)} of CPU, ~{_duration(wall_low)} to "
                f"{_duration(wall_high)} of wall time on {on} {at}")


def machine_share(jobs: int) -> tuple[float, float]:
    """(the share of a core each of `jobs` processes gets, the load of
    others): the 1-minute load average stands for the processes already
    running; with more runnable processes than CPUs each gets CPUs / all
    of them. (1, 0) where the load average is not known."""
    try:
        load = max(0.0, os.getloadavg()[0])
    except (OSError, AttributeError):
        return 1.0, 0.0
    cpus = os.cpu_count() or 1
    return min(1.0, cpus / (jobs + load)), load


#: A run whose slow estimate (Cost.core_s) is at least this many seconds is
#: announced with its cost before it starts (long_run_note): no upper bound on
#: run.duration (long runs are legitimate), but no surprise either.
LONG_RUN_S = 300.0


def long_run_note(p) -> str | None:
    """For a planned run estimated at LONG_RUN_S or more of wall time: what it
    simulates and its rough cost (None for a shorter one)."""
    cost = Cost(predicted_bytes(p))
    if cost.core_s[1] < LONG_RUN_S:
        return None
    return (f"a long run: {p.expected_duration:g} s simulated, {cost.describe()} "
            "(rough: docs/performance/sweep-cost.md); run.duration sets the simulated time")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

