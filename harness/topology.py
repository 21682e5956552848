"""Topologies: read from topologies/*.toml into a node/link graph
(harness.graph), and that graph's nodes and point-to-point links as lines of
the scenario recipe (harness.recipe), which ns-3's TopologyBuilder builds.

Nodes are numbered hosts first (0..H-1), then switches. A switch is an IP
router node. Routing is `harness.routing`; queue discs are `harness.qdisc`.
"""

from __future__ import annotations

from harness.config import (TOPOLOGIES_DIR, ConfigError, TopologyConfig, parse_time,
                            read_toml, resolve_data_file)
from harness.errors import UnknownKeyError
from harness.units import parse_link_rate
from harness.graph import Link, Topology, check_reachable

# The harness computes routes for every (node, destination host) pair in
# Python and ns-3 holds them per node: beyond this many nodes planning alone
# takes minutes and gigabytes (a packet-level run of such a network, days).
MAX_NODES = 1024

# Keys each kind of topology file takes, with what they mean.
KIND_KEYS = {
    "single-tor": {"hosts": "number of hosts on the one switch",
                   "link_rate": "host link rate", "link_delay": "host link delay"},
    "leaf-spine": {"leaves": "number of leaf (ToR) switches", "spines": "number of spines",
                   "hosts_per_leaf": "hosts under each leaf",
                   "host_link_rate": "host-leaf rate", "host_link_delay": "host-leaf delay",
                   "fabric_link_rate": "leaf-spine rate", "fabric_link_delay": "leaf-spine delay"},
    "custom": {"hosts": "number of hosts", "switches": "number of switches",
               "links": "list of [a, b] pairs of node names (h0.., s0..)",
               "link_rate": "rate of every link", "link_delay": "delay of every link"},
}


def _int_param(data: dict, key: str, where: str, minimum: int = 1) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}.{key}", f"expected an integer, got {value!r}")
    if value < minimum:
        raise ConfigError(f"{where}.{key}", f"must be >= {minimum} (got {value})")
    if value > MAX_NODES:
        raise ConfigError(f"{where}.{key}", f"must be <= {MAX_NODES} (got {value}): a "
                          f"topology has at most {MAX_NODES} nodes")
    return value


def _check_size(n_nodes: int, field: str) -> None:
    """Checked before the links are built (their number grows with the nodes)."""
    if n_nodes > MAX_NODES:
        raise ConfigError(field, f"the topology would have {n_nodes} nodes; at most "
                          f"{MAX_NODES} (routes are computed for every node and host)")


def _single_tor(p: dict, where: str) -> Topology:
    hosts = _int_param(p, "hosts", where, 2)
    _check_size(hosts + 1, f"{where}.hosts")
    rate = parse_link_rate(p["link_rate"], f"{where}.link_rate")
    delay = parse_time(p["link_delay"], f"{where}.link_delay")
    links = tuple(Link(h, hosts, rate, delay) for h in range(hosts))
    return Topology("single-tor", hosts, 1, links, p)


def _leaf_spine(p: dict, where: str) -> Topology:
    leaves = _int_param(p, "leaves", where)
    spines = _int_param(p, "spines", where)
    per_leaf = _int_param(p, "hosts_per_leaf", where)
    if leaves * per_leaf < 2:
        raise ConfigError(f"{where}.hosts_per_leaf", "the topology needs at least 2 hosts")
    host_rate = parse_link_rate(p["host_link_rate"], f"{where}.host_link_rate")
    host_delay = parse_time(p["host_link_delay"], f"{where}.host_link_delay")
    fabric_rate = parse_link_rate(p["fabric_link_rate"], f"{where}.fabric_link_rate")
    fabric_delay = parse_time(p["fabric_link_delay"], f"{where}.fabric_link_delay")
    hosts = leaves * per_leaf
    _check_size(hosts + leaves + spines, f"{where}.hosts_per_leaf")
    leaf0, spine0 = hosts, hosts + leaves
    links = [Link(h, leaf0 + h // per_leaf, host_rate, host_delay) for h in range(hosts)]
    links += [Link(leaf0 + l, spine0 + s, fabric_rate, fabric_delay)
              for l in range(leaves) for s in range(spines)]
    params = dict(p, oversubscription=per_leaf * host_rate / (spines * fabric_rate))
    return Topology("leaf-spine", hosts, leaves + spines, tuple(links), params)


def _custom(p: dict, where: str) -> Topology:
    hosts = _int_param(p, "hosts", where, 2)
    switches = _int_param(p, "switches", where, 0)
    _check_size(hosts + switches, f"{where}.switches")
    rate = parse_link_rate(p["link_rate"], f"{where}.link_rate")
    delay = parse_time(p["link_delay"], f"{where}.link_delay")
    names = {f"h{i}": i for i in range(hosts)} | {f"s{i}": hosts + i for i in range(switches)}
    pairs = p["links"]
    if not isinstance(pairs, list) or not pairs:
        raise ConfigError(f"{where}.links", "expected a non-empty list of [a, b] pairs")
    links = []
    for i, pair in enumerate(pairs):
        if (not isinstance(pair, list) or len(pair) != 2
                or any(not isinstance(n, str) or n not in names for n in pair)
                or pair[0] == pair[1]):
            raise ConfigError(f"{where}.links[{i}]", f"expected [a, b] with two different node "
                              f"names of {', '.join(names)}; got {pair!r}")
        links.append(Link(names[pair[0]], names[pair[1]], rate, delay))
    topo = Topology("custom", hosts, switches, tuple(links), p)
    for h in range(hosts):
        degree = sum(h in (l.a, l.b) for l in links)
        if degree != 1:
            raise ConfigError(f"{where}.links", f"host h{h} has {degree} links; "
                              "hosts must have exactly one (single-homed)")
    return topo


_BUILDERS = {"single-tor": _single_tor, "leaf-spine": _leaf_spine, "custom": _custom}


def load_topology(cfg: TopologyConfig) -> Topology:
    """Read the topology file named by the scenario, apply its overrides, check it."""
    path = resolve_data_file(cfg.file, TOPOLOGIES_DIR, ".toml", "topology.file")
    data = read_toml(path, "topology.file")
    kind = data.pop("kind", None)
    if not isinstance(kind, str) or kind not in KIND_KEYS:
        raise ConfigError("topology.kind", f"{path}: unknown kind {kind!r}; "
                          f"allowed: {', '.join(KIND_KEYS)}")
    allowed = KIND_KEYS[kind]
    for key in list(data) + list(cfg.overrides):
        if key not in allowed:
            raise UnknownKeyError(f"topology.{key}", f"unknown key for a {kind} topology; "
                              f"allowed: {', '.join(allowed)}")
    params = data | dict(cfg.overrides)
    for key in allowed:
        if key not in params:
            raise ConfigError(f"topology.{key}", f"missing ({allowed[key]}) in {path}")
    topo = _BUILDERS[kind](params, "topology")
    check_reachable(topo)
    return topo


# --------------------------------------------------------------------------
# ns-3


def recipe_lines(topo: Topology, mtu: int) -> list[str]:
    """The nodes and links in the scenario recipe (harness.recipe): ns-3's
    TopologyBuilder creates them; queue discs follow, then addresses."""
    return [f"nodes {topo.n_nodes}"] + [
        f"link {link.a} {link.b} {int(link.rate_bps)} {int(round(link.delay_s * 1e9))} {mtu}"
        for link in topo.links]
