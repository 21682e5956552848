"""No-contention reference model of one ring-allreduce training job.

A pure-Python event-driven model of the same job the ns-3 application runs.
It is the oracle for the ns-3 model at zero background load and a fast
estimator for the grid.  All times are in milliseconds.  The semantics below
are exactly what the ns-3 application (ns3-modules/) implements; change both
together.

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

Tensor fusion (``harness.traffic.profiles.fuse``)
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
from typing import Callable
from dataclasses import dataclass, field

import numpy as np

from harness.traffic.profiles import (Buffer, Profile, ProfileError, check_fits, fuse, fusion_buffer_bytes,
                       partition)

__all__ = ["AnalyticResult", "QUEUE_POLICIES", "allreduce_ms", "simulate", "simulate_ps"]

#: Transmission-queue policies the model (and the ns-3 app) implement.
QUEUE_POLICIES: tuple[str, ...] = ("fifo", "priority")


def allreduce_ms(
    size_bytes: int,
    n_workers: int,
    link_bps: float,
    payload_efficiency: float = 1.0,
    step_latency_s: float = 0.0,
) -> float:
    """Ring-allreduce time (ms) of one buffer of ``size_bytes`` (see module doc)."""
    largest = size_bytes // n_workers + (1 if size_bytes % n_workers else 0)
    step_s = largest * 8.0 / (link_bps * payload_efficiency) + step_latency_s
    return 2 * (n_workers - 1) * step_s * 1e3


@dataclass
class AnalyticResult:
    """Result of ``simulate``; all times in milliseconds.

    ``iteration_ms``: iteration times (length ``iterations``).
    ``iteration_start_ms``: start of forward layer 0, length ``iterations + 1``.
    ``timeline``: one row per (iteration, buffer): iteration, buffer, layers,
    bytes, priority, ready_ms, start_ms, end_ms.
    ``compute``: one row per (iteration, layer, phase): iteration, layer,
    phase ("fp"/"bp"), start_ms, end_ms.
    """

    iteration_ms: np.ndarray
    timeline: "object"  # pandas.DataFrame
    compute: "object"  # pandas.DataFrame
    iteration_start_ms: np.ndarray = field(default_factory=lambda: np.zeros(0))
    buffers: tuple[Buffer, ...] = ()
    params: dict = field(default_factory=dict)

    @property
    def mean_iteration_ms(self) -> float:
        return float(np.mean(self.iteration_ms))


def _check_args(
    profile, n_workers, link_bps, iterations, queue, barrier, fusion_buffer,
    payload_efficiency, step_latency_s,
) -> int:
    if not isinstance(profile, Profile):
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
    fb = fusion_buffer_bytes(profile) if fusion_buffer is None else fusion_buffer
    try:
        check_fits(profile, fb)
    except ProfileError as e:
        raise ValueError(f"fusion_buffer: {e}") from None
    return int(fb)


def _forward(t0: float, fp_ms, sync_prev: list[float] | None) -> list[tuple[float, float]]:
    """(start, end) of each layer's forward pass from t0: layer i waits for
    forward of i-1 and, after iteration 0, for its parameters (sync_prev[i])."""
    spans = []
    cur = t0
    for i, f in enumerate(fp_ms):
        start = cur if (sync_prev is None or i == 0) else max(cur, sync_prev[i])
        cur = start + f
        spans.append((start, cur))
    return spans


def simulate(
    profile: Profile,
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
    each layer cut into partitions (``profiles.partition``), each allreduced
    on its own; a layer is synchronised when its last partition is."""
    fb = _check_args(profile, n_workers, link_bps, iterations, queue, barrier,
                     fusion_buffer, payload_efficiency, step_latency_s)
    n_workers = int(n_workers)
    iterations = int(iterations)
    L = profile.n_layers
    F = profile.fp_ms
    B = profile.bp_ms
    buffers = partition(profile, partition_bytes) if partition_bytes else fuse(profile, fb)
    nb = len(buffers)
    # layer -> its buffers; a buffer closes after backward of its last (lowest) layer
    layer_bufs: list[list[int]] = [[] for _ in range(L)]
    closes_after: dict[int, list[int]] = {}
    for b in buffers:
        for layer in b.layers:
            layer_bufs[layer].append(b.index)
        closes_after.setdefault(b.layers[-1], []).append(b.index)
    ar_ms = [allreduce_ms(b.bytes, n_workers, link_bps, payload_efficiency, step_latency_s)
             for b in buffers]
    prio_policy = queue == "priority"

    # timeline rows, flattened
    tl_iter: list[int] = []
    tl_buf: list[int] = []
    tl_ready: list[float] = []
    tl_start: list[float] = []
    tl_end: list[float] = []
    # compute rows
    c_iter: list[int] = []
    c_layer: list[int] = []
    c_phase: list[str] = []
    c_start: list[float] = []
    c_end: list[float] = []

    starts = np.empty(iterations + 1)
    sync_prev: list[float] | None = None  # per layer, sync time in previous iteration
    all_synced_prev = 0.0
    t = 0.0  # worker compute free (end of backward of layer 0)
    link_free = 0.0
    seq = 0  # global closing order, for fifo and tie-breaking

    for k in range(iterations + 1):
        # ---- forward
        if sync_prev is None:
            t0 = 0.0
        else:
            t0 = max(t, sync_prev[0])
            if barrier:
                t0 = max(t0, all_synced_prev)
        starts[k] = t0
        if k == iterations:
            break
        cur = t0
        for i, (s, e) in enumerate(_forward(t0, F, sync_prev)):
            c_iter.append(k); c_layer.append(i); c_phase.append("fp")
            c_start.append(s); c_end.append(e)
            cur = e
        # ---- backward: buffer ready times
        ready = [0.0] * nb
        for i in range(L - 1, -1, -1):
            e = cur + B[i]
            c_iter.append(k); c_layer.append(i); c_phase.append("bp")
            c_start.append(cur); c_end.append(e)
            cur = e
            for bi in closes_after.get(i, ()):
                ready[bi] = cur
        t = cur
        # ---- network: single non-preemptive server.  All buffers of iteration
        # k-1 are synchronised before the first buffer of iteration k closes
        # (forward of L-1 waited for every layer's sync), so each iteration's
        # buffers are scheduled on their own, continuing from link_free.
        end_of = [0.0] * nb
        heap: list[tuple] = []
        nxt = 0  # buffers close in index order
        done = 0
        while done < nb:
            if not heap:
                link_free = max(link_free, ready[nxt])
            while nxt < nb and ready[nxt] <= link_free:
                key = (buffers[nxt].priority, seq) if prio_policy else (seq,)
                heapq.heappush(heap, (key, nxt))
                seq += 1
                nxt += 1
            _, bi = heapq.heappop(heap)
            s = link_free
            e = s + ar_ms[bi]
            end_of[bi] = e
            tl_iter.append(k); tl_buf.append(bi)
            tl_ready.append(ready[bi]); tl_start.append(s); tl_end.append(e)
            link_free = e
            done += 1
        sync_prev = [max(end_of[b] for b in layer_bufs[i]) for i in range(L)]
        all_synced_prev = max(end_of)

    iteration_ms = np.diff(starts)

    import pandas as pd

    timeline = pd.DataFrame(
        {
            "iteration": np.asarray(tl_iter, dtype=np.int64),
            "buffer": np.asarray(tl_buf, dtype=np.int64),
            "layers": [buffers[b].label for b in tl_buf],
            "bytes": np.asarray([buffers[b].bytes for b in tl_buf], dtype=np.int64),
            "priority": np.asarray([buffers[b].priority for b in tl_buf], dtype=np.int64),
            "ready_ms": np.asarray(tl_ready, dtype=float),
            "start_ms": np.asarray(tl_start, dtype=float),
            "end_ms": np.asarray(tl_end, dtype=float),
        }
    )
    compute = pd.DataFrame(
        {
            "iteration": np.asarray(c_iter, dtype=np.int64),
            "layer": np.asarray(c_layer, dtype=np.int64),
            "phase": c_phase,
            "start_ms": np.asarray(c_start, dtype=float),
            "end_ms": np.asarray(c_end, dtype=float),
        }
    )
    return AnalyticResult(
        iteration_ms=iteration_ms,
        timeline=timeline,
        compute=compute,
        iteration_start_ms=starts,
        buffers=tuple(buffers),
        params=dict(
            profile=profile.name, n_workers=n_workers, link_bps=float(link_bps),
            iterations=iterations, queue=queue, barrier=bool(barrier),
            fusion_buffer=fb, payload_efficiency=float(payload_efficiency),
            step_latency_s=float(step_latency_s), partition_bytes=partition_bytes,
        ),
    )


