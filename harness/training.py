"""The training job of a scenario: its model profile (from workloads/profiles,
optionally rescaled to a compute-to-network ratio R) and its installation as
a RingAllreduceJob on the worker hosts."""

from __future__ import annotations

import dataclasses

from harness import profiles
from harness.config import WORKLOADS_DIR, ConfigError, TrainingConfig, resolve_data_file

PROFILES_DIR = WORKLOADS_DIR / "profiles"


def worker_hosts(cfg: TrainingConfig, topo) -> tuple[int, ...]:
    hosts = cfg.hosts or tuple(range(cfg.workers))
    for i, h in enumerate(hosts):
        topo.check_host(h, f"training.hosts[{i}]" if cfg.hosts else "training.workers")
    return hosts


def load(cfg: TrainingConfig, n_workers: int, link_bps: float) -> profiles.Profile:
    """The job's profile; with `ratio`, compute is rescaled to R x network time
    (the resnet50-like family is regenerated exactly, SPEC §2)."""
    path = resolve_data_file(cfg.profile, PROFILES_DIR, ".csv", "training.profile")
    try:
        profile = profiles.load_profile(path)
    except profiles.ProfileError as e:
        raise ConfigError("training.profile", str(e)) from None
    if cfg.ratio is None:
        return profile
    compute = profiles.compute_ms_for_ratio(cfg.ratio, profile.model_bytes, n_workers, link_bps)
    if path.stem == "resnet50-like":
        return profiles.resnet50_like(profile.n_layers, profile.model_bytes, compute)
    scale = compute / profile.compute_ms
    return dataclasses.replace(profile, name=f"{profile.name}-R{cfg.ratio:g}",
                               fp_ms=tuple(t * scale for t in profile.fp_ms),
                               bp_ms=tuple(t * scale for t in profile.bp_ms))


def install(ns, builder, profile: profiles.Profile, cfg: TrainingConfig,
            hosts: tuple[int, ...], host_addresses, tos: int, ack_tos: int):
    """A RingAllreduceJob with rank r on hosts[r]; returns the job."""
    helper = ns.RingAllreduceHelper()
    helper.SetLayers(list(profile.layer_bytes), [round(t * 1e6) for t in profile.fp_ms],
                     [round(t * 1e6) for t in profile.bp_ms])
    helper.SetJobAttribute("QueuePolicy", ns.StringValue(cfg.policy))
    helper.SetJobAttribute("Barrier", ns.StringValue("true" if cfg.barrier else "false"))
    helper.SetJobAttribute("Port", ns.StringValue(str(cfg.port)))
    helper.SetJobAttribute("DefaultTos", ns.StringValue(str(tos)))
    helper.SetJobAttribute("AckTos", ns.StringValue(str(ack_tos)))
    node_ids = [builder.GetNode(h).GetId() for h in hosts]
    return helper.Install(node_ids, [host_addresses[h] for h in hosts])
