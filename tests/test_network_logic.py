"""Pure logic of the network: class -> ToS -> band tables, ECMP next hops, timers."""

from __future__ import annotations

import json

import pytest

from harness import qdisc, routing, tcp
from harness.config import BufferConfig, NetworkConfig, TopologyConfig
from harness.topology import load_topology

# ns-3's Socket::IpTos2Priority (Linux rt_tos2priority), for the ToS we use.
LINUX_TOS_PRIORITY = {0x00: 0, 0x08: 2, 0x10: 6, 0x18: 4}
PFIFO_FAST_PRIOMAP = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]


def test_tos_table_matches_linux_priorities():
    assert qdisc.TOS_PRIORITY == LINUX_TOS_PRIORITY


def test_pfifo_fast_classes_land_in_their_bands():
    table = qdisc.class_table(NetworkConfig(qdisc="pfifo_fast"))
    for name, band in table.classes.items():
        assert PFIFO_FAST_PRIOMAP[LINUX_TOS_PRIORITY[table.tos(name, "x")]] == band


@pytest.mark.parametrize("bands", [2, 3, 4])
def test_prio_classes_land_in_their_bands(bands):
    table = qdisc.class_table(NetworkConfig(qdisc="prio", bands=bands))
    priomap = qdisc.prio_priomap(bands)
    for band, tos in enumerate(table.band_tos):
        assert priomap[LINUX_TOS_PRIORITY[tos]] == band
    assert table.band("high", "x") == 0 and table.band("low", "x") == bands - 1


def test_leaf_spine_next_hops_are_all_spines():
    topo = load_topology(TopologyConfig(file="leaf-spine", overrides={"spines": 4, "leaves": 3}))
    table = routing.next_hops(topo)
    leaf0 = topo.n_hosts
    remote_host = topo.n_hosts - 1            # under the last leaf
    assert len(table[(leaf0, remote_host)]) == 4
    assert len(table[(0, remote_host)]) == 1  # hosts are single-homed
    assert len(routing.path_links(topo, 0, remote_host)) == 4
    assert len(routing.path_links(topo, 0, 1)) == 2
    assert topo.params["oversubscription"] == pytest.approx(1.0)


def test_a_fabric_beyond_1024_nodes_is_checked_without_ns3(monkeypatch, tmp_path):
    """1,024 hosts on 64 leaves and 4 spines (1,092 nodes, over the old cap of
    1,024): `harness check` plans it; ns-3 never starts."""
    from click.testing import CliRunner

    from harness import cli, ns3

    monkeypatch.setattr(ns3, "load", lambda *a, **k: pytest.fail("ns-3 was started"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, [
        "check", "--json", "--set", "topology.file=leaf-spine", "--set", "topology.leaves=64",
        "--set", "topology.spines=4", "--set", "topology.hosts_per_leaf=16"], prog_name="harness")
    assert result.exit_code == 0, result.output
    topo = json.loads(result.stdout)["topology"]
    assert (topo["hosts"], topo["switches"], topo["links"]) == (1024, 68, 1024 + 64 * 4)


def test_ideal_fct_computes_the_ecmp_table_once(monkeypatch):
    """Issue 27: the table per (src, dst) pair made post-processing grow as hosts^3."""
    import pandas as pd

    from harness import simulation

    topo = load_topology(TopologyConfig(file="leaf-spine", overrides={
        "spines": 4, "leaves": 4, "hosts_per_leaf": 4}))
    calls = []
    real = routing.next_hops
    monkeypatch.setattr(routing, "next_hops", lambda t: calls.append(1) or real(t))
    pairs = [(s, d) for s in range(topo.n_hosts) for d in range(topo.n_hosts) if s != d]
    raw = pd.DataFrame({"src_node": [s for s, _ in pairs], "dst_node": [d for _, d in pairs],
                        "size": [1000] * len(pairs)})
    ideal = simulation._ideal_fct(topo, raw)
    assert len(calls) == 1
    table = real(topo)
    for (s, d), fct in zip(pairs, ideal):
        links = [topo.links[i] for i in routing.path_links(topo, s, d, table)]
        assert fct == 1000 * 8 / min(l.rate_bps for l in links) + 2 * sum(l.delay_s for l in links)


def test_worst_case_rtt_from_queues_and_hops():
    topo = load_topology(TopologyConfig(file="single-tor", overrides={"link_rate": "10Gbps"}))
    net = NetworkConfig()   # one shared limit of 1,000 packets per port
    w = tcp.worst_case_rtt(topo, net, bands=3)
    per_hop = 10e-6 + 1001 * 1502 * 8 / 10e9
    assert w == pytest.approx(2 * 2 * per_hop)
    per_band = net.replace(buffer=BufferConfig(model="per_band"))
    assert tcp.worst_case_rtt(topo, per_band, bands=3) == pytest.approx(
        2 * 2 * (10e-6 + 3001 * 1502 * 8 / 10e9))    # every band full
    attrs = tcp.attribute_defaults(__import__("harness.config").config.TcpConfig(), w)
    assert attrs["ns3::TcpSocketBase::MinRto"] == f"{round(1.5 * w * 1e9)}ns"
