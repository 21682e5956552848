"""Conditions that change during a run: background load steps (pure Python
schedule), link-rate changes and slower workers (real ns-3), and their
validation before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import small_plan
from harness.traffic import background
from harness.config.scenario import ConfigError, load_scenario
from harness.engine.planning import plan

HOSTS = tuple(range(8))


# ---------------------------------------------------------------- validation

STEPS = "background.steps"
LINKS = "network.link_changes"
SLOW = "training.slowdowns"
TRAINING = ("training.enabled=true", "training.workers=3")


@pytest.mark.parametrize("overrides, field, says", [
    ((f"{STEPS}=1",), STEPS, "list of tables"),
    ((f"{STEPS}=[1]",), f"{STEPS}[0]", "table"),
    ((f"{STEPS}=[{{load=0.1}}]",), f"{STEPS}[0].at", "missing"),
    ((f"{STEPS}=[{{at=0.5, load=0.1, rate=3}}]",), f"{STEPS}[0].rate", "either"),
    ((f"{STEPS}=[{{at=0.5}}]",), f"{STEPS}[0].rate", "either"),
    ((f"{STEPS}=[{{at=0.5, rate=-3}}]",), f"{STEPS}[0].rate", ">= 0"),
    ((f"{STEPS}=[{{at=0.5, rate=inf}}]",), f"{STEPS}[0].rate", "finite"),
    ((f"{STEPS}=[{{at=0.5, load=nan}}]",), f"{STEPS}[0].load", "finite"),
    ((f"{STEPS}=[{{at=0.5, load=1.2}}]",), f"{STEPS}[0].load", "< 1"),
    ((f"{STEPS}=[{{at=-0.5, load=0.1}}]",), f"{STEPS}[0].at", ">= 0"),
    ((f"{STEPS}=[{{at=0.8, load=0.1}}, {{at=0.5, load=0.2}}]",), f"{STEPS}[1].at",
     "increasing"),
    ((f"{STEPS}=[{{at=2.5, load=0.1}}]",), f"{STEPS}[0].at", "inside the run"),
    ((f"{STEPS}=[{{at=0.5, lod=0.1}}]",), f"{STEPS}[0].lod", "allowed"),
    ((f'{LINKS}=[{{at=0.5, rate="fast"}}]',), f"{LINKS}[0].rate", "Gbps"),
    ((f"{LINKS}=[{{at=0.5, rate=-1e9}}]",), f"{LINKS}[0].rate", "> 0"),
    ((f"{LINKS}=[{{at=0.5, rate=inf}}]",), f"{LINKS}[0].rate", "finite"),
    ((f'{LINKS}=[{{at=5, rate="1Gbps"}}]',), f"{LINKS}[0].at", "inside the run"),
    ((f'{LINKS}=[{{at="soon", rate="1Gbps"}}]',), f"{LINKS}[0].at", "cannot read"),
    ((f'{LINKS}=[{{at=0.5, rate="1Gbps", hosts=[9]}}]',), f"{LINKS}[0].hosts[0]", "0..3"),
    ((f'{LINKS}=[{{at=0.5, rate="1Gbps", host=1}}]',), f"{LINKS}[0].host", "allowed"),
    ((*TRAINING, f"{SLOW}=[{{worker=3, start=0.5, end=1.0, factor=2}}]"), f"{SLOW}[0].worker",
     "0-2"),
    ((*TRAINING, f"{SLOW}=[{{worker=0, start=1.0, end=0.5, factor=2}}]"), f"{SLOW}[0].end",
     "after start"),
    ((*TRAINING, f"{SLOW}=[{{worker=0, start=0.5, end=3.0, factor=2}}]"), f"{SLOW}[0].end",
     "end of the run"),
    ((*TRAINING, f"{SLOW}=[{{worker=0, start=0.5, end=1.0, factor=0}}]"),
     f"{SLOW}[0].factor", "> 0"),
    ((*TRAINING, f"{SLOW}=[{{worker=0, start=0.5, end=1.0, factor=inf}}]"),
     f"{SLOW}[0].factor", "finite"),
    ((*TRAINING, f"{SLOW}=[{{worker=0, start=0.5, end=1.0}}]"), f"{SLOW}[0].factor",
     "missing"),
    ((*TRAINING, f"{SLOW}=[{{worker=1, start=0.5, end=1.0, factor=2}}, "
                 f"{{worker=1, start=0.9, end=1.2, factor=3}}]"), f"{SLOW}[1]", "overlaps"),
])
def test_bad_changing_conditions_name_the_field(overrides, field, says):
    with pytest.raises(ConfigError) as err:
        plan(load_scenario(None, list(overrides)))
    assert err.value.field == field, str(err.value)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_conditions_enter_the_digest_only_when_used():
    plain = load_scenario(None)
    assert plain.digest() == load_scenario(None, [f"{STEPS}=[]"]).digest()
    stepped = load_scenario(None, [f"{STEPS}=[{{at=0.5, load=0.3}}]"])
    assert stepped.digest() != plain.digest()


# ---------------------------------------------------------------- load steps


@pytest.fixture(scope="module")
def websearch():
    return background.load_cdf("websearch")


def test_load_steps_change_the_arrival_rate_and_keep_every_flow(websearch):
    steps = ((4.0, 400.0), (8.0, 0.0), (9.0, 25.0))
    flat = background.schedule(HOSTS, 100.0, 12.0, websearch, seed=5)
    stepped = background.schedule(HOSTS, 100.0, 12.0, websearch, seed=5, steps=steps)
    start = stepped["start_ns"] / 1e9
    for (t0, t1), rate in (((0, 4), 100.0), ((4, 8), 400.0), ((9, 12), 25.0)):
        n = ((start >= t0) & (start < t1)).sum()
        expected = rate * len(HOSTS) * (t1 - t0)
        assert abs(n - expected) < 5 * np.sqrt(expected), (t0, rate)
    assert not ((start >= 8) & (start < 9)).any()       # rate 0 in [8, 9)
    assert stepped["start_ns"].is_monotonic_increasing and (start < 12).all()
    # before the first step: the constant-rate schedule itself; after it, the
    # same flows (sizes, endpoints) at other times
    before = flat[flat["start_ns"] < 4e9]
    assert stepped.iloc[:len(before)].equals(before)
    common = min(len(flat), len(stepped))
    cols = ["id", "src", "dst", "size"]
    assert stepped[cols].iloc[:common].equals(flat[cols].iloc[:common])
    again = background.schedule(HOSTS, 100.0, 12.0, websearch, seed=5, steps=steps)
    assert again.equals(stepped)


def test_load_steps_in_a_plan_are_rates_per_host(websearch):
    p = plan(load_scenario(None, ["background.load=0.1",
                                  f"{STEPS}=[{{at=0.5, load=0.4}}, {{at=1.0, rate=3}}]"]))
    assert p.background_steps[0] == (0.5, pytest.approx(4 * p.background_rate))
    assert p.background_steps[1] == (1.0, 3.0)


# ---------------------------------------------------------------- real ns-3


@pytest.fixture(scope="module")
def model(make_profile):
    return make_profile(layers=10)


def job_plan(model, architecture: str, *overrides: str):
    return small_plan("training.enabled=true", f'training.architecture="{architecture}"',
                      f'training.profile="{model}"', "training.workers=3",
                      "network.band_limit_packets=100", "background.enabled=false",
                      "training.ratio=2", "run.duration=0.6", "run.warmup=0.05",
                      "run.cooldown=0.01", *overrides)


@pytest.mark.parametrize("architecture", ["ps", "ring"])
def test_a_slowed_worker_computes_factor_times_slower_in_its_period_only(model, run_plan,
                                                                        architecture):
    r = run_plan(job_plan(model, architecture,
                          f"{SLOW}=[{{worker=1, start=0.2, end=0.4, factor=3.0}}]"))
    c = r.compute.assign(d=r.compute["end_ns"] - r.compute["start_ns"])
    nominal = c[c["worker"] == 0].groupby(["phase", "layer"])["d"].median().rename("nominal")
    c = c.join(nominal, on=["phase", "layer"])
    c = c.assign(ratio=c["d"] / c["nominal"])
    w1 = c[c["worker"] == 1]
    inside = w1[(w1["start_ns"] >= 0.2e9) & (w1["end_ns"] <= 0.4e9)]
    outside = w1[(w1["end_ns"] <= 0.2e9) | (w1["start_ns"] >= 0.4e9)]
    across = w1[(w1["start_ns"] < 0.2e9) & (w1["end_ns"] > 0.2e9)]
    assert len(inside) > 10 and len(outside) > 10
    assert np.allclose(inside["ratio"], 3.0, rtol=1e-3)
    assert np.allclose(outside["ratio"], 1.0, rtol=1e-3)
    assert ((across["ratio"] > 1) & (across["ratio"] < 3)).all()
    assert np.allclose(c.loc[c["worker"] != 1, "ratio"], 1.0, rtol=1e-3)
    # the whole job waits for its slow worker
    it = r.iterations.groupby("iteration")["iteration_s"].mean()
    starts = r.iterations.groupby("iteration")["start_ns"].min() / 1e9
    assert it[(starts >= 0.2) & (starts < 0.4)].mean() > 1.5 * it[starts > 0.45].mean()


def test_a_link_rate_change_caps_the_link_from_its_time_on(model, run_plan):
    p = job_plan(model, "ps", "run.utilization_interval=0.02",
                 f'{LINKS}=[{{at=0.3, rate="200Mbps", hosts=[3]}}]')
    shard = p.job.server_hosts[0]
    assert shard == 3 and len(p.link_changes) == 1
    r = run_plan(p)
    u = r.utilization[r.utilization["from_node"] == shard].groupby("t_s")["utilization"].sum()
    before, after = u[(u.index >= 0.05) & (u.index < 0.28)], u[u.index >= 0.32]
    assert before.max() > 0.5                      # of 1 Gbit/s
    assert after.max() <= 0.2 * 1.02 and after.max() > 0.1
    assert r.summary["training"]["socket_errors"] == ""


def test_link_changes_without_hosts_change_every_link_and_scale_down():
    p = plan(load_scenario(None, ["scale=10", f'{LINKS}=[{{at=0.5, rate="500Mbps"}}]']))
    assert len(p.link_changes) == len(p.topology.links)
    assert {bps for _, _, bps in p.link_changes} == {50e6}
    assert {at for _, at, _ in p.link_changes} == {500_000_000}


def test_chunk_overhead_spaces_every_senders_commits(model, run_plan):
    p = job_plan(model, "ps", 'training.policy="bytescheduler"',
                 'training.scheduler.partition="8KB"', 'training.scheduler.credit="64KB"',
                 'training.chunk_overhead="200us"', "run.duration=0.3")
    t = run_plan(p).transfers
    gaps = [np.diff(g["start_ns"].to_numpy()) for _, g in
            t.groupby(["worker", "shard", "direction"])]  # rows are in commit order
    gaps = np.concatenate(gaps)
    assert len(gaps) > 100 and gaps.min() >= 200_000
    free = run_plan(job_plan(model, "ps", 'training.policy="bytescheduler"',
                             'training.scheduler.partition="8KB"',
                             'training.scheduler.credit="64KB"', "run.duration=0.3")).transfers
    assert min(np.diff(g["start_ns"].to_numpy()).min() for _, g in
               free.groupby(["worker", "shard", "direction"])) < 200_000


@pytest.mark.parametrize("retune", [0.2, 0.0])
def test_autobyte_searches_again_when_the_network_changes(model, run_plan, retune):
    """1 Gbit/s, then 4 Gbit/s from 0.4 s: the current choice gets faster, so
    the stale measurements of the others never look better; only with
    retune > 0 does AutoByte measure them again."""
    p = job_plan(model, "ps", 'training.policy="autobyte"',
                 'training.scheduler.candidates=[["8KB", "8KB"], ["64KB", "256KB"]]',
                 "training.scheduler.interval=2", f"training.scheduler.retune={retune}",
                 "training.ratio=0.5",
                 'training.chunk_overhead="100us"', "run.duration=0.9",
                 f'{LINKS}=[{{at=0.4, rate="4Gbps"}}]')
    r = run_plan(p)
    start = r.iterations.groupby("iteration")["start_ns"].min() / 1e9
    states = r.scheduler.assign(t=r.scheduler["iteration"].map(start))
    before, after = states[states["t"] < 0.4], states[states["t"] > 0.4]
    assert len(set(before["state"])) == 2          # the first search tried both
    if retune:
        assert len(after) >= 2 and set(after["state"]) == set(states["state"])
    else:
        assert after.empty


def test_a_change_across_two_phases_agrees_with_the_means_beside_it(model, run_plan):
    """A real two-phase run: every link at 1 Gbit/s, then at 200 Mbit/s
    from 0.3 s; the arm's worker 1 computes 3 x slower in the first phase
    only. The change is the ratio of the two arms' mean iteration times (the
    means printed beside it), its interval around it and above -100 %; per
    phase, each phase's own ratio."""
    from harness.analysis import run_changes
    from harness.analysis.tables import Run

    links = f'{LINKS}=[{{at=0.3, rate="200Mbps"}}]'
    ref = run_plan(job_plan(model, "ring", links))
    arm = run_plan(job_plan(model, "ring", links,
                            f"{SLOW}=[{{worker=1, start=0.0, end=0.3, factor=3.0}}]"))

    def runs(r, start_s=None, end_s=None):
        it = r.iterations
        if start_s is not None:
            it = it[(it["start_ns"] >= start_s * 1e9) & (it["start_ns"] < end_s * 1e9)]
        return [Run(flows=r.flows, iterations=it)]

    def mean(r):
        return run_changes.mean_iteration_s(r)

    whole = run_changes.iteration_change(runs(ref), runs(arm))
    assert whole.change == pytest.approx(mean(runs(arm)) / mean(runs(ref)) - 1)
    assert -1 < whole.low <= whole.change <= whole.high
    first = run_changes.iteration_change(runs(ref, 0.05, 0.3), runs(arm, 0.05, 0.3))
    second = run_changes.iteration_change(runs(ref, 0.3, 0.59), runs(arm, 0.3, 0.59))
    assert first.low > 0.3                      # slower where its worker was
    assert abs(second.change) < 0.05            # the same job after it
    assert first.change > whole.change > second.change
