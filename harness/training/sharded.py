"""Sharded data-parallel jobs (FSDP / ZeRO-3 style) as a training plug-in
(docs/model/sharded.md).

Every worker holds 1/N of the parameters. The layers are cut into groups of
consecutive layers (FSDP's units); an iteration computes forward of groups
0..G-1 and backward of G-1..0, each phase after an all-gather of its group's
parameters (the backward ones only with `reshard_after_forward`), and
reduce-scatters each group's gradients after its backward. Python plans the
groups; the C++ ShardedJob (ns3-modules/jobs/sharded-*.{h,cc}) replays the
plan and records what happened. `simulate_sharded` is its no-contention
model, the oracle of the ns-3 job at zero background load."""

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
from harness.config.schema.base import Bool, Int, Toml
from harness.config.schema.training import TrainingConfig
from harness.training.common import (AnalyticResult, Architecture, JobPlan, JobTables,
                                     allreduce_ms, layer_lines, load, recipe_attribute, read_csv,
                                     scaled_bytes)
from harness.config.units import INT64_MAX

UINT32_MAX = 2**32 - 1


class ShardedSettings(TrainingConfig):
    """A sharded data-parallel job's settings: the common ones and its own (a
    ring's fusion_buffer or a parameter server's servers are refused: an
    unknown key here)."""

    architecture: Literal["sharded"] = Field(description=(
        "the job's architecture, one of `harness list`'s (this one: sharded data "
        "parallel, FSDP / ZeRO-3)"))
    group_bytes: Annotated[Optional[Int(1, INT64_MAX)], Toml(default="largest layer + 1")] = \
        Field(None, description=(
            "sharded: size of a layer group (FSDP unit), bytes: consecutive layers up to it "
            "are gathered together (a larger layer is a group of its own)"))
    prefetch_depth: Int(0, UINT32_MAX) = Field(0, description=(
        "sharded: compute phases the all-gathers may run ahead (0 = gather a group when its "
        "compute is due)"))
    reshard_after_forward: Bool = Field(True, description=(
        "sharded: free the gathered parameters after forward and all-gather them again "
        "before backward (FSDP's default, ZeRO-3)"))


