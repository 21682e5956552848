"""The reference suite's traffic features over real ns-3 (issue 50): Poisson
UDP packets (`kind = "poisson"`), long-lived bulk TCP flows (`kind =
"bulk"`) and random loss on a link (`[network.loss]`). Each is held to
what it promises: Poisson gaps (exponential, at the mean rate), bulk flows
that fill the link and share it, loss that costs TCP throughput; the same
seed gives the same tables, and a scenario without them keeps its digest."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from conftest import scenario_plan
from harness.traffic.services import TCP_FRAME_OVERHEAD

BASE = """
name = "sources"
seed = 3
[run]
duration = 0.1
warmup = 0.02
cooldown = 0.0
[topology]
file = "single-tor-1g"
hosts = 3
[background]
enabled = false
"""

POISSON = BASE + """
[[service]]
name = "p"
kind = "poisson"
source = 0
destination = 1
bitrate = "200Mbps"
packet_size = 1000
"""

BULK = BASE + """
[[service]]
name = "bulk"
kind = "bulk"
sources = [0, 1]
destination = 2
"""


@pytest.fixture(scope="module")
def poisson_run(tmp_path_factory):
    from harness.engine.simulation import execute

    return execute(scenario_plan(tmp_path_factory.mktemp("p"), POISSON), progress=False, quiet=True)


def test_poisson_packets_have_exponential_gaps_at_the_mean_rate(poisson_run):
    packets = poisson_run.streams.sort_values("seq")
    sent = packets["sent_ns"].to_numpy() / 1e9
    gaps = np.diff(sent)
    mean_gap = 1000 * 8 / 200e6                       # 40 us
    # the count over 0.1 s is Poisson(2,500): within 4 standard deviations
    assert abs(len(sent) - 0.1 / mean_gap) < 4 * np.sqrt(0.1 / mean_gap)
    assert gaps.mean() == pytest.approx(mean_gap, rel=0.05)
    # exponential, not constant: coefficient of variation ~1, and the
    # Kolmogorov-Smirnov test does not reject an exponential of that mean
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.1)
    assert stats.kstest(gaps, "expon", args=(0, mean_gap)).pvalue > 0.001
    s = poisson_run.summary["services"]["p"]
    assert s["kind"] == "poisson" and s["lost"] == 0.0


def test_poisson_packets_repeat_with_the_seed_and_change_with_it(tmp_path, poisson_run,
                                                                run_plan):
    again = run_plan(scenario_plan(tmp_path, POISSON))
    assert again.streams.equals(poisson_run.streams)
    other = run_plan(scenario_plan(tmp_path, POISSON, "seed=4"))
    assert not np.array_equal(other.streams["sent_ns"].to_numpy()[:50],
                              poisson_run.streams["sent_ns"].to_numpy()[:50])


def test_bulk_flows_fill_the_bottleneck_and_share_it(tmp_path, run_plan):
    """Two flows into host 2's link: once slow start's losses are repaired
    (0.2 s of warm-up; before, data held out of order at the receiver
    reaches the application later, in a burst) they keep it full, each with
    a share (NewReno over a drop-tail queue converges to fairness slowly: no
    equal split is asked)."""
    run = run_plan(scenario_plan(tmp_path, BULK, "run.duration=0.4", "run.warmup=0.2"))
    s = run.summary["services"]["bulk"]
    mss = run.plan.scenario.tcp.segment_size
    payload_bps = 1e9 * mss / (mss + TCP_FRAME_OVERHEAD)
    assert s["flows"] == 2
    assert 0.95 * payload_bps < s["goodput_bps"] <= payload_bps * 1.001
    assert min(s["flow_goodput_bps"]) > 0.1 * s["goodput_bps"]


def test_random_loss_costs_a_tcp_flow_throughput(tmp_path, run_plan):
    one = BASE + """
[[service]]
name = "bulk"
kind = "bulk"
sources = [0]
destination = 1
"""
    clean = run_plan(scenario_plan(tmp_path, one)).summary["services"]["bulk"]["goodput_bps"]
    lossy = run_plan(scenario_plan(tmp_path, one, "network.loss={rate=0.01, hosts=[1]}"))
    again = run_plan(scenario_plan(tmp_path, one, "network.loss={rate=0.01, hosts=[1]}"))
    got = lossy.summary["services"]["bulk"]["goodput_bps"]
    assert got < 0.7 * clean
    assert got == again.summary["services"]["bulk"]["goodput_bps"]   # same seed, same losses
    assert lossy.plan.losses == ((1, 0, 0.01),)


def test_new_keys_left_out_keep_the_digest(tmp_path):
    """network.loss at its default (none) and no services: the digest is
    the one of the file without them."""
    plain = scenario_plan(tmp_path, BASE).scenario.digest()
    lossy = scenario_plan(tmp_path, BASE, "network.loss={rate=0.01}").scenario.digest()
    assert plain != lossy
    assert "loss" not in scenario_plan(tmp_path, BASE).scenario.digest_data()["network"]


def test_a_1448_byte_segment_leaves_as_one_1500_byte_packet(tmp_path):
    """Measured in ns-3: a bulk flow of 1448-byte segments at a 1500-byte MTU
    leaves its host as 1500-byte IP packets, unfragmented (fragments would
    halve the mean)."""
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan
    from harness.engine.simulation import execute

    run = execute(plan(load_scenario(None, [
        "tcp.segment_size=1448", 'topology.file="single-tor-1g"', "background.enabled=false",
        "run.duration=0.05", "run.warmup=0", "run.cooldown=0",
        'service=[{kind="bulk", sources=[0], destination=1}]'])), progress=False, quiet=True)
    up = run.queues[run.queues["from_node"] == 0]
    mean = up["dequeued_bytes"].sum() / up["dequeued_packets"].sum()
    assert 1499 < mean <= 1500


def test_ecn_capable_acks_are_marked_where_data_is(tmp_path):
    """tcp.ecn_acks: pure ACKs leave their host ECN-capable, so a marking
    queue they share with congesting data marks them too (host 0's link,
    filled by two senders in its class, carries the ACKs of host 0's own
    flow to host 4): more marks there than without; data alone is unchanged
    elsewhere."""
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan
    from harness.engine.simulation import execute

    def marks(acks: bool):
        run = execute(plan(load_scenario(None, [
            'topology.file="single-tor-1g"', "background.enabled=false", "run.duration=0.05",
            "run.warmup=0", "run.cooldown=0", "network.ecn_threshold=5",
            f"tcp.ecn_acks={str(acks).lower()}",
            'service=[{kind="bulk", sources=[1, 2], destination=0, class="normal"}, '
            '{kind="bulk", sources=[0], destination=4}]'])), progress=False, quiet=True)
        q = run.queues
        towards_0 = q[(q["from_node"] == 8) & (q["to_node"] == 0)]
        return int(towards_0["enqueued_packets"].sum()), int(towards_0["marked_packets"].sum())

    (n_without, without), (n_with, with_acks) = marks(False), marks(True)
    assert n_without == n_with            # the same packets (an ACK's CE changes nothing)
    assert with_acks > without


def test_ecn_capable_acks_need_ecn():
    from harness.config.errors import ConfigError
    from harness.config.scenario import load_scenario

    with pytest.raises(ConfigError, match="tcp.ecn_acks: ECN-capable ACKs need ECN"):
        load_scenario(None, ["tcp.ecn_acks=true"])
