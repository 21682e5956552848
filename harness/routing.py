"""Per-flow ECMP routes, computed from the topology graph.

For every node and every destination host, the next hops are the neighbours
one hop closer to that host on a shortest path (hosts never forward). The
C++ EcmpRouting picks one of them by hashing the flow's 5-tuple, so a flow
keeps its path and different flows spread over all equal-cost paths.
"""

from __future__ import annotations

from harness.graph import Topology, distances_to


def next_hops(topo: Topology) -> dict[tuple[int, int], list[int]]:
    """(node, destination host) -> link indices of its equal-cost next hops."""
    adj = topo.adjacency()
    table: dict[tuple[int, int], list[int]] = {}
    for h in range(topo.n_hosts):
        dist = distances_to(topo, h, adj)
        for u in range(topo.n_nodes):
            if u == h or dist[u] is None:
                continue
            hops = [link for v, link in adj[u]
                    if dist[v] == dist[u] - 1 and (v == h or v >= topo.n_hosts)]
            if hops:
                table[(u, h)] = hops
    return table


def path_links(topo: Topology, src: int, dst: int,
               table: dict[tuple[int, int], list[int]] | None = None) -> list[int]:
    """The links of one shortest path from host src to host dst.
    table: next_hops(topo), when the caller already has it; it is computed
    otherwise, which is a pass over every (node, host) pair: callers that
    want many paths compute it once and pass it."""
    if table is None:
        table = next_hops(topo)
    node, path = src, []
    while node != dst:
        link = table[(node, dst)][0]
        path.append(link)
        l = topo.links[link]
        node = l.b if l.a == node else l.a
    return path


def recipe_lines(topo: Topology) -> list[str]:
    """The ECMP table in the scenario recipe (harness.recipe): each host's
    address (side 0 of its link; ns-3 also makes that link the host's
    default route), then every switch's (node, host, next-hop link) routes,
    which ns-3 pushes into the node's EcmpRouting. A host is single-homed, so
    its routes would all name its one link: listing them made the table
    hosts x hosts (1.05 M of 1.31 M routes at 1,024 hosts on leaf-spine)."""
    lines = [f"host {h} {topo.host_link_index(h)}" for h in range(topo.n_hosts)]
    return lines + [f"route {node} {host} {link}"
                    for (node, host), links in next_hops(topo).items()
                    if node >= topo.n_hosts for link in links]
