"""Services ([[service]]) over real ns-3: at zero load every query, RPC and
stream packet takes its no-contention time (harness.traffic.services, the
arithmetic of the path) within 2 %, every request is answered and counted,
the same seed gives the same tables, and the arrivals do not depend on the
training job's class (the two arms replay the same requests)."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.config.scenario import load_scenario
from harness.engine.planning import plan
from conftest import scenario_plan
from harness.traffic import services as traffic

# 1 Gbit/s single ToR, 8 hosts, nothing else on the network; each service on
# hosts of its own, so that they share no link (the switch's ports are per host)
QUIET = """
name = "services-zero-load"
seed = 7
[run]
duration = 0.3
warmup = 0.0
cooldown = 0.05
[topology]
file = "single-tor-1g"
[background]
enabled = false
"""

PERSISTENT = QUIET + """
[[service]]
kind = "query"
aggregators = [0]
workers = [1, 2, 3]
rate = 30
request_size = 100
response_size = 4140        # 3 segments of 1380 B: within the initial window
deadline = "1ms"
[[service]]
kind = "rpc"
clients = [4]
servers = [5]
qps = 50
request_size = 500
response_size = 5000
slo = "1ms"
[[service]]
kind = "stream"
source = 6
destination = 7
bitrate = "2Mbps"
packet_size = 500
deadline = "1ms"
"""

NEW_CONNECTIONS = QUIET + """
[[service]]
kind = "query"
aggregators = [0]
workers = [1, 2]
rate = 30
request_size = 100
response_size = 2760
persistent = false
[[service]]
kind = "rpc"
clients = [3]
servers = [4]
outstanding = 1
request_size = 200
response_size = 1000
"""


@pytest.fixture(scope="module")
def persistent_run(tmp_path_factory):
    from harness.engine.simulation import execute

    p = scenario_plan(tmp_path_factory.mktemp("svc"), PERSISTENT)
    return p, execute(p, progress=False, quiet=True)


def _by_name(p, name: str):
    return next(s for s in p.services if s.name == name)


def test_a_query_at_zero_load_takes_its_fan_in_time(persistent_run):
    p, run = persistent_run
    query = _by_name(p, "query0")
    requests = run.services[run.services["kind"] == "query"]
    # every request planned was sent, answered and recorded
    assert len(requests) == len(query.requests) > 0
    assert requests["answered"].all() and (requests["error"] == "").all()
    qct = requests.groupby("query").apply(
        lambda q: (q["answered_ns"].max() - q["sent_ns"].min()) / 1e9, include_groups=False)
    assert qct.to_numpy() == pytest.approx([query.ideal_s] * len(qct), rel=0.02)
    summary = run.summary["services"]["query0"]
    measured = requests.groupby("query")["measured"].all().sum()
    assert 0 < summary["queries"] == summary["answered"] == measured
    assert summary["mean_qct_s"] == pytest.approx(query.ideal_s, rel=0.02)
    assert summary["deadline_miss"] == 0.0


def test_an_rpc_at_zero_load_takes_its_round_trip_and_transfers(persistent_run):
    p, run = persistent_run
    rpc = _by_name(p, "rpc1")
    requests = run.services[run.services["kind"] == "rpc"]
    assert len(requests) == len(rpc.requests) > 0 and requests["answered"].all()
    assert requests["latency_s"].to_numpy() == pytest.approx(
        [rpc.ideal_s] * len(requests), rel=0.02)
    summary = run.summary["services"]["rpc1"]
    assert summary["slo_attainment"] == 1.0
    measured = requests["measured"].sum()
    window = run.summary["window_s"]
    assert summary["achieved_qps"] == pytest.approx(measured / (window[1] - window[0]))


def test_a_stream_at_zero_load_takes_its_path_delay(persistent_run):
    p, run = persistent_run
    stream = _by_name(p, "stream2")
    packets = run.streams
    interval = stream.packet_bytes * 8 / stream.rate_bps
    window = run.summary["window_s"]
    # one packet every interval until the window's end, every one delivered
    assert len(packets) == pytest.approx(window[1] / interval, abs=1)
    assert packets["delay_s"].to_numpy() == pytest.approx(
        [stream.ideal_s] * len(packets), rel=0.02)
    summary = run.summary["services"]["stream2"]
    assert summary["lost"] == 0.0 and summary["late"] == 0.0
    assert summary["jitter_s"] < 0.02 * stream.ideal_s


def test_new_connections_and_a_closed_loop_at_zero_load(tmp_path, run_plan):
    p = scenario_plan(tmp_path, NEW_CONNECTIONS)
    run = run_plan(p)
    query, rpc = _by_name(p, "query0"), _by_name(p, "rpc1")
    q = run.services[run.services["kind"] == "query"]
    assert len(q) == len(query.requests) and q["answered"].all()
    qct = q.groupby("query").apply(
        lambda g: (g["answered_ns"].max() - g["sent_ns"].min()) / 1e9, include_groups=False)
    # a handshake per request: the model's SYN and SYN-ACK before the request
    assert qct.to_numpy() == pytest.approx([query.ideal_s] * len(qct), rel=0.02)
    r = run.services[(run.services["kind"] == "rpc") & run.services["answered"]]
    # closed loop, one outstanding: back to back, each its no-contention
    # latency; the first is sent at the start and waits for the persistent
    # connection's handshake
    r = r.sort_values("sent_ns")
    assert len(r) > 100
    assert r["latency_s"].iloc[1:].to_numpy() == pytest.approx([rpc.ideal_s] * (len(r) - 1),
                                                               rel=0.02)
    out = traffic.Path((1e9, 1e9), (10e-6, 10e-6))
    assert r["latency_s"].iloc[0] == pytest.approx(rpc.ideal_s + traffic.handshake_s(out, out),
                                                   rel=0.05)
    assert run.summary["services"]["rpc1"]["achieved_qps"] == pytest.approx(
        1 / rpc.ideal_s, rel=0.05)


def test_the_same_seed_gives_the_same_tables(tmp_path, persistent_run, run_plan):
    p, first = persistent_run
    again = run_plan(scenario_plan(tmp_path, PERSISTENT))
    pd.testing.assert_frame_equal(first.services, again.services)
    pd.testing.assert_frame_equal(first.streams, again.streams)
    assert first.summary["services"] == again.summary["services"]


def test_arrivals_are_the_same_in_both_arms_and_their_own(tmp_path):
    """The training job's class (the arms) and the background's load draw
    nothing from the services' streams: the same requests in every case."""
    text = QUIET.replace("enabled = false", "load = 0.1") + """
[training]
enabled = true
profile = "resnet50-like-2MB"
workers = 2
""" + PERSISTENT[len(QUIET):]
    same = scenario_plan(tmp_path, text, 'training.priority="same"')
    low = scenario_plan(tmp_path, text, 'training.priority="low"')
    busier = scenario_plan(tmp_path, text, "background.load=0.3")
    for a, b in ((same, low), (same, busier)):
        for x, y in zip(a.services, b.services):
            pd.testing.assert_frame_equal(x.requests, y.requests)
    other_seed = scenario_plan(tmp_path, text, "seed=8")
    assert not other_seed.services[0].requests.equals(same.services[0].requests)


