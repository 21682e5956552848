"""Parameter-server jobs as a training plug-in: where the shards
go, which tensors each holds, the job's network time (for the
compute-to-network ratio), and the installation of a PsJob
(ns3-modules/jobs/ps-*.{h,cc}) on the hosts, which replays the plan.
`simulate_ps` is its no-contention model, the oracle of the ns-3 job at
zero background load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from harness.traffic import profiles, schedulers
from harness.config.errors import ConfigError
from harness.io.recipe_tokens import token_list
from harness.config.schema.base import Bool, Bytes, Hosts, Int, Time, Toml
from harness.config.schema.topology import MAX_NODES
from harness.config.schema.training import TrainingConfig
from harness.training.common import (AnalyticResult, Architecture, JobPlan, JobTables,
                                     deadline_lines, deadline_tos, forward_spans, layer_lines,
                                     load, recipe_attribute, recipe_scheduler, read_csv,
                                     scaled_bytes)


#: Aggregation unit for aggregation = "chunk" with a policy that sends whole tensors.
DEFAULT_AGGREGATION_CHUNK = 65_536
SERVER_PLACEMENTS = ("dedicated", "colocated")
AGGREGATIONS = ("tensor", "chunk")


def _some_hosts(hosts: tuple) -> tuple:
    if not hosts:
        raise ConfigError("", "is empty; list the shards' hosts, or leave server_hosts out "
                          "for `servers` shards placed by server_placement")
    return hosts


class PsSettings(TrainingConfig):
    """A parameter-server job's settings: the common ones and its own (a
    ring's fusion_buffer is refused: an unknown key here)."""

    architecture: Literal["ps"] = Field(description=(
        "the job's architecture, one of `harness list`'s (this one: parameter servers)"))
    servers: Int(1, MAX_NODES) = Field(1, description="ps: number of shards K")
    server_placement: Literal[SERVER_PLACEMENTS] = Field("dedicated", description=(
        "ps: `dedicated` (the first hosts without a worker) or `colocated` (on workers "
        "0..K-1)"))
    server_hosts: Annotated[Hosts, AfterValidator(_some_hosts)] = Field((), description=(
        "ps: the shards' hosts (sets `servers`; a worker's host = co-located)"))
    aggregation: Literal[AGGREGATIONS] = Field("tensor", description=(
        "ps: `tensor` or `chunk` (pulls overlap pushes)"))
    aggregation_chunk: Annotated[Optional[Bytes()],
                                 Toml(default="the policy's chunk, else 64 KiB")] = Field(
        None, description="ps, chunk aggregation: the unit")
    # pulls of an iteration wait until every tensor of it is aggregated on every
    # shard (TensorFlow's synchronous PS, TicTac's setting): pulls do not overlap pushes
    pull_barrier: Bool = Field(False, description=(
        "ps: an iteration's pulls wait until every tensor is aggregated on every shard "
        "(TensorFlow's synchronous PS)"))
    # each sender commits chunks at least this far apart (s): the framework's
    # per-operation cost, which makes small partitions expensive on fast links
    chunk_overhead: Time = Field(0.0, description=(
        "ps: each sender commits chunks at least this far apart (a per-operation cost)"))

    @model_validator(mode="after")
    def _shards(self) -> PsSettings:
        if self.given("server_hosts"):
            self._finish(servers=len(self.server_hosts))
        return self


def assign_shards(layer_bytes: tuple[int, ...], n_shards: int) -> tuple[int, ...]:
    """Shard of each tensor, balanced by size: largest tensors first, each to
    the shard holding the fewest bytes so far (lowest index on ties)."""
    load = [0] * n_shards
    shard = [0] * len(layer_bytes)
    for t in sorted(range(len(layer_bytes)), key=lambda t: (-layer_bytes[t], t)):
        k = min(range(n_shards), key=lambda k: (load[k], k))
        shard[t] = k
        load[k] += layer_bytes[t]
    return tuple(shard)


def server_hosts(cfg: Any, topo, workers: tuple[int, ...]) -> tuple[int, ...]:
    """Hosts of shards 0..K-1: given, co-located with workers 0..K-1, or
    dedicated (the first hosts that run no worker)."""
    if cfg.server_hosts:
        for i, h in enumerate(cfg.server_hosts):
            topo.check_host(h, f"training.server_hosts[{i}]")
        return cfg.server_hosts
    k = cfg.servers
    if cfg.server_placement == "colocated":
        if k > len(workers):
            raise ConfigError("training.servers", f"{k} co-located shards need {k} workers "
                              f"(the job has {len(workers)})")
        return workers[:k]
    free = [h for h in range(topo.n_hosts) if h not in workers]
    if len(free) < k:
        raise ConfigError("training.servers", f"{k} dedicated shard host(s) needed besides the "
                          f"{len(workers)} workers; the topology has {topo.n_hosts} hosts "
                          "(use server_placement = \"colocated\" or fewer workers)")
    return tuple(free[:k])


