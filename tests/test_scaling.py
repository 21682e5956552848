"""Time-preserving scale-down (scenario key `scale`, harness.engine.scaling): the
plan divides rates and sizes by k and keeps every time; a scaled-down job
iterates as fast as the full-size one (real ns-3 runs); run.min_iterations
makes a run long enough to measure its iterations."""

from __future__ import annotations

import pytest

from harness.analysis import metrics
from harness.engine import scaling
from harness.config.scenario import ConfigError, load_scenario
from harness.engine.planning import plan

THESIS_CELL = ["training.ratio=4", "background.rate=92"]


def test_scaled_plan_divides_rates_and_sizes_and_keeps_times():
    full = plan(load_scenario("thesis", THESIS_CELL))
    small = plan(load_scenario("thesis", [*THESIS_CELL, "scale=10"]))
    assert [l.rate_bps for l in small.topology.links] == \
        [l.rate_bps / 10 for l in full.topology.links]
    assert [l.delay_s for l in small.topology.links] == [l.delay_s for l in full.topology.links]
    assert small.network.band_limit_packets == full.network.band_limit_packets // 10 == 100
    # the same flows: arrivals, hosts, sizes / 10 (rounded up to whole bytes)
    assert small.flows["start_ns"].equals(full.flows["start_ns"])
    assert small.flows["src"].equals(full.flows["src"])
    assert (abs(small.flows["size"] * 10 - full.flows["size"]) <= 10).all()
    assert small.background_rate == full.background_rate
    assert small.background_load == pytest.approx(full.background_load)
    # the model a tenth, its compute and network time unchanged
    assert small.job.profile.model_bytes == pytest.approx(full.job.profile.model_bytes / 10, rel=1e-4)
    assert small.job.profile.fp_ms == pytest.approx(full.job.profile.fp_ms)
    assert small.job.network_ms == pytest.approx(full.job.network_ms, rel=1e-4)
    assert small.job.fusion_buffer == pytest.approx(full.job.fusion_buffer / 10, rel=1e-4)
    assert small.ideal_iteration_s == pytest.approx(full.ideal_iteration_s, rel=1e-3)
    # TCP timers from the network as written
    assert small.worst_rtt == full.worst_rtt and small.tcp_defaults == full.tcp_defaults


def test_scaled_policy_sizes():
    cfg = load_scenario("ps-small", ["training.policy=bytescheduler",
                                     'training.scheduler.partition="100KB"',
                                     'training.scheduler.credit="200KB"']).training
    scaled = dict(scaling.training(cfg, 4).scheduler)
    assert scaled == {"partition": 25_000, "credit": 50_000}
    assert scaling.training(cfg, 1) is cfg


def test_scale_must_be_a_positive_integer():
    for bad in ("scale=0", "scale=1.5", 'scale="10"'):
        with pytest.raises(ConfigError, match="^scale"):
            load_scenario("thesis", [bad])


def test_size_classes_are_those_of_the_reference_sizes():
    import pandas as pd

    raw = pd.DataFrame({"id": [0, 1], "src_node": [0, 1], "dst_node": [1, 0],
                        "size": [9_000, 11_000], "tos": [0, 0], "start_ns": [0, 0],
                        "end_ns": [10, 10], "received_bytes": [9_000, 11_000],
                        "error": ["", ""]})
    ideal = pd.Series([1.0, 1.0])
    assert list(metrics.flow_table(raw, (0, 1), ideal, {0: "x"})["size_class"]) == \
        ["small", "small"]
    assert list(metrics.flow_table(raw, (0, 1), ideal, {0: "x"}, 10)["size_class"]) == \
        ["small", "medium"]    # 90 KB and 110 KB in the network as written


def test_min_iterations_caps_the_run_at_a_stalled_pace():
    from harness.engine.planning import STALL_FACTOR

    base = ["training.ratio=16", "background.rate=23", "run.duration=1.1", "run.warmup=0.5",
            "run.cooldown=0.5"]
    p = plan(load_scenario("thesis", [*base, "run.min_iterations=3"]))
    assert 2.24 < p.ideal_iteration_s < 2.6      # R = 16: T = 2240 ms of compute
    assert p.run.duration == pytest.approx(
        0.5 + 4 * p.ideal_iteration_s * STALL_FACTOR + 0.5, abs=1e-6)
    assert p.flows["start_ns"].max() > 0.9 * p.run.duration * 1e9  # flows up to the cap
    # never shorter than asked, and nothing without a job
    assert plan(load_scenario("thesis", [*base[:2], "run.duration=200",
                                         "run.min_iterations=3"])).run.duration == 200
    assert plan(load_scenario("thesis-background-alone",
                              ["run.min_iterations=3"])).run.duration == 12.0


def test_min_iterations_ends_the_run_after_them():
    from harness.engine.simulation import execute

    p = plan(load_scenario(None, [
        "training.enabled=true", "training.workers=4", "training.profile=resnet50-like-2MB",
        "training.ratio=4", "background.load=0.1", "run.duration=0.05", "run.warmup=0.02",
        "run.cooldown=0.01", "run.min_iterations=3"]))
    result = execute(p, progress=False, quiet=True)
    it = result.iterations
    start, end = result.summary["window_s"]
    assert start == 0.02 and end < p.run.duration - 0.01
    # the window ends as the last worker completes its 3rd iteration after warm-up
    measured = it[it["measured"]]
    assert measured.groupby("worker").size().min() == 3
    assert end == pytest.approx(measured["end_ns"].max() / 1e9)
    # flows are measured in that window only, and the run ends once they are
    # done, a cool-down after the window at most
    flows = result.flows
    assert flows["measured"].equals((flows["start_s"] >= start) & (flows["start_s"] <= end))
    measured_flows = flows[flows["measured"]]
    last = ((measured_flows["start_s"] + measured_flows["fct_s"]).max()
            if measured_flows["completed"].all() else float("inf"))
    assert result.summary["simulated_s"] == pytest.approx(min(end + 0.01, max(end, last)))


@pytest.fixture(scope="module")
def model_20mb(make_profile):
    """10 layers, 20 MB: at scale 10 its ring partitions are still tens of
    packets, the regime of the quick preset (a model of a few hundred KB at
    100 Mbit/s is not: per-packet times dominate, harness.engine.scaling)."""
    return make_profile(layers=10, model_bytes=20_000_000)


def _iteration_ms(model, scale: int) -> tuple[float, float]:
    """(ns-3, analytic) mean iteration time of a 4-worker ring at R = 4 on
    10 Gbit/s links scaled by `scale`, without background."""
    from harness.engine.simulation import execute

    p = plan(load_scenario("thesis", [
        "topology.hosts=4", "training.workers=4", "background.enabled=false",
        f'training.profile="{model}"', "training.model_bytes=20000000", "training.ratio=4",
        "run.duration=0.1", "run.warmup=0.03", "run.cooldown=0.005",
        "run.min_iterations=3", f"scale={scale}"]))
    result = execute(p, progress=False, quiet=True)
    measured = result.summary["training"]["mean_iteration_s"]
    return measured * 1e3, p.ideal_iteration_s * 1e3


def test_scaled_down_job_iterates_at_the_same_pace(model_20mb):
    full, ideal = _iteration_ms(model_20mb, 1)
    small, ideal_small = _iteration_ms(model_20mb, 10)
    assert ideal_small == pytest.approx(ideal, rel=0.005)   # layer sizes rounded to bytes
    # both within 2 % of the analytic reference, and of each other
    assert full == pytest.approx(ideal, rel=0.02)
    assert small == pytest.approx(ideal, rel=0.02)
    assert small == pytest.approx(full, rel=0.02)
