"""Background flows over real ns-3: FCTs, priority bands, determinism."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import small_plan, with_flows
from harness.network.qdisc import PFIFO_FAST_BAND_TOS
from harness.engine.simulation import write_run_dir

HIGH, NORMAL, LOW = PFIFO_FAST_BAND_TOS
RATE = 1e9
DELAY = 10e-6
WIRE_EFFICIENCY = 1380 / (1380 + 54)  # payload / (payload + PPP 2 + IP 20 + TCP 20 + TS 12)


def ideal_fct(size: int, hops: int = 2) -> float:
    """Handshake (one RTT), the bytes at line rate, and the last packet's way."""
    frame = 1434 * 8 / RATE
    one_way = hops * (DELAY + frame)
    return 2 * one_way + size * 8 / (RATE * WIRE_EFFICIENCY) + one_way


def quiet_plan(*overrides: str, duration: float = 0.3):
    return small_plan(f"run.duration={duration}", "run.warmup=0", "run.cooldown=0.001",
                      *overrides)


def test_one_flow_on_idle_path_delivers_all_bytes_at_line_rate(run_plan):
    size = 5_000_000
    p = with_flows(quiet_plan(), [dict(start_ns=10_000_000, src=0, dst=1, size=size)])
    flows = run_plan(p).flows
    assert len(flows) == 1
    f = flows.iloc[0]
    assert f.completed and f.error == ""
    assert f.received_bytes == size
    assert f.fct_s == pytest.approx(ideal_fct(size), rel=0.05)


def test_high_flow_is_unaffected_by_a_competing_low_flow(run_plan):
    size = 3_000_000
    alone = run_plan(with_flows(quiet_plan(), [
        dict(start_ns=10_000_000, src=0, dst=2, size=size, tos=HIGH)])).flows
    both = run_plan(with_flows(quiet_plan(), [
        dict(start_ns=10_000_000, src=0, dst=2, size=size, tos=HIGH),
        dict(start_ns=10_000_000, src=1, dst=2, size=size, tos=LOW)]))
    high, low = both.flows.iloc[0], both.flows.iloc[1]
    assert high.completed and low.completed
    assert high.fct_s == pytest.approx(alone.iloc[0].fct_s, rel=0.05)
    # The low flow waited for the high one: it cannot beat two transfers' time.
    assert low.fct_s > 1.8 * high.fct_s

    q = both.queues.set_index(["from_node", "to_node", "band"])["enqueued_packets"]
    switch = 4
    # Data goes out of each sender in its own band; the switch port towards
    # the receiver carries both bands; the receiver's ACKs follow their data.
    assert q[(0, switch, 0)] > 0 and q[(0, switch, 2)] == 0
    assert q[(1, switch, 2)] > 0 and q[(1, switch, 0)] == 0
    assert q[(switch, 2, 0)] > 1000 and q[(switch, 2, 2)] > 1000
    assert q[(2, switch, 0)] > 0 and q[(2, switch, 2)] > 0
    assert q.xs(1, level="band").sum() == 0  # nothing in the normal band


@pytest.mark.parametrize("retries, survives", [(15, True), (6, False)])
def test_a_starved_low_flow_survives_linux_retries(run_plan, retries, survives):
    """A low flow starved by a high one for 1.5 s: its backed-off
    retransmission timeouts (min RTO 7.3 ms here) add up to ~0.93 s after 6
    retransmissions, where ns-3's own default (DataRetries 6) gives the
    connection up; with Linux's 15 (the default) it finishes right after the
    high flow."""
    p = quiet_plan('network.qdisc="prio"', "network.buffer.size=100",
                   f"tcp.data_retries={retries}", duration=2.5)
    assert p.tcp_defaults["ns3::TcpSocket::DataRetries"] == str(retries)
    high_bytes = 190_000_000           # 1.5 s of the 1 Gbit/s link
    flows = run_plan(with_flows(p, [
        dict(start_ns=1_000_000, src=1, dst=2, size=1_000_000, tos=LOW),
        dict(start_ns=1_100_000, src=0, dst=2, size=high_bytes, tos=HIGH)])).flows
    low, high = flows.iloc[0], flows.iloc[1]
    assert high.completed
    assert low.completed == survives
    if survives:
        assert low.error == "" and low.received_bytes == 1_000_000
        assert high.fct_s < low.fct_s < high.fct_s + 0.05
    else:
        assert low.error != "" and low.received_bytes < 1_000_000


def test_ack_class_can_be_fixed(run_plan):
    p = with_flows(quiet_plan(), [dict(start_ns=10_000_000, src=0, dst=2, size=500_000,
                                       tos=LOW)])
    import dataclasses
    p = dataclasses.replace(p, ack_tos=HIGH)
    q = run_plan(p).queues.set_index(["from_node", "to_node", "band"])["enqueued_packets"]
    assert q[(2, 4, 0)] > 0 and q[(2, 4, 2)] == 0  # ACKs high
    assert q[(0, 4, 2)] > 0                         # data low


