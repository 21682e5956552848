"""Ring-allreduce jobs as a training plug-in (docs/model/training.md).

Python plans the whole job: the fused gradient buffers (or, with a
partitioning policy, the partitions), their classes, and the policy that
orders ready buffers; the C++ RingAllreduceJob (ns3-modules/) replays that
plan and records what happened. `simulate` is its no-contention model, the
oracle of the ns-3 job at zero background load and a fast estimator for the
grid. All times of the model are in milliseconds. Its semantics are exactly
what the ns-3 application implements; change both together.

Workers are identical and the network has no contention, so one worker's
compute timeline and one job-wide allreduce "link" describe the whole job.

Compute (one worker, strictly sequential)
    Iteration k runs forward of layers 0..L-1, then backward L-1..0.  Backward
    of layer L-1 starts when forward of L-1 ends; backward of i-1 starts when
    backward of i ends.
    Iteration 0 starts at t = 0 with no waits.  In iteration k > 0, forward of
    layer i starts at
        max(end of forward i-1 in iteration k   [for i = 0: end of backward of
                                                  layer 0 in iteration k-1],
            time layer i's gradients of iteration k-1 finished synchronising).
    With ``barrier=True`` forward of layer 0 additionally waits until ALL
    gradients of iteration k-1 are synchronised.

Tensor fusion (``harness.traffic.fusion.fuse``)
    After backward of layer i its gradients join the open fusion buffer.  The
    buffer is closed right after layer i when i == 0 or when the next layer
    would overflow it (open bytes + P_{i-1} > fusion_buffer); at that instant
    it is appended to the job's transmission queue (its ``ready`` time).
    Default fusion buffer: largest layer + 1 byte.  A layer is never split.

Transmission queue (one allreduce at a time per job, no preemption)
    Whenever the link is free and the queue is non-empty the next buffer is
    started at once.  A buffer whose ready time equals the instant the link
    frees is already in the queue.
    ``fifo``: oldest closed buffer first.  ``priority``: lowest priority value
    (= lowest layer index the buffer holds) first; ties (same layer from
    different iterations) go to the older buffer.

Ring allreduce of a buffer of S bytes over N workers
    Split into N partitions of S // N bytes, the first S % N of them one byte
    larger.  2(N-1) steps; every step takes
        largest_partition * 8 / (link_bps * payload_efficiency) + step_latency_s
    so the allreduce takes 2(N-1) times that.  With payload_efficiency = 1,
    step_latency_s = 0 and S divisible by N this is the ideal
    2(1-1/N) * S * 8 / link_bps.  A layer's gradients are synchronised when
    the allreduce of the buffer holding it finishes.

Iteration time
    Iteration time k = start of forward layer 0 in iteration k+1 minus start
    of forward layer 0 in iteration k.  ``iterations + 1`` forward starts are
    simulated so that ``iterations`` full iteration times are returned.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import Field

from harness.traffic import fusion, profiles, schedulers
from harness.config.errors import ConfigError
from harness.io.recipe_tokens import token_list
from harness.config.schema.base import Int, Toml
from harness.config.schema.training import TrainingConfig
from harness.training.common import (AnalyticResult, Architecture, JobPlan, JobTables,
                                     allreduce_ms, deadline_lines, deadline_tos, forward_spans,
                                     layer_lines, load, recipe_attribute, recipe_scheduler,
                                     read_csv, scaled_bytes)
from harness.config.units import INT64_MAX


class RingSettings(TrainingConfig):
    """A ring-allreduce job's settings: the common ones and its own (a
    parameter server's are refused: an unknown key here)."""

    architecture: Literal["ring"] = Field("ring", description=(
        "the job's architecture, one of `harness list`'s (this one: ring allreduce)"))
    fusion_buffer: Annotated[Optional[Int(1, INT64_MAX)], Toml(default="largest layer + 1")] = \
        Field(None, description="ring: tensor-fusion buffer, bytes")


@dataclass(frozen=True)
class RingPlan(JobPlan):
    fusion_buffer: int = 0                 # bytes (tensor fusion)
    partition: int | None = None           # bytes: layers cut into partitions, no fusion
    buffers: tuple[fusion.Buffer, ...] = ()  # what the ring allreduces, in closing order

    def resolved(self) -> dict[str, Any]:
        return {**super().resolved(), "fusion_buffer": self.fusion_buffer}


