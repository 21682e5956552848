"""Parameter-server jobs as a training plug-in: where the shards
go, which tensors each holds, the job's network time (for the
compute-to-network ratio), and the installation of a PsJob
(ns3-modules/jobs/ps-*.{h,cc}) on the hosts, which replays the plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, Field, model_validator

from harness.analysis import analytic
from harness.traffic import profiles, schedulers
from harness.config.errors import ConfigError
from harness.io.recipe_tokens import token_list
from harness.config.schema.base import Bool, Bytes, Hosts, Int, Str, Time, Toml
from harness.config.schema.topology import MAX_NODES
from harness.config.schema.training import TrainingConfig
from harness.training.common import (Architecture, JobPlan, JobTables, deadline_lines,
                                     deadline_tos, layer_lines, load, recipe_attribute,
                                     recipe_scheduler, read_csv, scaled_bytes)


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

    def predict(self, job: PsPlan) -> float:
        cfg = job.config
        result = analytic.simulate_ps(
            job.profile, len(job.hosts), job.link_bps, tensor_shards=job.tensor_shards,
            colocated=tuple(h in job.hosts for h in job.server_hosts),
            iterations=4, barrier=cfg.barrier, pull_barrier=cfg.pull_barrier,
            pull_order="front" if cfg.policy == "tictac" else "aggregated")
        return float(result.iteration_ms[1:].mean())

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


ARCHITECTURE = ParameterServer()