def test_scenarios_without_services_keep_their_recipe_and_config():
    """No [[service]]: no service line in the recipe, no key in config.json."""
    from harness.engine import recipe

    p = plan(load_scenario(None, []))
    assert "services" not in p.resolved() and "services" not in p.scenario.to_dict()
    assert "service" not in recipe.text(p) and "\nwindow " in recipe.text(p)


def test_rfc3550_jitter_of_a_known_sequence():
    # transits 1, 3, 2 ms: |D| = 2, 1 ms; J = 2/16, then J += (1 - J)/16
    j = traffic_jitter([0, 10, 20], [1, 13, 22])
    first = 2 / 16
    assert j == pytest.approx((first + (1 - first) / 16) * 1e-3)


def traffic_jitter(sent_ms, received_ms):
    from harness.analysis.services import rfc3550_jitter

    return rfc3550_jitter([t * 1e6 for t in sent_ms], [t * 1e6 for t in received_ms])


def test_the_fan_in_arithmetic():
    """The model itself: N responses through the aggregator's link."""
    link = traffic.Path((1e9, 1e9), (10e-6, 10e-6))
    one = traffic.query_ideal_s(100, 1380, link, link, 1, 1380, True)
    four = traffic.query_ideal_s(100, 1380, link, link, 4, 1380, True)
    assert four - one == pytest.approx(3 * (1380 + 54) * 8 / 1e9)