class Ring(Architecture):
    name = "ring"
    summary = "ring-allreduce"
    job_type = "ns3::RingAllreduceJob"
    settings = RingSettings
    unsupported_hint = 'needs a parameter-server job (training.architecture = "ps")'
    plan_keys = {"fusion_buffer": 0}

    def supports(self, policy: schedulers.Policy) -> bool:
        return policy.rings

    def check(self, cfg, given: dict[str, Any]) -> dict[str, Any]:
        values = schedulers.resolve(self.policy(cfg.policy).name, given,
                                    adjust=_one_partition_in_flight)
        if cfg.fusion_buffer is not None and schedulers.chunk_bytes(cfg.policy, values):
            raise ConfigError("training.fusion_buffer", f"policy {cfg.policy!r} cuts layers "
                              "into partitions instead of fusing them; leave it out")
        return values

    def scaled(self, cfg, k: int) -> dict[str, Any]:
        return {"fusion_buffer": scaled_bytes(cfg.fusion_buffer, k)}

    def place(self, cfg, topo, classes, hosts, tos, scale) -> RingPlan:
        link_bps = min(topo.host_link(h).rate_bps for h in hosts)

        def network_ms(model_bytes: float) -> float:
            return profiles.network_time_ms(model_bytes, len(hosts), link_bps)

        profile = load(cfg, network_ms, scale)
        fused_bytes = fusion_buffer(cfg, profile)
        partition = schedulers.chunk_bytes(cfg.policy, cfg.scheduler_params)
        buffers = tuple(fusion.partition(profile, partition) if partition
                        else fusion.fuse(profile, fused_bytes))
        small = min(buffers, key=lambda b: b.bytes)
        if small.bytes < len(hosts):
            field = "training.scheduler.partition" if partition else "training.profile"
            raise ConfigError(field, f"buffer of layers {small.label} has {small.bytes} B, "
                              f"fewer than the {len(hosts)} workers: the ring would send "
                              "empty partitions")
        return RingPlan(cfg, hosts, tos, profile, link_bps, (cfg.port, cfg.port),
                        network_ms(profile.model_bytes), deadline_tos=deadline_tos(cfg, classes),
                        fusion_buffer=fused_bytes, partition=partition, buffers=buffers)

    def no_contention(self, job: RingPlan, iterations: int) -> AnalyticResult:
        cfg = job.config
        return simulate(job.profile, len(job.hosts), job.link_bps, iterations=iterations,
                        queue=schedulers.POLICIES[cfg.policy].order, barrier=cfg.barrier,
                        fusion_buffer=job.fusion_buffer, partition_bytes=job.partition)

    def bytes_per_iteration(self, job: RingPlan) -> float:
        # each worker sends 2(N-1)/N of the model
        return 2 * (len(job.hosts) - 1) * job.profile.model_bytes

    def recipe(self, job: RingPlan, ack_tos: int) -> list[str]:
        """A RingAllreduceJob with rank r on hosts[r], its buffers as planned."""
        cfg = job.config
        return [self.job_line(), *layer_lines(job),
                "job-buffers " + " ".join(token_list(v) for v in buffer_arguments(job.buffers)),
                recipe_scheduler("push", *schedulers.attributes(
                    cfg.policy, cfg.scheduler_params, "push", job.link_bps)),
                recipe_attribute("Barrier", "true" if cfg.barrier else "false"),
                recipe_attribute("Port", str(cfg.port)),
                recipe_attribute("AckTos", str(ack_tos)),
                *deadline_lines(job),
                f"job-install {token_list(job.hosts)}"]

    def collect(self, ns_job, job: RingPlan, tos_class: dict[int, str]) -> JobTables:
        # each partition row carries the class it was sent in (its buffer's,
        # or the deadline class once raised)
        transfers = read_csv(ns_job.TransfersCsv())
        return JobTables(iterations=read_csv(ns_job.IterationsCsv()),
                         transfers=transfers.assign(traffic_class=transfers["tos"].map(tos_class)),
                         compute=read_csv(ns_job.ComputeCsv()),
                         errors=str(ns_job.GetErrors()))


def _one_partition_in_flight(values: dict, given: dict, where: str) -> None:
    """A ring runs one allreduce at a time: the credit is one partition."""
    if "credit" in values:
        if "credit" not in given:
            values["credit"] = values["partition"]
        elif values["credit"] != values["partition"]:
            raise ConfigError(f"{where}.credit", "a ring-allreduce job runs one allreduce at "
                              "a time: the credit is one partition (leave credit out)")


def buffer_arguments(buffers) -> tuple[list[int], list[int], list[int]]:
    """(first layer, last layer, bytes) of each buffer, as
    RingAllreduceHelper::SetBuffers takes them. No class: the C++ job sends a
    buffer in the class of its lowest layer (the most urgent it holds), from
    the per-layer classes of `job-layer-classes`."""
    return ([b.layers[0] for b in buffers], [b.layers[-1] for b in buffers],
            [b.bytes for b in buffers])


