"""Weighted DRR and ECN marking over real ns-3 (issue 16): two saturating
flows share one 1 Gbit/s bottleneck (hosts 0 and 1 -> host 2 through the
ToR, node 4), measured from the link's bytes per class after warm-up."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import small_plan, with_flows
from harness.config.scenario import ConfigError, load_scenario
from harness.network.qdisc import PRIO_BAND_TOS

HIGH, LOW = PRIO_BAND_TOS[0], PRIO_BAND_TOS[2]   # bands 0 and 2 of 3
SWITCH, DST = 4, 2
BULK = 100_000_000        # more than the run can send: both flows stay backlogged
WINDOW_START = 0.1        # s: after slow start and the queues' fill


def bulk_plan(*overrides: str, classes=(HIGH, LOW), duration: float = 0.3):
    p = small_plan(f"run.duration={duration}", "run.warmup=0", "run.cooldown=0.001",
                   "run.utilization_interval=0.01", *overrides)
    return with_flows(p, [dict(start_ns=1_000_000, src=src, dst=DST, size=BULK, tos=tos)
                          for src, tos in enumerate(classes)])


def bottleneck(result) -> tuple[pd.Series, float]:
    """Bytes per class on switch -> host 2 after warm-up, and the link's
    mean utilisation there."""
    u = result.utilization
    d = u[(u.from_node == SWITCH) & (u.to_node == DST) & (u.t_s >= WINDOW_START)]
    return d.groupby("traffic_class")["bytes"].sum(), float(
        d.groupby("t_s")["utilization"].sum().mean())


def bottleneck_queue(result) -> pd.DataFrame:
    q = result.queues
    return q[(q.from_node == SWITCH) & (q.to_node == DST)].set_index("band")


DRR = ['network.qdisc="drr"', "network.weights={high=3,low=1}",
       # short bands: the window is many round trips long (a 1000-packet band
       # is 12 ms of queue at 1 Gbit/s, and slow start's overshoot lasts)
       "network.band_limit_packets=100",
       # DRR's shares hold while both bands are backlogged: a buffer of their
       # own each (under one shared limit the greedier class crowds out the
       # other's queue, tests/test_buffer_models.py)
       'network.buffer.model="per_band"']


def test_drr_weights_3_to_1_share_the_link_75_25(run_plan):
    result = run_plan(bulk_plan(*DRR))
    by_class, utilization = bottleneck(result)
    share = by_class / by_class.sum()
    assert share["high"] == pytest.approx(0.75, abs=0.02)
    assert share["low"] == pytest.approx(0.25, abs=0.02)
    assert utilization > 0.98
    q = bottleneck_queue(result)
    # per-band statistics: both bands backlogged, the normal band unused
    assert q.loc[0, "dequeued_packets"] > 2.5 * q.loc[2, "dequeued_packets"] > 0
    assert q.loc[1, "enqueued_packets"] == 0
    assert result.plan.resolved()["drr_quanta_bytes"] == [4500, 1500, 1500]


def test_drr_is_work_conserving(run_plan):
    """The light class alone takes the whole link."""
    by_class, utilization = bottleneck(run_plan(bulk_plan(*DRR, classes=(LOW,))))
    assert set(by_class.index) == {"low"}
    assert utilization > 0.98


def test_drr_equal_weights_share_equally(run_plan):
    by_class, _ = bottleneck(run_plan(bulk_plan('network.qdisc="drr"',
                                                "network.band_limit_packets=100")))
    assert (by_class / by_class.sum())["high"] == pytest.approx(0.5, abs=0.02)


def test_strict_priority_starves_where_drr_shares(run_plan):
    """The same two flows under prio: the high band takes everything."""
    by_class, _ = bottleneck(run_plan(bulk_plan('network.qdisc="prio"',
                                                "network.band_limit_packets=100")))
    assert by_class.get("low", 0) < 0.01 * by_class.sum()


K = 20


def test_dctcp_with_marking_keeps_the_queue_near_k(run_plan):
    """Two DCTCP flows in one band with step marking at K: the queue stays
    around K while the link stays full; cubic without marking fills the band."""
    dctcp = run_plan(bulk_plan('tcp.congestion_control="dctcp"', f"network.ecn_threshold={K}",
                               classes=(HIGH, HIGH)))
    q = bottleneck_queue(dctcp).loc[0]
    assert q["marked_packets"] > 100
    assert q["dropped_packets"] == 0
    assert q["mean_backlog_packets"] < 1.5 * K
    assert q["max_backlog_packets"] < 4 * K   # slow start's overshoot included
    assert bottleneck(dctcp)[1] > 0.98
    assert dctcp.plan.tcp_defaults["ns3::TcpSocketBase::UseEcn"] == "On"
    marks = {r["band"]: r["marked_packets"] for r in dctcp.summary["queues"]}
    assert marks[0] > 100 and marks[1] == marks[2] == 0

    cubic = run_plan(bulk_plan('tcp.congestion_control="cubic"', classes=(HIGH, HIGH)))
    q = bottleneck_queue(cubic).loc[0]
    assert q["marked_packets"] == 0
    assert q["max_backlog_packets"] == 1000          # the band's limit
    assert q["mean_backlog_packets"] > 10 * K
    assert "ns3::TcpSocketBase::UseEcn" not in cubic.plan.tcp_defaults


def test_dctcp_where_its_traffic_is_not_marked_is_refused():
    """DCTCP's one congestion signal is the mark: a threshold on `low` only,
    while the background's `high` band carries DCTCP too, is refused."""
    with pytest.raises(ConfigError) as e:
        bulk_plan(*DRR, 'tcp.congestion_control="dctcp"', f"network.ecn_threshold={{ low = {K} }}")
    assert e.value.field == "network.ecn_threshold" and "'high'" in str(e.value)


