"""Parameter-server jobs (SPEC §2b): where the shards go, which tensors each
holds, the job's network time (for the compute-to-network ratio), and the
installation of a PsJob (ns3-modules/ps-*.{h,cc}) on the hosts."""

from __future__ import annotations

from harness import profiles, schedulers, training
from harness.config import ConfigError, TrainingConfig

#: Aggregation unit for aggregation = "chunk" with a policy that sends whole tensors.
DEFAULT_AGGREGATION_CHUNK = 65_536


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


def server_hosts(cfg: TrainingConfig, topo, workers: tuple[int, ...]) -> tuple[int, ...]:
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


def aggregation_bytes(cfg: TrainingConfig) -> int:
    """The shards' aggregation unit: 0 = whole tensors."""
    pol = schedulers.POLICIES[cfg.policy]
    chunk = schedulers.chunk_bytes(cfg.policy, cfg.scheduler_params)
    if pol.chunk_aggregation:
        return chunk
    if cfg.aggregation == "tensor":
        return 0
    return cfg.aggregation_chunk or chunk or DEFAULT_AGGREGATION_CHUNK


def install(ns, builder, profile: profiles.Profile, cfg: TrainingConfig,
            workers: tuple[int, ...], shards: tuple[int, ...], host_addresses,
            tos: int, layer_tos: tuple[int, ...], tensor_shards: tuple[int, ...],
            deadline_tos: int, link_bps: float):
    """A PsJob with worker r on workers[r] and shard k on shards[k]; returns the job."""
    helper = ns.PsHelper()
    helper.SetLayers(*training.layer_arguments(profile))
    for layer, t in enumerate(layer_tos):
        if t != tos:
            helper.SetLayerTos(layer, t)
    helper.SetTensorShards(list(tensor_shards))
    for slow in cfg.slowdowns:
        helper.AddSlowdown(slow.worker, round(slow.start * 1e9), round(slow.end * 1e9),
                           slow.factor)
    for side in ("push", "pull"):
        type_id, attrs = schedulers.attributes(cfg.policy, cfg.scheduler_params, side, link_bps)
        helper.SetScheduler(side == "push", type_id, attrs)
    for name, value in (("Barrier", "true" if cfg.barrier else "false"),
                        ("PullBarrier", "true" if cfg.pull_barrier else "false"),
                        ("ChunkOverhead", f"{round(cfg.chunk_overhead * 1e9)}ns"),
                        ("Port", str(cfg.port)), ("DefaultTos", str(tos)),
                        ("AggregationBytes", str(aggregation_bytes(cfg))),
                        ("DeadlineTos", str(deadline_tos)),
                        ("LinkBps", str(int(link_bps)))):
        helper.SetJobAttribute(name, ns.StringValue(value))
    node = {h: builder.GetNode(h).GetId() for h in (*workers, *shards)}
    return helper.Install([node[h] for h in workers], [host_addresses[h] for h in workers],
                          [node[h] for h in shards], [host_addresses[h] for h in shards])
