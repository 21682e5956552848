"""Several training jobs on one fabric ([[training]]): where each job's
workers go, and the checks that keep jobs apart (hosts and ports).

Hosts are grouped by the switch their link attaches to (a leaf of a
leaf-spine, the one ToR of single-tor). A job with `hosts` keeps them; the
others are placed in file order on the hosts still free:

  packed   the first leaf with room for the whole job, else leaf after leaf:
           the job's ring stays under one leaf where it can
  spread   one host per leaf in turn: every ring step crosses the spine

Jobs never share a host (a worker or a parameter-server shard): the model
gives each job its own compute and the host link would be one more shared
link the placement does not show. Each job listens on its own ports."""

from __future__ import annotations

from typing import Any

from harness.config import TrainingConfig, job_fields
from harness.errors import ConfigError


def leaf_groups(topo) -> list[list[int]]:
    """Hosts by the switch of their link, switches in index order."""
    groups: dict[int, list[int]] = {}
    for h in range(topo.n_hosts):
        link = topo.host_link(h)
        groups.setdefault(link.b if link.a == h else link.a, []).append(h)
    return [groups[s] for s in sorted(groups)]


def pick(groups: list[list[int]], free: set[int], n: int, placement: str) -> tuple[int, ...]:
    """n free hosts, packed or spread over the groups (leaves)."""
    avail = [[h for h in g if h in free] for g in groups]
    if sum(map(len, avail)) < n:
        raise ConfigError("training.workers", f"{n} hosts needed; {len(free)} are free of "
                          "the other jobs")
    if placement == "packed":
        fits = [g for g in avail if len(g) >= n]
        if fits:
            return tuple(fits[0][:n])
        return tuple([h for g in avail for h in g][:n])
    out: list[int] = []
    while len(out) < n:  # round-robin over the leaves
        for g in avail:
            if g and len(out) < n:
                out.append(g.pop(0))
    return tuple(out)


def place(jobs: list[tuple[int, TrainingConfig]], topo, n_jobs: int) -> list[TrainingConfig]:
    """Each job (index, config), enabled or not (disabling one must not move
    the others), with its hosts decided: given hosts
    kept, the others placed ("packed" unless told) on hosts free of every
    other job. A parameter-server job with dedicated shards and no
    server_hosts gets its shard hosts here too, next in the same order."""
    if n_jobs == 1 and jobs[0][1].placement is None:
        return [cfg for _, cfg in jobs]    # one job: workers 0..N-1 as always
    groups = leaf_groups(topo)
    free = set(range(topo.n_hosts))
    for _, cfg in jobs:
        free -= set(cfg.hosts) | set(getattr(cfg, "server_hosts", ()))
    out = []
    for index, cfg in jobs:
        with job_fields(index, n_jobs):
            if not cfg.hosts:
                shards = (cfg.servers if cfg.architecture == "ps" and not cfg.server_hosts
                          and cfg.server_placement == "dedicated" else 0)
                hosts = pick(groups, free, cfg.workers + shards, cfg.placement or "packed")
                free -= set(hosts)
                cfg = cfg.model_copy(update={"hosts": hosts[:cfg.workers]})
                if shards:
                    cfg = cfg.model_copy(update={"server_hosts": hosts[cfg.workers:]})
        out.append(cfg)
    return out


def check_apart(planned: list[tuple[int, Any]], n_jobs: int) -> None:
    """No host and no port in two jobs (planned: (index, JobPlan))."""
    for k, (i, job) in enumerate(planned):
        hosts = set(job.hosts) | set(getattr(job, "server_hosts", ()))
        for j, other in planned[:k]:
            with job_fields(i, n_jobs):
                shared = hosts & (set(other.hosts) | set(getattr(other, "server_hosts", ())))
                if shared:
                    raise ConfigError("training.hosts", f"host(s) {sorted(shared)} also run "
                                      f"training[{j}] ({other.config.name!r}); jobs may not "
                                      "share hosts")
                lo, hi = job.ports
                olo, ohi = other.ports
                if lo <= ohi and olo <= hi:
                    raise ConfigError("training.port", f"ports {lo}-{hi} overlap training[{j}]'s "
                                      f"{olo}-{ohi}; give each job its own port")