def remote_workers(workers: tuple[int, ...], shard_host: int) -> int:
    """Workers whose pushes to a shard on `shard_host` cross the network."""
    return len(workers) - (shard_host in workers)


def network_time_ms(model_bytes: float, workers: tuple[int, ...], shards: tuple[int, ...],
                    link_bps: float) -> float:
    """What the busiest shard link carries per iteration at line rate: each
    remote worker's share of the model (M/K) pushed in, and pulled out on
    the other direction at the same time. The PS analogue of the ring time
    2(1-1/N)M/link used for the compute-to-network ratio."""
    remote = max(remote_workers(workers, h) for h in shards)
    return max(remote, 1) * model_bytes / len(shards) * 8 / link_bps * 1e3


def aggregation_bytes(cfg: Any) -> int:
    """The shards' aggregation unit: 0 = whole tensors."""
    pol = schedulers.POLICIES[cfg.policy]
    chunk = schedulers.chunk_bytes(cfg.policy, cfg.scheduler_params)
    if pol.chunk_aggregation:
        return chunk
    if cfg.aggregation == "tensor":
        return 0
    return cfg.aggregation_chunk or chunk or DEFAULT_AGGREGATION_CHUNK


@dataclass(frozen=True)
class PsPlan(JobPlan):
    server_hosts: tuple[int, ...] = ()   # host of each shard
    tensor_shards: tuple[int, ...] = ()  # shard of each tensor

    def resolved(self) -> dict[str, Any]:
        return {**super().resolved(), "server_hosts": list(self.server_hosts),
                "tensor_shards": list(self.tensor_shards)}

    @property
    def all_hosts(self) -> tuple[int, ...]:
        return (*self.hosts, *self.server_hosts)


class ParameterServer(Architecture):
    name = "ps"
    summary = "parameter-server"
    job_type = "ns3::PsJob"
    settings = PsSettings
    plan_keys = {"server_hosts": [], "tensor_shards": []}
    choices = (("training.aggregation", AGGREGATIONS),)

    def given_hosts(self, cfg) -> tuple[int, ...]:
        return (*cfg.hosts, *cfg.server_hosts)

    def hosts_needed(self, cfg) -> int:
        """Its workers, and its dedicated shards unless their hosts are given."""
        placed = not cfg.server_hosts and cfg.server_placement == "dedicated"
        return cfg.workers + (cfg.servers if placed else 0)

    def placed(self, cfg, hosts):
        """Workers on the first hosts, dedicated shards on the rest (next in
        the same order)."""
        shards = hosts[cfg.workers:]
        return cfg.model_copy(update={"hosts": hosts[:cfg.workers],
                                      **({"server_hosts": shards} if shards else {})})

    def scaled(self, cfg, k: int) -> dict[str, Any]:
        chunk = cfg.aggregation_chunk
        if chunk is None and cfg.aggregation == "chunk" and not \
                schedulers.chunk_bytes(cfg.policy, cfg.scheduler_params):
            chunk = DEFAULT_AGGREGATION_CHUNK   # the default unit, scaled like the rest
        return {"aggregation_chunk": scaled_bytes(chunk, k)}

    def place(self, cfg, topo, classes, hosts, tos, scale) -> PsPlan:
        shards = server_hosts(cfg, topo, hosts)
        link_bps = min(topo.host_link(h).rate_bps for h in (*hosts, *shards))

        def network_ms(model_bytes: float) -> float:
            return network_time_ms(model_bytes, hosts, shards, link_bps)

        profile = load(cfg, network_ms, scale)
        if len(shards) > profile.n_layers:
            raise ConfigError("training.servers", f"{len(shards)} shards for "
                              f"{profile.n_layers} tensors: a shard would hold none")
        ports = (cfg.port, cfg.port + classes.bands - 1)  # one per class at most
        if ports[1] > 65535:
            raise ConfigError("training.port", f"a parameter-server job listens on port + "
                              f"class index, {ports[0]}-{ports[1]}: at most "
                              f"{65535 - classes.bands + 1}")
        return PsPlan(cfg, hosts, tos, profile, link_bps, ports,
                      network_ms(profile.model_bytes), server_hosts=shards,
                      tensor_shards=assign_shards(profile.layer_bytes, len(shards)),
                      deadline_tos=deadline_tos(cfg, classes))

    def no_contention(self, job: PsPlan, iterations: int) -> AnalyticResult:
        cfg = job.config
        return simulate_ps(
            job.profile, len(job.hosts), job.link_bps, tensor_shards=job.tensor_shards,
            colocated=tuple(h in job.hosts for h in job.server_hosts),
            iterations=iterations, barrier=cfg.barrier, pull_barrier=cfg.pull_barrier,
            pull_order="front" if cfg.policy == "tictac" else "aggregated")

    def bytes_per_iteration(self, job: PsPlan) -> float:
        # each worker pushes and pulls the model
        return 2 * len(job.hosts) * job.profile.model_bytes

    def recipe(self, job: PsPlan, ack_tos: int) -> list[str]:
        """A PsJob with worker r on hosts[r] and shard k on server_hosts[k]."""
        cfg = job.config
        lines = [self.job_line(), *layer_lines(job), f"job-shards {token_list(job.tensor_shards)}"]
        lines += [recipe_scheduler(side, *schedulers.attributes(
            cfg.policy, cfg.scheduler_params, side, job.link_bps)) for side in ("push", "pull")]
        lines += [recipe_attribute(name, value) for name, value in (
            ("Barrier", "true" if cfg.barrier else "false"),
            ("PullBarrier", "true" if cfg.pull_barrier else "false"),
            ("ChunkOverhead", f"{round(cfg.chunk_overhead * 1e9)}ns"),
            ("Port", str(cfg.port)),
            ("AggregationBytes", str(aggregation_bytes(cfg))))]
        lines += deadline_lines(job)
        lines.append(f"job-install {token_list(job.hosts)} {token_list(job.server_hosts)}")
        return lines

    def collect(self, ns_job, job: PsPlan, tos_class: dict[int, str]) -> JobTables:
        # each chunk row carries the class it was sent in
        transfers = read_csv(ns_job.TransfersCsv())
        return JobTables(iterations=read_csv(ns_job.IterationsCsv()),
                         transfers=transfers.assign(traffic_class=transfers["tos"].map(tos_class)),
                         compute=read_csv(ns_job.ComputeCsv()),
                         errors=str(ns_job.GetErrors()),
                         scheduler=read_csv(ns_job.SchedulerCsv()))


