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

from harness.config.errors import ConfigError
from harness.config.schema.training import TrainingConfig, job_fields


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
    other job. The plug-in says how many hosts a job takes and where they go
    (a parameter-server job's dedicated shards: next in the same order)."""
    from harness import training   # the registry (its package holds this module)

    if n_jobs == 1 and jobs[0][1].placement is None:
        return [cfg for _, cfg in jobs]    # one job: workers 0..N-1 as always
    groups = leaf_groups(topo)
    free = set(range(topo.n_hosts))
    for _, cfg in jobs:
        free -= set(training.architecture(cfg.architecture).given_hosts(cfg))
    out = []
    for index, cfg in jobs:
        with job_fields(index, n_jobs):
            if not cfg.hosts:
                arch = training.architecture(cfg.architecture)
                hosts = pick(groups, free, arch.hosts_needed(cfg), cfg.placement or "packed")
                free -= set(hosts)
                cfg = arch.placed(cfg, hosts)
        out.append(cfg)
    return out


def check_apart(planned: list[tuple[int, Any]], n_jobs: int) -> None:
    """No host and no port in two jobs (planned: (index, JobPlan))."""
    for k, (i, job) in enumerate(planned):
        hosts = set(job.all_hosts)
        for j, other in planned[:k]:
            with job_fields(i, n_jobs):
                shared = hosts & set(other.all_hosts)
                if shared:
                    raise ConfigError("training.hosts", f"host(s) {sorted(shared)} also run "
                                      f"training[{j}] ({other.config.name!r}); jobs may not "
                                      "share hosts")
                lo, hi = job.ports
                olo, ohi = other.ports
                if lo <= ohi and olo <= hi:
                    raise ConfigError("training.port", f"ports {lo}-{hi} overlap training[{j}]'s "
                                      f"{olo}-{ohi}; give each job its own port")