@dataclass(frozen=True)
class Group:
    """Layers first..last (forward order) gathered and reduced together."""

    index: int
    first: int
    last: int
    bytes: int

    @property
    def label(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def make_groups(profile: profiles.Profile, group_bytes: int) -> tuple[Group, ...]:
    """Consecutive layers from layer 0, a group closed before the layer that
    would take it over `group_bytes`; a layer never split (a larger one is a
    group of its own)."""
    groups: list[Group] = []
    first, size = 0, 0
    for layer, b in enumerate(profile.layer_bytes):
        if layer > first and size + b > group_bytes:
            groups.append(Group(len(groups), first, layer - 1, size))
            first, size = layer, 0
        size += b
    groups.append(Group(len(groups), first, profile.n_layers - 1, size))
    return tuple(groups)


def network_time_ms(model_bytes: float, n_workers: int, link_bps: float,
                    reshard: bool = True) -> float:
    """The job's communication per iteration at line rate: an all-gather of
    the model in forward, another in backward with `reshard`, and a
    reduce-scatter, each (1 - 1/N) M; the sharded analogue of the ring's
    2(1-1/N)M (for the compute-to-network ratio R)."""
    return (3 if reshard else 2) * (1 - 1 / n_workers) * model_bytes * 8 / link_bps * 1e3


def collective_ms(size_bytes: int, n_workers: int, link_bps: float,
                  payload_efficiency: float = 1.0, step_latency_s: float = 0.0) -> float:
    """A ring all-gather or reduce-scatter of `size_bytes` (ms): N-1 steps, each
    the largest partition (S//N, the first S%N one byte larger) at the link's
    payload rate plus the step latency; half a ring allreduce
    (harness.training.common.allreduce_ms)."""
    return allreduce_ms(size_bytes, n_workers, link_bps, payload_efficiency,
                        step_latency_s) / 2


def simulate_sharded(
    profile: profiles.Profile,
    n_workers: int,
    link_bps: float,
    groups: tuple[Group, ...],
    prefetch_depth: int = 0,
    reshard: bool = True,
    iterations: int = 10,
    payload_efficiency: float = 1.0,
    step_latency_s: float = 0.0,
) -> AnalyticResult:
    """No-contention model of a sharded job: one worker's compute and the
    job's one ring (workers are identical). All times in ms. The ns-3 job
    (ns3-modules/jobs/sharded-job.h) implements exactly this; change both
    together.

    Phases: iteration k is 2G phases, forward of groups 0..G-1 (p = g), then
    backward of G-1..0 (p = 2G-1-g); a phase computes its group's layers back
    to back (the profile's fp / bp times). Phase p gathers when p < G, or
    with `reshard`.

    Issue: phase q is *due* when phase q-1 ends (q = 0: when the iteration
    starts). Then the all-gathers of the gathering phases up to q +
    `prefetch_depth` not issued yet are issued. When backward of group g ends,
    its reduce-scatter is issued.

    Compute: a due phase starts once its all-gather (if any) has finished.

    The ring: one collective at a time, non-preemptive; when it frees, the
    issued collective first issued (ties: all-gather before reduce-scatter,
    then iteration, then phase order) starts; a collective issued at the
    instant the ring frees is already queued. A collective of S bytes takes
    ``collective_ms``: (N-1) steps of ceil(S/N) bytes.

    Iteration k+1 starts when every reduce-scatter of iteration k has
    finished (the optimizer step is local and free). Iteration 0 starts at 0.
    Iteration time k = start of k+1 - start of k (``iterations`` of them).
    """
    _check_sharded(profile, n_workers, link_bps, groups, prefetch_depth, iterations)
    coll = [collective_ms(g.bytes, int(n_workers), link_bps, payload_efficiency,
                          step_latency_s) for g in groups]
    model = _ShardedModel(profile, groups, coll, prefetch_depth, reshard, iterations)
    model.run()

    import pandas as pd

    starts_ms = np.asarray(model.starts[:iterations + 1])
    return AnalyticResult(
        iteration_ms=np.diff(starts_ms),
        timeline=pd.DataFrame(model.timeline, columns=[
            "iteration", "buffer", "kind", "group", "layers", "bytes", "ready_ms", "start_ms",
            "end_ms"]),
        compute=pd.DataFrame(model.compute, columns=["iteration", "group", "phase", "start_ms",
                                                     "end_ms"]),
        iteration_start_ms=starts_ms,
        params=dict(profile=profile.name, n_workers=int(n_workers), link_bps=float(link_bps),
                    groups=[g.label for g in groups], prefetch_depth=int(prefetch_depth),
                    reshard=bool(reshard), iterations=int(iterations),
                    payload_efficiency=float(payload_efficiency),
                    step_latency_s=float(step_latency_s)))


def _check_sharded(profile: profiles.Profile, n_workers: int, link_bps: float,
                   groups: tuple[Group, ...], prefetch_depth: int, iterations: int) -> None:
    """simulate_sharded's arguments, checked (ValueError naming the one that is wrong)."""
    if int(n_workers) != n_workers or n_workers < 2:
        raise ValueError(f"n_workers must be an integer >= 2 (got {n_workers!r})")
    if not (math.isfinite(link_bps) and link_bps > 0):
        raise ValueError(f"link_bps must be a finite number > 0 (got {link_bps!r})")
    if int(prefetch_depth) != prefetch_depth or prefetch_depth < 0:
        raise ValueError(f"prefetch_depth must be an integer >= 0 (got {prefetch_depth!r})")
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1 (got {iterations!r})")
    if not groups or groups[0].first != 0 or groups[-1].last != profile.n_layers - 1 or any(
            b.first != a.last + 1 for a, b in zip(groups, groups[1:])):
        raise ValueError("groups must be consecutive layers from 0 to the last")


class _ShardedModel:
    """simulate_sharded's event loop: one worker's phases (a compute phase
    per group forward, then backward) and the job's one ring, a
    non-preemptive server of the collectives in the order they were issued.

    Slots of an iteration: 0..2G-1 the phases' all-gathers, 2G+j the
    reduce-scatter of group G-1-j."""

    def __init__(self, profile: profiles.Profile, groups: tuple[Group, ...], coll: list[float],
                 prefetch_depth: int, reshard: bool, iterations: int):
        self.groups, self.coll = groups, coll
        self.G, self.P = len(groups), 2 * len(groups)
        self.fwd = [sum(profile.fp_ms[g.first:g.last + 1]) for g in groups]
        self.bwd = [sum(profile.bp_ms[g.first:g.last + 1]) for g in groups]
        self.prefetch_depth, self.reshard, self.iterations = prefetch_depth, reshard, iterations
        self.now = 0.0
        self.seq = 0
        self.events: list[tuple[float, int, str, int]] = []   # (time, order, what, slot)
        self.queue: list[tuple[float, int, int, int]] = []    # (issued, kind, iteration, slot)
        self.link_busy = False
        self.starts: list[float] = []
        self.timeline: list[tuple] = []
        self.compute: list[tuple] = []
        # the worker
        self.it = 0              # its iteration
        self.phase = 0           # the phase due
        self.busy = False        # computing it
        self.done = False        # every phase of the iteration computed
        self.next_issue = 0      # the next slot to issue
        self.rs = 0              # the iteration's reduce-scatters finished
        self.gathered = [False] * self.P

    def group_of(self, slot: int) -> int:
        G, P = self.G, self.P
        return slot if slot < G else 2 * G - 1 - slot if slot < P else G - 1 - (slot - P)

    def gathers(self, p: int) -> bool:
        return p < self.G or self.reshard

    def schedule(self, t: float, what: str, slot: int = -1) -> None:
        heapq.heappush(self.events, (t, self.seq, what, slot))
        self.seq += 1

    def issue(self, slot: int) -> None:
        heapq.heappush(self.queue, (self.now, 0 if slot < self.P else 1, self.it, slot))

    def begin(self) -> None:
        self.starts.append(self.now)
        if len(self.starts) > self.iterations:
            return
        self.phase, self.busy, self.done, self.next_issue, self.rs = 0, False, False, 0, 0
        self.gathered[:] = [False] * self.P
        self.due()

    def due(self) -> None:
        last = min(self.phase + self.prefetch_depth, self.P - 1)
        while self.next_issue <= last:
            if self.gathers(self.next_issue):
                self.issue(self.next_issue)
            self.next_issue += 1
        self.try_start()

    def try_start(self) -> None:
        p = self.phase
        if self.busy or self.done or (self.gathers(p) and not self.gathered[p]):
            return
        self.busy = True
        g = self.group_of(p)
        ms = self.fwd[g] if p < self.G else self.bwd[g]
        self.compute.append((self.it, g, "fp" if p < self.G else "bp", self.now, self.now + ms))
        self.schedule(self.now + ms, "phase")

    def phase_done(self) -> None:
        self.busy = False
        p = self.phase
        if p >= self.G:
            self.issue(self.P + (self.G - 1 - self.group_of(p)))
        self.phase = p + 1
        if p + 1 < self.P:
            self.due()
        else:
            self.done = True
            self.end_check()

    def collective_done(self, slot: int) -> None:
        if slot < self.P:
            self.gathered[slot] = True
            self.try_start()
        else:
            self.rs += 1
            self.end_check()

    def end_check(self) -> None:
        if self.done and self.rs == self.G:
            self.it += 1
            self.begin()

    def start_collective(self) -> None:
        """The ring is free: the collective first issued starts."""
        issued, kind, it, slot = heapq.heappop(self.queue)
        g = self.group_of(slot)
        self.timeline.append((it, slot, "allgather" if kind == 0 else "reducescatter", g,
                              self.groups[g].label, self.groups[g].bytes, issued, self.now,
                              self.now + self.coll[g]))
        self.link_busy = True
        self.schedule(self.now + self.coll[g], "collective", slot)

    def run(self) -> None:
        """Until the iteration after the last starts."""
        self.begin()
        while len(self.starts) <= self.iterations:
            if not self.link_busy and self.queue:
                self.start_collective()
            if not self.events:
                raise RuntimeError("sharded model: nothing left to happen (a deadlock)")
            self.now = self.events[0][0]
            while self.events and self.events[0][0] == self.now:
                _, _, what, slot = heapq.heappop(self.events)
                if what == "phase":
                    self.phase_done()
                else:
                    self.link_busy = False
                    self.collective_done(slot)


@dataclass(frozen=True)
class ShardedPlan(JobPlan):
    group_bytes: int = 0                  # bytes (the groups' size limit)
    groups: tuple[Group, ...] = ()        # forward order

    def resolved(self) -> dict[str, Any]:
        return {**super().resolved(), "group_bytes": self.group_bytes}


class Sharded(Architecture):
    name = "sharded"
    summary = "sharded data-parallel"
    job_type = "ns3::ShardedJob"
    settings = ShardedSettings
    unsupported_hint = "is not available: a sharded job issues its collectives in order"
    plan_keys = {"group_bytes": 0}

    def supports(self, policy: schedulers.Policy) -> bool:
        return policy.name == "fifo"

    def check(self, cfg, given: dict[str, Any]) -> dict[str, Any]:
        values = super().check(cfg, given)
        if cfg.barrier:
            raise ConfigError("training.barrier", "a sharded iteration ends when its last "
                              "reduce-scatter is done: there is no barrier to add; leave it out")
        if cfg.deadline_class is not None:
            raise ConfigError("training.deadline_class", "applies to architecture = 'ring' or "
                              "'ps' only, not 'sharded'; leave it out")
        return values

    def scaled(self, cfg, k: int) -> dict[str, Any]:
        return {"group_bytes": scaled_bytes(cfg.group_bytes, k)}

    def place(self, cfg, topo, classes, hosts, tos, scale) -> ShardedPlan:
        link_bps = min(topo.host_link(h).rate_bps for h in hosts)
        reshard = cfg.reshard_after_forward

        def network_ms(model_bytes: float) -> float:
            return network_time_ms(model_bytes, len(hosts), link_bps, reshard)

        profile = load(cfg, network_ms, scale)
        group_bytes = cfg.group_bytes or fusion.fusion_buffer_bytes(profile)
        groups = make_groups(profile, group_bytes)
        small = min(groups, key=lambda g: g.bytes)
        if small.bytes < len(hosts):
            field = "training.group_bytes" if cfg.group_bytes else "training.profile"
            raise ConfigError(field, f"group of layers {small.label} has {small.bytes} B, "
                              f"fewer than the {len(hosts)} workers: a worker would hold an "
                              "empty shard")
        return ShardedPlan(cfg, hosts, tos, profile, link_bps, (cfg.port, cfg.port),
                           network_ms(profile.model_bytes), group_bytes=group_bytes,
                           groups=groups)

    def no_contention(self, job: ShardedPlan, iterations: int) -> AnalyticResult:
        cfg = job.config
        return simulate_sharded(job.profile, len(job.hosts), job.link_bps, job.groups,
                                prefetch_depth=cfg.prefetch_depth,
                                reshard=cfg.reshard_after_forward, iterations=iterations)

    def bytes_per_iteration(self, job: ShardedPlan) -> float:
        # each collective: every worker sends (N-1)/N of the group
        per_model = 3 if job.config.reshard_after_forward else 2
        return per_model * (len(job.hosts) - 1) * job.profile.model_bytes

    def recipe(self, job: ShardedPlan, ack_tos: int) -> list[str]:
        """A ShardedJob with rank r on hosts[r], its groups as planned."""
        cfg = job.config
        return [self.job_line(), *layer_lines(job),
                "job-groups " + " ".join(token_list(v) for v in group_arguments(job.groups)),
                recipe_attribute("PrefetchDepth", str(cfg.prefetch_depth)),
                recipe_attribute("Reshard", "true" if cfg.reshard_after_forward else "false"),
                recipe_attribute("Port", str(cfg.port)),
                recipe_attribute("AckTos", str(ack_tos)),
                f"job-install {token_list(job.hosts)}"]

    def collect(self, ns_job, job: ShardedPlan, tos_class: dict[int, str]) -> JobTables:
        # each partition row carries its group's class
        transfers = read_csv(ns_job.TransfersCsv())
        return JobTables(iterations=read_csv(ns_job.IterationsCsv()),
                         transfers=transfers.assign(traffic_class=transfers["tos"].map(tos_class)),
                         compute=read_csv(ns_job.ComputeCsv()),
                         errors=str(ns_job.GetErrors()))


def group_arguments(groups) -> tuple[list[int], list[int]]:
    """(first layer, last layer) of each group, as ShardedHelper::SetGroups
    takes them. No class: the C++ job sends a group in the class of its
    lowest layer, from the per-layer classes of `job-layer-classes`."""
    return [g.first for g in groups], [g.last for g in groups]


ARCHITECTURE = Sharded()