def fusion_buffer(cfg, profile: profiles.Profile) -> int:
    """The job's fusion buffer in bytes, checked against the profile's layers."""
    if cfg.fusion_buffer is None:
        return fusion.fusion_buffer_bytes(profile)
    try:
        fusion.check_fits(profile, cfg.fusion_buffer)
    except profiles.ProfileError as e:
        raise ConfigError("training.fusion_buffer", str(e)) from None
    return cfg.fusion_buffer


# --------------------------------------------------------------------------
# the no-contention model

#: Transmission-queue policies the model (and the ns-3 app) implement.
QUEUE_POLICIES: tuple[str, ...] = ("fifo", "priority")


def _check_args(
    profile, n_workers, link_bps, iterations, queue, barrier, fusion_buffer,
    payload_efficiency, step_latency_s,
) -> int:
    if not isinstance(profile, profiles.Profile):
        raise ValueError(f"profile must be a harness.traffic.profiles.Profile (got {type(profile).__name__})")
    if isinstance(n_workers, bool) or int(n_workers) != n_workers or n_workers < 2:
        raise ValueError(f"n_workers must be an integer >= 2 (got {n_workers!r})")
    if not (isinstance(link_bps, (int, float, np.number)) and math.isfinite(link_bps) and link_bps > 0):
        raise ValueError(f"link_bps must be a finite number > 0 (got {link_bps!r})")
    if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1 (got {iterations!r})")
    if queue not in QUEUE_POLICIES:
        raise ValueError(f"queue must be one of {list(QUEUE_POLICIES)} (got {queue!r})")
    if not isinstance(barrier, (bool, np.bool_)):
        raise ValueError(f"barrier must be True or False (got {barrier!r})")
    if not (isinstance(payload_efficiency, (int, float, np.number))
            and 0 < payload_efficiency <= 1):
        raise ValueError(f"payload_efficiency must be in (0, 1] (got {payload_efficiency!r})")
    if not (isinstance(step_latency_s, (int, float, np.number))
            and math.isfinite(step_latency_s) and step_latency_s >= 0):
        raise ValueError(f"step_latency_s must be a finite number >= 0 (got {step_latency_s!r})")
    fb = fusion.fusion_buffer_bytes(profile) if fusion_buffer is None else fusion_buffer
    try:
        fusion.check_fits(profile, fb)
    except profiles.ProfileError as e:
        raise ValueError(f"fusion_buffer: {e}") from None
    return int(fb)


def simulate(
    profile: profiles.Profile,
    n_workers: int,
    link_bps: float,
    iterations: int = 10,
    queue: str = "fifo",
    barrier: bool = False,
    fusion_buffer: int | None = None,
    payload_efficiency: float = 1.0,
    step_latency_s: float = 0.0,
    partition_bytes: int | None = None,
) -> AnalyticResult:
    """Simulate ``iterations`` training iterations without contention (see
    module doc). ``partition_bytes``: ByteScheduler on the ring -- no fusion,
    each layer cut into partitions (``fusion.partition``), each allreduced
    on its own; a layer is synchronised when its last partition is."""
    fb = _check_args(profile, n_workers, link_bps, iterations, queue, barrier,
                     fusion_buffer, payload_efficiency, step_latency_s)
    n_workers = int(n_workers)
    iterations = int(iterations)
    buffers = (fusion.partition(profile, partition_bytes) if partition_bytes
               else fusion.fuse(profile, fb))
    ar_ms = [allreduce_ms(b.bytes, n_workers, link_bps, payload_efficiency, step_latency_s)
             for b in buffers]
    starts, compute, transfers = _iterations(profile, buffers, ar_ms, iterations,
                                             queue == "priority", barrier)
    return AnalyticResult(
        iteration_ms=np.diff(starts),
        timeline=_timeline_table(buffers, transfers),
        compute=_compute_table(compute),
        iteration_start_ms=starts,
        buffers=tuple(buffers),
        params=dict(
            profile=profile.name, n_workers=n_workers, link_bps=float(link_bps),
            iterations=iterations, queue=queue, barrier=bool(barrier),
            fusion_buffer=fb, payload_efficiency=float(payload_efficiency),
            step_latency_s=float(step_latency_s), partition_bytes=partition_bytes,
        ),
    )


