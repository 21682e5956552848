"""Topologies: read from topologies/*.toml into a node/link graph
(harness.network.graph), and that graph's nodes and point-to-point links as lines of
the scenario recipe (harness.engine.recipe), which ns-3's TopologyBuilder builds.

Nodes are numbered hosts first (0..H-1), then switches. A switch is an IP
router node. Routing is `harness.network.routing`; queue discs are `harness.network.qdisc`.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from harness.config.scenario import (TOPOLOGIES_DIR, ConfigError, TopologyConfig, read_toml,
                            resolve_data_file)
from harness.config.errors import UnknownKeyError
from harness.network.graph import Link, Topology, check_reachable
from harness.config.schema.base import did_you_mean, validate
from harness.config.schema.topology import KINDS, MAX_NODES, Custom, LeafSpine, SingleTor
from harness.config.units import parse_link_rate, parse_time

_ADAPTERS = {kind: TypeAdapter(model) for kind, model in KINDS.items()}


def _check_size(n_nodes: int, field: str) -> None:
    """Checked before the links are built (their number grows with the nodes)."""
    if n_nodes > MAX_NODES:
        raise ConfigError(field, f"the topology would have {n_nodes} nodes; at most "
                          f"{MAX_NODES} (routes are computed for every node and host)")


def _single_tor(t: SingleTor, p: dict, where: str) -> Topology:
    _check_size(t.hosts + 1, f"{where}.hosts")
    links = tuple(Link(h, t.hosts, t.link_rate, t.link_delay) for h in range(t.hosts))
    return Topology("single-tor", t.hosts, 1, links, p)


def _leaf_spine(t: LeafSpine, p: dict, where: str) -> Topology:
    if t.leaves * t.hosts_per_leaf < 2:
        raise ConfigError(f"{where}.hosts_per_leaf", "the topology needs at least 2 hosts")
    hosts, per_leaf = t.leaves * t.hosts_per_leaf, t.hosts_per_leaf
    _check_size(hosts + t.leaves + t.spines, f"{where}.hosts_per_leaf")
    leaf0, spine0 = hosts, hosts + t.leaves
    links = [Link(h, leaf0 + h // per_leaf, t.host_link_rate, t.host_link_delay)
             for h in range(hosts)]
    links += [Link(leaf0 + l, spine0 + s, t.fabric_link_rate, t.fabric_link_delay)
              for l in range(t.leaves) for s in range(t.spines)]
    params = dict(p, oversubscription=per_leaf * t.host_link_rate /
                  (t.spines * t.fabric_link_rate))
    return Topology("leaf-spine", hosts, t.leaves + t.spines, tuple(links), params)


def _custom(t: Custom, p: dict, where: str) -> Topology:
    hosts, switches = t.hosts, t.switches
    _check_size(hosts + switches, f"{where}.switches")
    names = {f"h{i}": i for i in range(hosts)} | {f"s{i}": hosts + i for i in range(switches)}
    if not t.links:
        raise ConfigError(f"{where}.links", "expected a non-empty list of [a, b] pairs")
    links = [_custom_link(entry, names, t, f"{where}.links[{i}]")
             for i, entry in enumerate(t.links)]
    topo = Topology("custom", hosts, switches, tuple(links), p)
    for h in range(hosts):
        degree = sum(h in (l.a, l.b) for l in links)
        if degree != 1:
            raise ConfigError(f"{where}.links", f"host h{h} has {degree} links; "
                              "hosts must have exactly one (single-homed)")
    return topo


#: a custom link's own keys besides its two ends (each defaults to the file's link_rate, link_delay)
_LINK_KEYS = ("rate", "delay")


def _custom_link(entry, names: dict[str, int], t: Custom, where: str) -> Link:
    """One link of a custom topology: [a, b] at the file's link_rate and
    link_delay, [a, b, rate, delay], or a table {a, b, rate, delay} whose
    rate and delay may be left out (a fabric of host links at one rate and
    switch links at another)."""
    shape = ("expected [a, b], [a, b, rate, delay] or { a, b, rate, delay } with two "
             f"different node names of {', '.join(names)}")
    if isinstance(entry, dict):
        unknown = sorted(set(entry) - {"a", "b", *_LINK_KEYS})
        if unknown:
            raise UnknownKeyError(f"{where}.{unknown[0]}", "unknown key; allowed: a, b, "
                                  + ", ".join(_LINK_KEYS))
        ends, rate, delay = [entry.get("a"), entry.get("b")], entry.get("rate"), entry.get("delay")
    elif isinstance(entry, list) and len(entry) in (2, 4):
        ends = entry[:2]
        rate, delay = (entry[2], entry[3]) if len(entry) == 4 else (None, None)
    else:
        raise ConfigError(where, f"{shape}; got {entry!r}")
    if any(not isinstance(n, str) or n not in names for n in ends) or ends[0] == ends[1]:
        raise ConfigError(where, f"{shape}; got {entry!r}")
    return Link(names[ends[0]], names[ends[1]],
                t.link_rate if rate is None else parse_link_rate(rate, f"{where}.rate"),
                t.link_delay if delay is None else parse_time(delay, f"{where}.delay"))


_BUILDERS = {"single-tor": _single_tor, "leaf-spine": _leaf_spine, "custom": _custom}


def load_topology(cfg: TopologyConfig) -> Topology:
    """Read the topology file named by the scenario, apply its overrides, check
    it against its kind's model (harness.config.schema.topology)."""
    path = resolve_data_file(cfg.file, TOPOLOGIES_DIR, ".toml", "topology.file")
    data = read_toml(path, "topology.file")
    kind = data.pop("kind", None)
    if not isinstance(kind, str) or kind not in KINDS:
        raise ConfigError("topology.kind", f"{path}: unknown kind {kind!r}; "
                          f"allowed: {', '.join(KINDS)}")
    params = data | dict(cfg.overrides)
    for key, info in KINDS[kind].model_fields.items():
        if key not in params and key != "kind":
            raise ConfigError(f"topology.{key}", f"missing ({info.description}) in {path}")
    try:
        checked = validate(_ADAPTERS[kind], {"kind": kind, **params}, KINDS[kind],
                           rename=lambda field: f"topology.{field}")
    except UnknownKeyError as e:
        allowed = [k for k in KINDS[kind].model_fields if k != "kind"]
        near = did_you_mean(e.field.rsplit(".", 1)[-1], allowed)
        raise UnknownKeyError(e.field, f"unknown key for a {kind} topology{near}; allowed: "
                              f"{', '.join(allowed)}") from None
    topo = _BUILDERS[kind](checked, params, "topology")
    check_reachable(topo)
    return topo


# --------------------------------------------------------------------------
# ns-3


def recipe_lines(topo: Topology, mtu: int) -> list[str]:
    """The nodes and links in the scenario recipe (harness.engine.recipe): ns-3's
    TopologyBuilder creates them; queue discs follow, then addresses."""
    return [f"nodes {topo.n_nodes}"] + [
        f"link {link.a} {link.b} {int(link.rate_bps)} {int(round(link.delay_s * 1e9))} {mtu}"
        for link in topo.links]
