"""The training job of a scenario: its model profile (from workloads/profiles,
optionally rescaled to a compute-to-network ratio R), its per-layer classes,
and, for ring allreduce, its installation as a RingAllreduceJob on the worker
hosts (parameter-server jobs: harness.ps)."""

from __future__ import annotations

import dataclasses

from typing import Callable

from harness import profiles, schedulers
from harness.config import WORKLOADS_DIR, ConfigError, TrainingConfig, resolve_data_file
from harness.units import INT64_MAX, NS3_TIME_MAX_S

PROFILES_DIR = WORKLOADS_DIR / "profiles"


def worker_hosts(cfg: TrainingConfig, topo) -> tuple[int, ...]:
    hosts = cfg.hosts or tuple(range(cfg.workers))
    for i, h in enumerate(hosts):
        topo.check_host(h, f"training.hosts[{i}]" if cfg.hosts else "training.workers")
    return hosts


def load(cfg: TrainingConfig, network_ms: Callable[[float], float],
         scale: int = 1) -> profiles.Profile:
    """The job's profile, its bytes / `scale` (harness.scaling: cfg's byte
    fields are scaled already); with `ratio`, every layer's compute is scaled so the
    iteration's compute is R x network_ms(`model_bytes`) (default: the
    profile's bytes), the job's network time per iteration: the ring time
    for ring allreduce, harness.ps.network_time_ms for parameter servers.
    For the resnet50-like family compute is linear in T, so scaling equals
    regenerating (sizes stay as in the file)."""
    path = resolve_data_file(cfg.profile, PROFILES_DIR, ".csv", "training.profile")
    try:
        profile = profiles.load_profile(path)
    except profiles.ProfileError as e:
        raise ConfigError("training.profile", str(e)) from None
    if max(profile.layer_bytes) > INT64_MAX:
        raise ConfigError("training.profile", f"{path}: a layer of more than {INT64_MAX:,} B")
    from harness import scaling

    profile = scaling.profile(profile, scale)
    if cfg.ratio is not None:
        model_bytes = cfg.model_bytes or profile.model_bytes
        factor = cfg.ratio * network_ms(model_bytes) / profile.compute_ms
        profile = dataclasses.replace(profile, name=f"{profile.name}-R{cfg.ratio:g}",
                                      fp_ms=tuple(t * factor for t in profile.fp_ms),
                                      bp_ms=tuple(t * factor for t in profile.bp_ms))
    # ns-3 runs each layer's compute as an int64 count of nanoseconds
    longest_ms = max(*profile.fp_ms, *profile.bp_ms)
    if longest_ms * 1e6 > INT64_MAX:
        field = "training.ratio" if cfg.ratio is not None else "training.profile"
        raise ConfigError(field, f"a layer's compute time ({longest_ms / 1e3:.3g} s) is beyond "
                          f"the longest time ns-3 represents ({NS3_TIME_MAX_S:.3g} s)")
    return profile


def fusion_buffer(cfg: TrainingConfig, profile: profiles.Profile) -> int:
    """The job's fusion buffer in bytes, checked against the profile's layers."""
    if cfg.fusion_buffer is None:
        return profiles.fusion_buffer_bytes(profile)
    try:
        profiles.check_fits(profile, cfg.fusion_buffer)
    except profiles.ProfileError as e:
        raise ConfigError("training.fusion_buffer", str(e)) from None
    return cfg.fusion_buffer


def check_ring_buffers(cfg: TrainingConfig, profile: profiles.Profile, fusion_buffer: int,
                       n_workers: int) -> None:
    """Every buffer the ring allreduces must give each of the N workers a
    non-empty partition."""
    _, partition = schedulers.ring_schedule(cfg.policy, cfg.scheduler_params)
    buffers = (profiles.partition(profile, partition) if partition
               else profiles.fuse(profile, fusion_buffer))
    small = min(buffers, key=lambda b: b.bytes)
    if small.bytes < n_workers:
        field = "training.scheduler.partition" if partition else "training.profile"
        raise ConfigError(field, f"buffer of layers {small.label} has {small.bytes} B, fewer "
                          f"than the {n_workers} workers: the ring would send empty partitions")


def layer_tos(cfg: TrainingConfig, profile: profiles.Profile, classes,
              default_tos: int) -> tuple[int, ...]:
    """IP ToS of each layer's gradients: `layer_classes` where given, else the
    job's class. A fusion buffer goes in the class of its lowest layer."""
    tos = [default_tos] * profile.n_layers
    for cls, first, last in cfg.layer_classes:
        where = f"training.layer_classes.{cls}"
        if last >= profile.n_layers:
            raise ConfigError(where, f"layer {last} does not exist; profile "
                              f"{profile.name!r} has layers 0-{profile.n_layers - 1}")
        tos[first:last + 1] = [classes.tos(cls, where)] * (last - first + 1)
    return tuple(tos)


def layer_arguments(profile: profiles.Profile) -> tuple[list[int], list[int], list[int]]:
    """(bytes, forward ns, backward ns) per layer, as the C++ helpers' SetLayers takes them."""
    return (list(profile.layer_bytes), [round(t * 1e6) for t in profile.fp_ms],
            [round(t * 1e6) for t in profile.bp_ms])


def install(ns, builder, profile: profiles.Profile, cfg: TrainingConfig,
            hosts: tuple[int, ...], host_addresses, tos: int, ack_tos: int,
            layer_tos: tuple[int, ...] = (), fusion_buffer: int | None = None):
    """A RingAllreduceJob with rank r on hosts[r]; returns the job."""
    helper = ns.RingAllreduceHelper()
    helper.SetLayers(*layer_arguments(profile))
    for slow in cfg.slowdowns:
        helper.AddSlowdown(slow.worker, round(slow.start * 1e9), round(slow.end * 1e9),
                           slow.factor)
    for layer, t in enumerate(layer_tos):
        if t != tos:
            helper.SetLayerTos(layer, t)
    if fusion_buffer is not None:
        helper.SetJobAttribute("FusionBufferBytes", ns.StringValue(str(fusion_buffer)))
    queue, partition = schedulers.ring_schedule(cfg.policy, cfg.scheduler_params)
    helper.SetJobAttribute("QueuePolicy", ns.StringValue(queue))
    if partition:
        helper.SetJobAttribute("PartitionBytes", ns.StringValue(str(partition)))
    helper.SetJobAttribute("Barrier", ns.StringValue("true" if cfg.barrier else "false"))
    helper.SetJobAttribute("Port", ns.StringValue(str(cfg.port)))
    helper.SetJobAttribute("DefaultTos", ns.StringValue(str(tos)))
    helper.SetJobAttribute("AckTos", ns.StringValue(str(ack_tos)))
    node_ids = [builder.GetNode(h).GetId() for h in hosts]
    return helper.Install(node_ids, [host_addresses[h] for h in hosts])