def leftover_rate_slowdown(profile: Profile, n_workers: int, link_bps: float,
                           background_load: float, iterations: int = 6,
                           model: Callable[..., AnalyticResult] | None = None,
                           **kwargs) -> float:
    """Fluid estimate of what strict low priority costs training: the job gets
    only the capacity the background leaves, link_bps x (1 - load), instead
    of the whole link. Returns the relative change of the steady-state
    iteration time (0.05 = 5 % slower). It ignores burstiness, so it is a
    lower bound: the background's large flows starve the low band for whole
    flow times, and TCP needs time to come back. `model`: ``simulate``
    (default, ring) or ``simulate_ps`` (kwargs: its other arguments)."""
    if not 0 <= background_load < 1:
        raise ValueError(f"background_load must be in [0, 1) (got {background_load!r})")
    model = model or simulate

    def steady(rate: float) -> float:
        return float(model(profile, n_workers, rate, iterations=iterations, **kwargs)
                     .iteration_ms[1:].mean())

    return steady(link_bps * (1 - background_load)) / steady(link_bps) - 1


# ------------------------------------------------------------------ parameter servers


def simulate_ps(
    profile: Profile,
    n_workers: int,
    link_bps: float,
    tensor_shards: tuple[int, ...],
    colocated: tuple[bool, ...] = (),
    iterations: int = 10,
    barrier: bool = False,
    aggregation_bytes: int = 0,
    pull_barrier: bool = False,
    pull_order: str = "aggregated",
) -> AnalyticResult:
    """No-contention model of a parameter-server job under the fifo policy
    (docs/model/training.md). Compute is as in ``simulate``; tensor i (= layer i) is
    pushed when backward of i ends.

    Each shard k has two links, each a FIFO server at ``link_bps``: in, which
    carries the W' remote workers' pushes of its tensors (W' x P_i, the
    W-to-1 incast), and out, which carries the pulls (1-to-W fan-out). W' = W,
    or W - 1 when shard k is co-located with a worker (``colocated[k]``):
    the local copy takes no time. Every worker's own links carry P_i per
    tensor and are never the bottleneck while W' >= number of shards, which
    the model assumes (the busiest shard link is the bottleneck).

    Push of i occupies shard-in from max(ready_i, in free); aggregation
    completes when it ends. Pull of i occupies shard-out from max(aggregated,
    out free) for W' x P_i. With ``aggregation_bytes`` > 0 the pull may start
    once the first unit of the push arrived and ends no earlier than one unit
    after the push. Layer i is synchronised at the end of its pull.
    Propagation delay and TCP's ramp-up are not modelled.

    With ``pull_barrier`` (TensorFlow's synchronous PS) every pull of an
    iteration waits until the last push of that iteration has ended, on every
    shard, and the pulls leave each shard in ``pull_order``: "aggregated" (the
    order their pushes ended: back layers first; fifo) or "front" (front
    layers first: tictac).
    """
    if pull_order not in ("aggregated", "front"):
        raise ValueError(f"pull_order must be 'aggregated' or 'front', got {pull_order!r}")
    n_layers = profile.n_layers
    if len(tensor_shards) != n_layers:
        raise ValueError(f"tensor_shards has {len(tensor_shards)} entries for {n_layers} tensors")
    n_shards = max(tensor_shards) + 1
    colocated = tuple(colocated) or (False,) * n_shards
    F, B, P = profile.fp_ms, profile.bp_ms, profile.layer_bytes
    ms_per_byte = 8e3 / link_bps
    remote = [n_workers - (1 if colocated[k] else 0) for k in range(n_shards)]
    in_free = [0.0] * n_shards
    out_free = [0.0] * n_shards
    starts = np.empty(iterations + 1)
    sync_prev: list[float] | None = None
    t = 0.0
    rows = []
    for k in range(iterations + 1):
        t0 = 0.0 if sync_prev is None else max(t, sync_prev[0],
                                                max(sync_prev) if barrier else 0.0)
        starts[k] = t0
        if k == iterations:
            break
        cur = _forward(t0, F, sync_prev)[-1][1]
        sync = [0.0] * n_layers
        for i in range(n_layers - 1, -1, -1):  # backward; tensors leave in this order
            cur += B[i]
            shard, w = tensor_shards[i], remote[tensor_shards[i]]
            push_start = max(cur, in_free[shard])
            push_end = push_start + w * P[i] * ms_per_byte
            in_free[shard] = push_end
            if aggregation_bytes:
                unit = min(aggregation_bytes, P[i]) * w * ms_per_byte
                pull_start = max(push_start + unit, out_free[shard])
                pull_end = max(pull_start + w * P[i] * ms_per_byte, push_end + unit)
            else:
                pull_start = max(push_end, out_free[shard])
                pull_end = pull_start + w * P[i] * ms_per_byte
            if not pull_barrier:
                out_free[shard] = pull_end
            sync[i] = pull_end if w > 0 else cur
            rows.append([k, i, P[i], shard, cur, push_start, push_end, pull_start, pull_end])
        if pull_barrier:
            released = max(r[6] for r in rows[-n_layers:])
            order = rows[-n_layers:] if pull_order == "aggregated" else rows[-n_layers:][::-1]
            for r in order:
                i, shard = r[1], r[3]
                w = remote[shard]
                r[7] = max(released, out_free[shard])
                r[8] = out_free[shard] = r[7] + w * P[i] * ms_per_byte
                sync[i] = r[8] if w > 0 else r[4]
        t = cur
        sync_prev = sync

    import pandas as pd

    timeline = pd.DataFrame(rows, columns=["iteration", "tensor", "bytes", "shard", "ready_ms",
                                           "push_start_ms", "push_end_ms", "pull_start_ms",
                                           "pull_end_ms"])
    return AnalyticResult(
        iteration_ms=np.diff(starts), timeline=timeline, compute=pd.DataFrame(),
        iteration_start_ms=starts,
        params=dict(profile=profile.name, n_workers=int(n_workers), link_bps=float(link_bps),
                    shards=n_shards, iterations=iterations, barrier=bool(barrier),
                    aggregation_bytes=int(aggregation_bytes), pull_barrier=bool(pull_barrier),
                    pull_order=pull_order))