def test_ecn_in_a_drr_band_marks_only_that_band(run_plan):
    """ECN bits do not move a packet to another band: ECN-capable flows in
    `low` with marking only there stay in band 2, which holds its queue near
    K; the flow in the unmarked `high` band runs on losses. (Classic ECN:
    DCTCP with an unmarked band is refused, see above.)"""
    result = run_plan(bulk_plan(*DRR, "tcp.ecn=true", f"network.ecn_threshold={{ low = {K} }}"))
    q = bottleneck_queue(result)
    assert q.loc[2, "marked_packets"] > 100 and q.loc[0, "marked_packets"] == 0
    assert q.loc[2, "mean_backlog_packets"] < 1.5 * K
    assert q.loc[1, "enqueued_packets"] == 0
    # the unmarked band works by loss; the marked one without any
    assert q.loc[0, "dropped_packets"] > 0 and q.loc[2, "dropped_packets"] == 0
    by_class, _ = bottleneck(result)
    # low gets at least its weight (more while the lossy high band refills)
    assert 0.23 < (by_class / by_class.sum())["low"] < 0.35


def test_newreno_with_marking_uses_classic_ecn(run_plan):
    """Marking alone turns TCP ECN on (tcp.ecn left out): newreno halves on
    marks (RFC 3168) instead of filling the band to its first loss."""
    p = bulk_plan(f"network.ecn_threshold={K}", classes=(HIGH, HIGH), duration=0.15)
    assert p.tcp_defaults["ns3::TcpSocketBase::UseEcn"] == "On"
    q = bottleneck_queue(run_plan(p)).loc[0]
    assert q["marked_packets"] > 0
    assert q["max_backlog_packets"] < 1000 and q["mean_backlog_packets"] < 3 * K


def test_marking_without_tcp_ecn_marks_nothing(run_plan):
    """tcp.ecn = false: the transport is not ECN-capable, the band is a FIFO."""
    result = run_plan(bulk_plan(f"network.ecn_threshold={K}", "tcp.ecn=false",
                                classes=(HIGH, HIGH), duration=0.15))
    q = bottleneck_queue(result).loc[0]
    assert q["marked_packets"] == 0 and q["max_backlog_packets"] > 10 * K


def test_same_seed_same_tables(run_plan):
    a = run_plan(bulk_plan(*DRR, f"network.ecn_threshold={K}", duration=0.1))
    b = run_plan(bulk_plan(*DRR, f"network.ecn_threshold={K}", duration=0.1))
    pd.testing.assert_frame_equal(a.queues, b.queues)
    pd.testing.assert_frame_equal(a.utilization, b.utilization)
    assert a.summary == b.summary


def test_dctcp_without_marking_is_refused():
    with pytest.raises(ConfigError) as e:
        load_scenario(None, ['tcp.congestion_control="dctcp"'])
    assert e.value.field == "tcp.congestion_control"
    assert "network.ecn_threshold" in str(e.value)
    load_scenario(None, ['tcp.congestion_control="dctcp"', "network.ecn_threshold=20"])


def test_ecn_settings_scale_and_enter_the_digest():
    from harness.engine.planning import plan

    base = load_scenario(None, [])
    marked = load_scenario(None, ["network.ecn_threshold={ low = 20 }"])
    assert base.digest() != marked.digest()
    assert base.tcp.ecn is None and base.network.ecn_threshold is None  # nothing marks
    p = plan(load_scenario(None, ["scale=10", "network.ecn_threshold=25"]))
    assert p.network.ecn_threshold == 2 and p.network.band_limit_packets == 100
    assert p.resolved()["ecn_threshold_packets"] == [2, 2, 2]
