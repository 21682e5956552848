"""The network as a graph: hosts and switches joined by links, and hop
distances through it. Plain data shared by the topology loaders
(harness.network.topology), the routes (harness.network.routing) and the TCP settings
(harness.network.tcp); it imports none of them, so they do not import each other.

Nodes are numbered hosts first (0..H-1), then switches; hosts never forward.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from harness.config.errors import ConfigError


@dataclass(frozen=True)
class Link:
    a: int
    b: int
    rate_bps: float
    delay_s: float


@dataclass(frozen=True)
class Topology:
    kind: str
    n_hosts: int
    n_switches: int
    links: tuple[Link, ...]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return self.n_hosts + self.n_switches

    def node_name(self, node: int) -> str:
        return f"h{node}" if node < self.n_hosts else f"s{node - self.n_hosts}"

    def check_host(self, host: int, where: str) -> None:
        if host >= self.n_hosts:
            raise ConfigError(where, f"host {host} does not exist; the topology has hosts "
                              f"0..{self.n_hosts - 1}")

    def host_link(self, host: int) -> Link:
        """The one link of a (single-homed) host."""
        return next(link for link in self.links if host in (link.a, link.b))

    def host_link_index(self, host: int) -> int:
        """Index of a host's one link. Its side 0 is the host: topologies list
        each host link as (host, switch), and ns-3 addresses follow that side."""
        i = next(i for i, l in enumerate(self.links) if host in (l.a, l.b))
        assert self.links[i].a == host, "host links must start at the host"
        return i

    def egress(self, link: int, side: int) -> tuple[int, int, int, int]:
        """(link, side, from node, to node) of one end of a link: side 0 sends a -> b."""
        l = self.links[link]
        return (link, side, l.a, l.b) if side == 0 else (link, side, l.b, l.a)

    def egresses(self) -> list[tuple[int, int, int, int]]:
        """Every end of every link, as egress() gives it, in link order and
        side 0 first: the order of the recipe's queue discs and PFC ports."""
        return [self.egress(i, side) for i in range(len(self.links)) for side in (0, 1)]

    def adjacency(self) -> list[list[tuple[int, int]]]:
        """adjacency[node] = [(neighbour, link index), ...] in link order."""
        adj: list[list[tuple[int, int]]] = [[] for _ in range(self.n_nodes)]
        for i, link in enumerate(self.links):
            adj[link.a].append((link.b, i))
            adj[link.b].append((link.a, i))
        return adj


def distances_to(topo: Topology, host: int,
                 adj: list[list[tuple[int, int]]] | None = None) -> list[int | None]:
    """Hop distance of every node to `host`, travelling only through switches.
    adj: topo.adjacency(), when the caller already has it (it is rebuilt
    otherwise: a pass over every link)."""
    if adj is None:
        adj = topo.adjacency()
    dist: list[int | None] = [None] * topo.n_nodes
    dist[host] = 0
    queue = deque([host])
    while queue:
        u = queue.popleft()
        if u != host and u < topo.n_hosts:
            continue  # another host: reachable, but it does not forward
        for v, _ in adj[u]:
            if dist[v] is None:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def check_reachable(topo: Topology) -> None:
    adj = topo.adjacency()
    for h in range(topo.n_hosts):
        dist = distances_to(topo, h, adj)
        unreachable = [topo.node_name(o) for o in range(topo.n_hosts) if dist[o] is None]
        if unreachable:
            raise ConfigError("topology.links", f"host {topo.node_name(h)} cannot be reached "
                              f"from {', '.join(unreachable)}")