def test_leaf_spine_spreads_flows_over_spines_without_splitting_any(run_plan):
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    spines = 3
    p = plan(load_scenario(None, [
        'topology.file="leaf-spine"', f"topology.spines={spines}", "topology.leaves=2",
        "topology.hosts_per_leaf=2", 'topology.host_link_rate="1Gbps"',
        'topology.fabric_link_rate="1Gbps"', "run.duration=0.35", "run.warmup=0",
        "run.cooldown=0.001", "run.utilization_interval=0.01"]))
    # 30 flows leaf 0 -> leaf 1, one every 10 ms, each done well inside its 10 ms bin.
    rows = [dict(start_ns=10_000_000 * k + 500_000, src=k % 2, dst=2 + (k // 2) % 2,
                 size=150_000) for k in range(30)]
    result = run_plan(with_flows(p, rows))
    assert result.flows["completed"].all()

    topo = p.topology
    leaf0, spine0 = topo.n_hosts, topo.n_hosts + 2
    util = result.utilization
    up = util[(util.from_node == leaf0) & (util.to_node >= spine0) & (util.app == "background")]
    per_bin = up.groupby("t_s")["to_node"].nunique()
    assert len(per_bin) == 30
    assert (per_bin == 1).all(), "a flow's packets left leaf 0 on more than one spine"
    assert set(up["to_node"]) == set(range(spine0, spine0 + spines)), "a spine was never used"


def test_same_seed_gives_identical_flow_tables(run_plan, tmp_path):
    overrides = ("run.duration=0.4", "run.warmup=0.05", "run.cooldown=0.05",
                 "background.load=0.15")
    a = run_plan(small_plan(*overrides))
    b = run_plan(small_plan(*overrides))
    assert len(a.flows) > 5
    pd.testing.assert_frame_equal(a.flows, b.flows)
    write_run_dir(a, tmp_path / "a")
    write_run_dir(b, tmp_path / "b")
    assert (tmp_path / "a" / "flows.parquet").read_bytes() == \
        (tmp_path / "b" / "flows.parquet").read_bytes()
    c = run_plan(small_plan(*overrides, "seed=2"))
    assert not a.flows[["size", "start_s"]].equals(c.flows[["size", "start_s"]])


def test_background_run_accounts_for_every_byte(run_plan):
    # A 30 MB flow needs ~0.25 s alone at 1 Gbit/s: a long cool-down lets all finish.
    r = run_plan(small_plan("run.duration=0.8", "run.warmup=0.05", "run.cooldown=0.6",
                            "background.load=0.15"))
    done = r.flows[r.flows.completed]
    assert (done.received_bytes == done["size"]).all()
    assert r.summary["completion_ratio"] == 1.0
    assert r.summary["socket_errors"] == 0
    # Utilisation accounts for at least the payload that was delivered.
    assert r.utilization["bytes"].sum() > done["size"].sum()


@pytest.mark.parametrize("flows, ends", [
    # a measured flow (starts in the window [0, 0.1]) ends the run as it completes
    ([dict(start_ns=90_000_000, src=0, dst=1, size=2_000_000),
      dict(start_ns=150_000_000, src=2, dst=3, size=50_000_000)], "flow"),
    # none measured: the run ends with the window
    ([dict(start_ns=150_000_000, src=0, dst=1, size=2_000_000)], "window"),
    # one that cannot complete in the cool-down: the run goes on to its duration
    ([dict(start_ns=90_000_000, src=0, dst=1, size=100_000_000)], "duration"),
])
def test_the_run_ends_once_the_measured_flows_are_done(run_plan, flows, ends):
    p = with_flows(small_plan("run.duration=0.3", "run.warmup=0", "run.cooldown=0.2"), flows)
    r = run_plan(p)
    simulated, (_, window_end) = r.summary["simulated_s"], r.summary["window_s"]
    f = r.flows
    assert window_end == pytest.approx(0.1)
    if ends == "flow":
        first = f.iloc[0]
        assert first.measured and first.completed
        assert simulated == pytest.approx(first.start_s + first.fct_s, abs=1e-9)
        assert not f.iloc[1].completed    # started in the cool-down, cut off
    elif ends == "window":
        assert simulated == pytest.approx(0.1, abs=1e-9) and not f["measured"].any()
    else:
        assert simulated == pytest.approx(0.3, abs=1e-9) and not f.iloc[0].completed


def test_a_fabric_of_more_than_1024_nodes_builds_and_carries_flows(run_plan, tmp_path):
    """1,106 nodes (past the old cap of 1,024), yet few routes: 4 hosts on two
    switches, 1,100 more switches hanging off the first. ns-3 builds it (a
    /30 per link, node ids, MACs) and a flow crosses it."""
    links = [["h0", "s0"], ["h1", "s0"], ["h2", "s1"], ["h3", "s1"], ["s0", "s1"]]
    links += [["s0", f"s{i}"] for i in range(2, 1102)]
    path = tmp_path / "wide.toml"
    path.write_text('kind = "custom"\nhosts = 4\nswitches = 1102\nlink_rate = "1Gbps"\n'
                    f'link_delay = "10us"\nlinks = {links!r}\n'.replace("'", '"'))
    p = with_flows(small_plan(f"topology.file={str(path)!r}", "run.duration=0.02",
                              "run.warmup=0", "run.cooldown=0.001"),
                   [dict(start_ns=1_000_000, src=0, dst=3, size=100_000)])
    assert p.topology.n_nodes == 1106
    flows = run_plan(p).flows
    assert flows["completed"].all() and flows["received_bytes"].sum() == 100_000
