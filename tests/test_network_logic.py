"""Pure logic of the network: class -> ToS -> band tables, ECMP next hops, timers."""

from __future__ import annotations

import json

import pytest

from harness.network import qdisc, routing, tcp
from harness.config.scenario import BufferConfig, NetworkConfig, TcpConfig, TopologyConfig
from harness.network.topology import load_topology

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

    from harness import cli
    from harness.engine import ns3

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

    from harness.engine import simulation

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
    attrs = tcp.attribute_defaults(TcpConfig(), w)
    assert attrs["ns3::TcpSocketBase::MinRto"] == f"{round(1.5 * w * 1e9)}ns"


CUSTOM_FABRIC = """kind = "custom"
hosts = 4
switches = 2
link_rate = "1Gbps"
link_delay = "10us"
links = [["h0", "s0"], ["h1", "s0"], ["h2", "s1", "2Gbps", "3us"],
         { a = "h3", b = "s1", delay = "4us" }, { a = "s0", b = "s1", rate = "10Gbps" }]
"""


def test_a_custom_fabric_gives_each_link_its_own_rate_and_delay(tmp_path):
    """Host links at one rate, fabric links at another, in one custom topology;
    a link without its own takes the file's link_rate and link_delay."""
    path = tmp_path / "fabric.toml"
    path.write_text(CUSTOM_FABRIC)
    topo = load_topology(TopologyConfig(file=str(path)))
    got = [(l.a, l.b, l.rate_bps, round(l.delay_s * 1e9)) for l in topo.links]
    assert got == [(0, 4, 1e9, 10_000), (1, 4, 1e9, 10_000), (2, 5, 2e9, 3_000),
                   (3, 5, 1e9, 4_000), (4, 5, 10e9, 10_000)]


@pytest.mark.parametrize("link, message", [
    ('["h0", "s0", "2Gbps"]', "expected [a, b], [a, b, rate, delay]"),
    ('{ a = "h0", b = "s0", speed = "2Gbps" }', "links[0].speed: unknown key; allowed: a, b, rate"),
    ('["h0", "s0", "fast", "1us"]', "links[0].rate"),
    ('{ a = "h0", b = "s0", delay = -1 }', "links[0].delay"),
])
def test_a_custom_link_of_the_wrong_shape_is_named(tmp_path, link, message):
    from harness.config.errors import ConfigError

    path = tmp_path / "bad.toml"
    path.write_text('kind = "custom"\nhosts = 2\nswitches = 1\nlink_rate = "1Gbps"\n'
                    f'link_delay = "10us"\nlinks = [{link}, ["h1", "s0"]]\n')
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_topology(TopologyConfig(file=str(path)))


def test_a_1448_byte_segment_fills_a_1500_byte_mtu():
    """The data segment's headers as ns-3 sends them (IPv4 20, TCP 20, the
    timestamp option 12): 1448 B fit a 1500 B MTU, 1449 B are refused with
    the largest that fits (the old bound, 60 B of headers, refused 1448)."""
    from harness.config.errors import ConfigError
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    assert plan(load_scenario(None, ["tcp.segment_size=1448"])).scenario.tcp.segment_size == 1448
    with pytest.raises(ConfigError, match=r"tcp\.segment_size: .*\(52 B\).* at most 1448 B"):
        plan(load_scenario(None, ["tcp.segment_size=1449"]))


def test_tcp_timers_from_the_network_or_ns3_s_own():
    """tcp.timers = "network" (the default) scales every timer with the
    worst-case RTT W; "ns3" leaves them to ns-3's defaults (a 1 s minimum
    RTO), and the run says which (a new key at its default leaves digests)."""
    from harness.config.scenario import load_scenario

    w = 0.05
    ours = tcp.attribute_defaults(TcpConfig(), w)
    assert ours["ns3::TcpSocketBase::MinRto"] == f"{round(1.5 * w * 1e9)}ns"
    assert ours["ns3::RttEstimator::InitialEstimation"] == f"{round(2 * w * 1e9)}ns"
    own = tcp.attribute_defaults(TcpConfig(timers="ns3"), w)
    assert not set(tcp.TIMERS_OF_W) & set(own)
    assert "ns3::TcpSocketBase::ClockGranularity" not in own
    assert set(ours) - set(own) == {*tcp.TIMERS_OF_W, "ns3::TcpSocketBase::ClockGranularity"}
    assert "1.5 W = 75.000 ms" in tcp.timers_line(TcpConfig(), w)
    assert "ns-3's own" in tcp.timers_line(TcpConfig(timers="ns3"), w)
    assert load_scenario(None, ['tcp.timers="network"']).digest() == load_scenario(None).digest()
    assert load_scenario(None, ['tcp.timers="ns3"']).digest() != load_scenario(None).digest()
