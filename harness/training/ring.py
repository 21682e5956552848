"""Ring-allreduce jobs as a training plug-in (docs/model/training.md).

Python plans the whole job: the fused gradient buffers (or, with a
partitioning policy, the partitions), their classes, and the policy that
orders ready buffers; the C++ RingAllreduceJob (ns3-modules/) replays that
plan and records what happened."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

from pydantic import Field

from harness.analysis import analytic
from harness.traffic import profiles, schedulers
from harness.config.errors import ConfigError
from harness.io.recipe_tokens import token_list
from harness.config.schema.base import Int, Toml
from harness.config.schema.training import TrainingConfig
from harness.training.common import (Architecture, JobPlan, JobTables, deadline_lines,
                                     deadline_tos, layer_lines, load, recipe_attribute,
                                     recipe_scheduler, read_csv, scaled_bytes)
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
    buffers: tuple[profiles.Buffer, ...] = ()  # what the ring allreduces, in closing order

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
        fusion = fusion_buffer(cfg, profile)
        partition = schedulers.chunk_bytes(cfg.policy, cfg.scheduler_params)
        buffers = tuple(profiles.partition(profile, partition) if partition
                        else profiles.fuse(profile, fusion))
        small = min(buffers, key=lambda b: b.bytes)
        if small.bytes < len(hosts):
            field = "training.scheduler.partition" if partition else "training.profile"
            raise ConfigError(field, f"buffer of layers {small.label} has {small.bytes} B, "
                              f"fewer than the {len(hosts)} workers: the ring would send "
                              "empty partitions")
        return RingPlan(cfg, hosts, tos, profile, link_bps, (cfg.port, cfg.port),
                        network_ms(profile.model_bytes), deadline_tos=deadline_tos(cfg, classes),
                        fusion_buffer=fusion, partition=partition, buffers=buffers)

    def predict(self, job: RingPlan) -> float:
        cfg = job.config
        result = analytic.simulate(job.profile, len(job.hosts), job.link_bps, iterations=4,
                                   queue=schedulers.POLICIES[cfg.policy].order,
                                   barrier=cfg.barrier, fusion_buffer=job.fusion_buffer,
                                   partition_bytes=job.partition)
        return float(result.iteration_ms[1:].mean())

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
        return profiles.fusion_buffer_bytes(profile)
    try:
        profiles.check_fits(profile, cfg.fusion_buffer)
    except profiles.ProfileError as e:
        raise ConfigError("training.fusion_buffer", str(e)) from None
    return cfg.fusion_buffer


ARCHITECTURE = Ring()