# --------------------------------------------------------------------------
# the no-contention model

def simulate_ps(
    profile: profiles.Profile,
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
    (docs/model/training.md). Compute is as in the ring's (harness.training.ring.simulate); tensor i (= layer i) is
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
    links = _ShardLinks(remote=[n_workers - (1 if colocated[k] else 0) for k in range(n_shards)],
                        ms_per_byte=8e3 / link_bps, in_free=[0.0] * n_shards,
                        out_free=[0.0] * n_shards)
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
        cur = forward_spans(t0, profile.fp_ms, sync_prev)[-1][1]
        own, sync, t = _push_pull(k, cur, profile, tensor_shards, links, aggregation_bytes,
                                  pull_barrier)
        if pull_barrier:
            _pull_after_barrier(own, sync, pull_order, links, profile.layer_bytes)
        rows.extend(own)
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


@dataclass
class _ShardLinks:
    """Each shard's two links in simulate_ps: FIFO servers at the link rate,
    each tensor crossing them `remote[shard]` times."""

    remote: list[int]        # the workers that reach the shard over the network: W or W - 1
    ms_per_byte: float
    in_free: list[float]     # when each shard's in link (the pushes) is free
    out_free: list[float]    # and its out link (the pulls)


def _push_pull(k: int, cur: float, profile: profiles.Profile, tensor_shards: tuple[int, ...],
               links: _ShardLinks, aggregation_bytes: int,
               pull_barrier: bool) -> tuple[list[list], list[float], float]:
    """Backward of iteration k from `cur`: each tensor pushed to its shard
    when its layer's backward ends, and pulled once aggregated (with
    pull_barrier, the pulls are _pull_after_barrier's to place). (The
    iteration's timeline rows, when each layer is synchronised, the end of
    backward.)"""
    B, P = profile.bp_ms, profile.layer_bytes
    ms_per_byte, in_free, out_free = links.ms_per_byte, links.in_free, links.out_free
    rows = []
    sync = [0.0] * profile.n_layers
    for i in range(profile.n_layers - 1, -1, -1):  # backward; tensors leave in this order
        cur += B[i]
        shard, w = tensor_shards[i], links.remote[tensor_shards[i]]
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
    return rows, sync, cur


def _pull_after_barrier(rows: list[list], sync: list[float], pull_order: str,
                        links: _ShardLinks, layer_bytes) -> None:
    """pull_barrier: every pull of the iteration (its `rows`) waits for the
    last push, on every shard, and leaves each shard in `pull_order`; the
    rows' pull times and `sync` are set here."""
    released = max(r[6] for r in rows)
    order = rows if pull_order == "aggregated" else rows[::-1]
    for r in order:
        i, shard = r[1], r[3]
        w = links.remote[shard]
        r[7] = max(released, links.out_free[shard])
        r[8] = links.out_free[shard] = r[7] + w * layer_bytes[i] * links.ms_per_byte
        sync[i] = r[8] if w > 0 else r[4]


ARCHITECTURE = ParameterServer()
