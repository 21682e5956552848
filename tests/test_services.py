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
from harness.traffic.services import query as _query, wire as _wire  # noqa: F401 (traffic.query, traffic.wire)

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
    assert r["latency_s"].iloc[0] == pytest.approx(rpc.ideal_s + traffic.wire.handshake_s(out, out),
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
            assert x.kind == y.kind and x.ideal_s == y.ideal_s
            if hasattr(x, "requests"):
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
    from harness.traffic.services.stream import rfc3550_jitter

    return rfc3550_jitter([t * 1e6 for t in sent_ms], [t * 1e6 for t in received_ms])


def test_the_fan_in_arithmetic():
    """The model itself: N responses through the aggregator's link."""
    link = traffic.Path((1e9, 1e9), (10e-6, 10e-6))
    one = traffic.query.query_ideal_s(100, 1380, link, link, 1, 1380, True)
    four = traffic.query.query_ideal_s(100, 1380, link, link, 4, 1380, True)
    assert four - one == pytest.approx(3 * (1380 + 54) * 8 / 1e9)


EVERY_KIND = QUIET.replace("[run]", "[run]\n# every kind of the registry, each on hosts of its own") + """
[[service]]
kind = "query"
aggregators = [0]
workers = [1, 2]
rate = 100
deadline = "5ms"
[[service]]
kind = "rpc"
clients = [3]
servers = [4]
qps = 100
slo = "2ms"
[[service]]
kind = "stream"
source = 5
destination = 6
bitrate = "2Mbps"
[[service]]
kind = "poisson"
source = 6
destination = 5
bitrate = "10Mbps"
packet_size = 800
[[service]]
kind = "bulk"
sources = [7]
destination = 0
flows = 2
"""


@pytest.fixture(scope="module")
def every_kind_runs(tmp_path_factory):
    """Two runs (seeds 7 and 8) of a scenario with one service of every kind,
    made by `harness run` (its console summary included)."""
    import subprocess
    import sys

    from harness.config import registry

    root = tmp_path_factory.mktemp("every-kind")
    path = root / "every-kind.toml"
    path.write_text(EVERY_KIND)
    assert {s.split('"')[1] for s in EVERY_KIND.split("kind = ")[1:]} == set(
        registry.service_kinds())   # a new kind must be added here
    out = []
    for seed in (7, 8):
        done = subprocess.run([sys.executable, "-c", "from harness.launcher import main; main()",
                               "run", str(path),
                               "--set", f"seed={seed}", "-o", str(root / f"s{seed}")],
                              capture_output=True, text=True, timeout=600)
        out.append((root / f"s{seed}", done))
    return out


def test_every_kind_has_its_line_on_the_console(every_kind_runs):
    """`harness run` ends with exit 0 and one line per service, labelled by
    its kind (a bulk service crashed the summary; a Poisson source read "stream")."""
    for _, done in every_kind_runs:
        assert done.returncode == 0, done.stderr[-2000:]
        for name, kind in (("query0", "query"), ("rpc1", "rpc"), ("stream2", "stream"),
                           ("poisson3", "poisson"), ("bulk4", "bulk")):
            assert f"\n{name} ({kind}): " in done.stdout
    assert "Jain's fairness" in every_kind_runs[0][1].stdout


def test_every_kind_is_compared_and_exported(every_kind_runs, tmp_path):
    """compare and export read a run with every kind (KeyError 'bulk' / 'poisson' before)."""
    import harness

    (a, _), (b, _) = every_kind_runs
    table = harness.compare(a, b)
    metrics = set(table["metric"])
    assert {"query_p99", "rpc_p99", "stream_delay_p99"} <= metrics
    assert not any(m.startswith(("poisson", "bulk")) for m in metrics)   # no changes of theirs
    exported = harness.export(a, tmp_path / "exported")
    assert (exported / "services.csv").exists() and (exported / "streams.csv").exists()


def test_the_cost_counts_every_kind():
    """The estimate counts the Poisson source's and the bulk flows' bytes."""
    from harness.sweeps.cost import predicted_bytes

    p = plan(load_scenario(None, [
        'topology.file="single-tor-1g"', "background.enabled=false", "run.duration=0.2",
        'service=[{kind="poisson", source=0, destination=1, bitrate="100Mbps"}]']))
    assert predicted_bytes(p) == pytest.approx(100e6 / 8 * p.expected_duration)
    bulk = plan(load_scenario(None, [
        'topology.file="single-tor-1g"', "background.enabled=false", "run.duration=0.2",
        'service=[{kind="bulk", sources=[0, 1], destination=2, start=0.1}]']))
    # two sources into one 1 Gbit/s link, from 0.1 s on
    assert predicted_bytes(bulk) == pytest.approx(1e9 / 8 * (bulk.expected_duration - 0.1))


@pytest.mark.parametrize("table, role, host", [
    ('{kind="query", workers=[0, 1], rate=10}', "clients", (2,)),
    ('{kind="rpc", clients=[7], qps=10}', "servers", (6,)),
    ('{kind="stream", source=7, bitrate="1Mbps"}', "servers", (6,)),
    ('{kind="stream", destination=0, bitrate="1Mbps"}', "clients", (1,)),
    ('{kind="bulk", destination=0}', "clients", (1,)),
])
def test_the_placement_rule_leaves_the_hosts_a_given_role_took(table, role, host):
    """A role left to the rule beside one given goes to the hosts the given
    one leaves (an aggregator among its own workers crashed planning)."""
    p = plan(load_scenario(None, ['topology.file="single-tor-1g"', f"service=[{table}]"]))
    s = p.services[0]
    assert getattr(s, role) == host
    assert not set(s.clients) & set(s.servers)


def test_no_host_left_for_a_role_is_one_line_naming_it():
    from harness.config.scenario import ConfigError

    with pytest.raises(ConfigError, match=r"service\[0\]\.destination: no destination left"):
        plan(load_scenario(None, ['topology.file="single-tor-1g"',
                                  'service=[{kind="stream", hosts=[3], bitrate="1Mbps"}]']))


def test_a_query_counts_its_slowest_worker_s_path():
    """On a leaf-spine the no-contention completion time is the farthest
    worker's (behind the other leaf), not the first worker's: a deadline
    below it is refused before the run (every query would miss it)."""
    from harness.config.scenario import ConfigError

    def query(table):
        return plan(load_scenario(None, ['topology.file="leaf-spine"', "background.enabled=false",
                                         f"service=[{table}]"])).services[0]

    near = query('{kind="query", aggregators=[0], workers=[1, 2], rate=10}')
    mixed = query('{kind="query", aggregators=[0], workers=[1, 5], rate=10}')
    far = query('{kind="query", aggregators=[0], workers=[4, 5], rate=10}')
    assert near.ideal_s < mixed.ideal_s == pytest.approx(far.ideal_s)
    between = (near.ideal_s + mixed.ideal_s) / 2
    with pytest.raises(ConfigError, match=r"service\[0\]\.deadline: .* shorter than a query's"):
        query(f'{{kind="query", aggregators=[0], workers=[1, 5], rate=10, '
              f'deadline="{between * 1e6:.1f}us"}}')


@pytest.mark.parametrize("sets, taken", [
    (["service=[{kind=\"rpc\", qps=10, port=9000}]"], "background.port: 9000"),
    (["training.enabled=true", "training.workers=2", 'training.profile="resnet50-like-2MB"',
      "service=[{kind=\"bulk\", sources=[4], destination=5, flows=3, port=4998}]"],
     "training.port: 5000"),
])
def test_a_service_port_taken_by_another_feature_is_refused_before_the_run(sets, taken):
    """Two listeners on one port abort ns-3 after the run has started
    (NS_FATAL): refused in planning, naming both fields."""
    from harness.config.scenario import ConfigError

    with pytest.raises(ConfigError, match=rf"service\[0\]\.port: port \d+ is taken by .*\({taken}"):
        plan(load_scenario(None, ['topology.file="single-tor-1g"', *sets]))


def test_a_sweep_of_every_kind_aggregates(tmp_path):
    """A sweep's summary and deltas read every kind (KeyError on bulk and
    poisson before, and no summary.parquet)."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    (tmp_path / "every-kind.toml").write_text(EVERY_KIND.replace("duration = 0.3",
                                                                 "duration = 0.15"))
    (tmp_path / "grid.toml").write_text(f"""
name = "every-kind"
scenario = "{tmp_path / 'every-kind.toml'}"
[axes]
seed = [1]
[arms]
reference = "small"
small = {{ "tcp.initial_cwnd" = 4 }}
large = {{ "tcp.initial_cwnd" = 10 }}
""")
    report = sweeping.run_sweep(load_grid(tmp_path / "grid.toml"), tmp_path / "out", jobs=1,
                                progress=False)
    assert not report.failed
    metrics = set(report.tables["deltas"]["metric"])
    assert {"query_p99", "rpc_p99", "stream_delay_p99"} <= metrics
    assert (tmp_path / "out" / "summary.parquet").exists()


def test_harness_plot_draws_each_service_s_latency(every_kind_runs, tmp_path):
    """`harness plot RUN` of a services run draws service-latency: one CDF
    per service with a latency of its own (query, rpc, stream and the
    Poisson source, a stream with other gaps), over exactly its measured
    samples, with its deadline or SLO; bulk none."""
    from harness.config import registry
    from harness.outputs import plots
    from harness.outputs.plots.run_figures import service_latency_frame

    run_dir = every_kind_runs[0][0]
    written = plots.plot_run(run_dir, tmp_path / "figs", ("png",))
    assert tmp_path / "figs" / "service-latency.png" in written
    run = plots.load_run(run_dir)
    frame = service_latency_frame(run)
    assert set(frame["kind"]) == {"query", "rpc", "stream", "poisson"}
    kinds = registry.service_kinds()
    for name, rows in frame.groupby("service"):
        entry = run.summary["services"][name]
        kind = kinds[entry["kind"]]
        values = kind.samples(run, name)[kind.latency[1]].dropna()
        assert len(rows) == len(values) and rows["cdf"].iloc[-1] == 1.0
        assert rows["latency_ms"].is_monotonic_increasing
        assert rows["latency_ms"].max() == pytest.approx(values.max() * 1e3)
        target = entry.get("slo_s") or entry.get("deadline_s")
        assert (rows["target_ms"].iloc[0] == pytest.approx(target * 1e3) if target
                else rows["target_ms"].isna().all())
