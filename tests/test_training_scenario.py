"""A training job configured through a scenario: `[training]` end to end."""

from __future__ import annotations

import pytest

from conftest import small_plan
from harness.traffic import fusion
from harness.config.scenario import ConfigError
from harness.training import ring

N, LINK_BPS = 4, 1e9
# Wire cost of a 1380 B segment and the per-step gap, as in test_ring_allreduce.
ANALYTIC = dict(payload_efficiency=1380 / 1434, step_latency_s=2 * 10e-6 + 1434 * 8 / LINK_BPS)


def training_plan(model, *overrides):
    return small_plan("training.enabled=true", f'training.profile="{model}"',
                      f"training.workers={N}", *overrides)


def test_scenario_job_matches_the_analytic_model(small_model, run_plan):
    p = training_plan(small_model, "training.ratio=4", "background.enabled=false",
                      "run.duration=0.6", "run.warmup=0.1", "run.cooldown=0.001")
    r = run_plan(p)
    expected = ring.simulate(p.job.profile, N, LINK_BPS, iterations=8, **ANALYTIC)
    got = r.summary["training"]
    assert got["iterations"] >= 4 * N
    assert got["mean_iteration_s"] * 1e3 == pytest.approx(expected.iteration_ms[1:].mean(),
                                                          rel=0.02)
    assert got["socket_errors"] == ""
    assert set(r.utilization["app"]) == {"training"}


def test_training_errors_name_the_field(small_model):
    with pytest.raises(ConfigError) as err:
        training_plan(small_model, "training.workers=9")
    assert err.value.field == "training.workers"
    with pytest.raises(ConfigError) as err:
        training_plan(small_model, 'training.policy="lifo"')
    assert err.value.field == "training.policy"
    with pytest.raises(ConfigError) as err:
        training_plan(small_model, 'training.priority="urgent"')
    assert err.value.field == "training.priority"


def test_layer_classes_send_each_buffer_in_its_lowest_layers_class(small_model, run_plan):
    """layers 0-4 in high, the rest in low: buffers holding layer <= 4 go high."""
    p = training_plan(small_model, "training.ratio=0.5", "background.enabled=false",
                      'training.priority="low"', 'training.layer_classes.high="0-4"',
                      "run.duration=0.2", "run.warmup=0.05", "run.cooldown=0.001")
    high, low = p.classes.tos("high", ""), p.classes.tos("low", "")
    assert p.job.layer_tos == (high,) * 5 + (low,) * 15
    r = run_plan(p)
    buffers = fusion.fuse(p.job.profile)
    lowest = {b.index: b.priority for b in buffers}
    expected = r.transfers["buffer"].map(lambda b: "high" if lowest[b] <= 4 else "low")
    assert (r.transfers["traffic_class"] == expected).all()
    assert set(expected) == {"high", "low"}
    sent = r.utilization[r.utilization["app"] == "training"].groupby("traffic_class")["bytes"].sum()
    assert sent["high"] > 0 and sent["low"] > 0
    # every layer's compute is recorded, forward and backward, in order per worker
    c = r.compute[(r.compute["worker"] == 0) & (r.compute["iteration"] == 1)]
    assert list(c["layer"]) == list(range(20)) + list(range(19, -1, -1))
    assert (c["end_ns"] >= c["start_ns"]).all()


def test_layer_classes_and_fusion_buffer_errors(small_model):
    for override, field in [('training.layer_classes.high="0-20"', "training.layer_classes.high"),
                            ('training.layer_classes.high="5-2"', "training.layer_classes.high"),
                            ('training.layer_classes.urgent="0-2"',
                             "training.layer_classes.urgent"),
                            ('training.layer_classes={high="0-5", low="5-9"}',
                             "training.layer_classes"),
                            ("training.fusion_buffer=1000", "training.fusion_buffer"),
                            ("training.fusion_buffer=0", "training.fusion_buffer")]:
        with pytest.raises(ConfigError) as err:
            training_plan(small_model, override)
        assert err.value.field == field, override


def test_low_priority_training_under_heavy_background(make_profile, run_plan):
    """The two arms of the study on one small network with a fixed seed: with
    training in `low`, the small background flows no longer queue behind
    training in their band (lower mean FCT), and training only gets what the
    background leaves (slower iterations). Same background flows in both arms."""
    model = make_profile(20, 4_000_000, 10.0, name="m4")
    arms = {}
    for priority in ("same", "low"):
        p = training_plan(model, "training.ratio=1", "background.load=0.2", "seed=3",
                          f'training.priority="{priority}"', "run.duration=0.8",
                          "run.warmup=0.2", "run.cooldown=0.2")
        arms[priority] = run_plan(p)
    same, low = arms["same"], arms["low"]
    assert same.flows[["id", "size", "start_s"]].equals(low.flows[["id", "size", "start_s"]])
    for r in (same, low):
        assert r.summary["completion_ratio"] == 1.0
        assert r.summary["training"]["iterations"] > 0
    assert (low.summary["training"]["mean_iteration_s"]
            > same.summary["training"]["mean_iteration_s"])
    assert low.summary["fct"]["small"]["mean_fct_s"] < same.summary["fct"]["small"]["mean_fct_s"]


def test_ring_bytescheduler_matches_the_analytic_model(small_model, run_plan):
    """bytescheduler on a ring: no fusion, 100 KB partitions allreduced one at
    a time, lowest layer first; ns-3 matches the analytic model."""
    p = training_plan(small_model, "training.ratio=4", "background.enabled=false",
                      'training.policy="bytescheduler"', "training.scheduler.partition=100000",
                      "run.duration=0.6", "run.warmup=0.1", "run.cooldown=0.001")
    r = run_plan(p)
    expected = ring.simulate(p.job.profile, N, LINK_BPS, iterations=8, queue="priority",
                             partition_bytes=100_000, **ANALYTIC)
    got = r.summary["training"]
    assert got["socket_errors"] == ""
    assert got["mean_iteration_s"] * 1e3 == pytest.approx(expected.iteration_ms[1:].mean(),
                                                          rel=0.02)
    # one allreduce per partition: a layer of P bytes is ceil(P / 100 KB) buffers
    n_buffers = len(fusion.partition(p.job.profile, 100_000))
    assert r.transfers["buffer"].max() + 1 == n_buffers > p.job.profile.n_layers
    sent = r.transfers.groupby(["iteration", "buffer"])["bytes"].sum()
    first = sent.loc[0]
    assert first.sum() == 2 * (N - 1) * p.job.profile.model_bytes  # 2(N-1) partitions of S/N each