def _iterations(profile: profiles.Profile, buffers, ar_ms: list[float], iterations: int,
                priority: bool, barrier: bool) -> tuple[np.ndarray, list[tuple], list[tuple]]:
    """The model's iterations, one after the other: (the start of each and of
    the one after the last, the compute rows, the allreduce rows)."""
    n_layers = profile.n_layers
    # layer -> its buffers; a buffer closes after backward of its last (lowest) layer
    layer_bufs: list[list[int]] = [[] for _ in range(n_layers)]
    closes_after: dict[int, list[int]] = {}
    for b in buffers:
        for layer in b.layers:
            layer_bufs[layer].append(b.index)
        closes_after.setdefault(b.layers[-1], []).append(b.index)
    compute: list[tuple] = []     # (iteration, layer, phase, start, end)
    transfers: list[tuple] = []   # (iteration, buffer, ready, start, end)
    starts = np.empty(iterations + 1)
    sync_prev: list[float] | None = None  # per layer, sync time in previous iteration
    all_synced_prev = 0.0
    t = 0.0  # worker compute free (end of backward of layer 0)
    link_free = 0.0
    seq = 0  # global closing order, for fifo and tie-breaking
    for k in range(iterations + 1):
        if sync_prev is None:
            t0 = 0.0
        else:
            t0 = max(t, sync_prev[0])
            if barrier:
                t0 = max(t0, all_synced_prev)
        starts[k] = t0
        if k == iterations:
            break
        ready, t = _compute(k, t0, profile, sync_prev, closes_after, len(buffers), compute)
        end_of, link_free, seq = _allreduce(k, buffers, ar_ms, ready, link_free, seq,
                                            priority, transfers)
        sync_prev = [max(end_of[b] for b in layer_bufs[i]) for i in range(n_layers)]
        all_synced_prev = max(end_of)
    return starts, compute, transfers


def _compute(k: int, t0: float, profile: profiles.Profile, sync_prev: list[float] | None,
             closes_after: dict[int, list[int]], n_buffers: int,
             rows: list[tuple]) -> tuple[list[float], float]:
    """Forward then backward of iteration k from t0, each layer's row added
    to `rows`: (when each buffer is ready, the end of backward)."""
    cur = t0
    for i, (s, e) in enumerate(forward_spans(t0, profile.fp_ms, sync_prev)):
        rows.append((k, i, "fp", s, e))
        cur = e
    ready = [0.0] * n_buffers
    for i in range(profile.n_layers - 1, -1, -1):
        e = cur + profile.bp_ms[i]
        rows.append((k, i, "bp", cur, e))
        cur = e
        for bi in closes_after.get(i, ()):
            ready[bi] = cur
    return ready, cur


def _allreduce(k: int, buffers, ar_ms: list[float], ready: list[float], link_free: float,
               seq: int, priority: bool, rows: list[tuple]) -> tuple[list[float], float, int]:
    """Iteration k's allreduces, each buffer's row added to `rows`: (when each
    ends, when the network is free again, the closing order's next number).

    The network is a single non-preemptive server. All buffers of iteration
    k-1 are synchronised before the first buffer of iteration k closes
    (forward of L-1 waited for every layer's sync), so each iteration's
    buffers are scheduled on their own, continuing from link_free."""
    nb = len(buffers)
    end_of = [0.0] * nb
    heap: list[tuple] = []
    nxt = 0  # buffers close in index order
    done = 0
    while done < nb:
        if not heap:
            link_free = max(link_free, ready[nxt])
        while nxt < nb and ready[nxt] <= link_free:
            key = (buffers[nxt].priority, seq) if priority else (seq,)
            heapq.heappush(heap, (key, nxt))
            seq += 1
            nxt += 1
        _, bi = heapq.heappop(heap)
        s = link_free
        e = s + ar_ms[bi]
        end_of[bi] = e
        rows.append((k, bi, ready[bi], s, e))
        link_free = e
        done += 1
    return end_of, link_free, seq


def _timeline_table(buffers, rows: list[tuple]):
    """The allreduce rows (_allreduce) as the timeline: one row per buffer and iteration."""
    import pandas as pd

    return pd.DataFrame(
        {
            "iteration": np.asarray([r[0] for r in rows], dtype=np.int64),
            "buffer": np.asarray([r[1] for r in rows], dtype=np.int64),
            "layers": [buffers[r[1]].label for r in rows],
            "bytes": np.asarray([buffers[r[1]].bytes for r in rows], dtype=np.int64),
            "priority": np.asarray([buffers[r[1]].priority for r in rows], dtype=np.int64),
            "ready_ms": np.asarray([r[2] for r in rows], dtype=float),
            "start_ms": np.asarray([r[3] for r in rows], dtype=float),
            "end_ms": np.asarray([r[4] for r in rows], dtype=float),
        }
    )


def _compute_table(rows: list[tuple]):
    """The compute rows (_compute) as a table: one row per layer, phase and iteration."""
    import pandas as pd

    return pd.DataFrame(
        {
            "iteration": np.asarray([r[0] for r in rows], dtype=np.int64),
            "layer": np.asarray([r[1] for r in rows], dtype=np.int64),
            "phase": [r[2] for r in rows],
            "start_ms": np.asarray([r[3] for r in rows], dtype=float),
            "end_ms": np.asarray([r[4] for r in rows], dtype=float),
        }
    )


ARCHITECTURE = Ring()
