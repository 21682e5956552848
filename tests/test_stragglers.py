"""Stragglers (training.straggler): a per-worker, per-iteration compute factor
planned in Python from a seeded distribution, replayed by the C++ workers
(real ns-3), and its validation."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import small_plan
from harness.config.scenario import ConfigError, load_scenario
from harness.engine.planning import plan
from harness.training import stragglers

ST = "training.straggler"
TRAINING = ("training.enabled=true", "training.workers=3")


@pytest.fixture(scope="module")
def model(make_profile):
    return make_profile(layers=10)


def job_plan(model, *overrides: str, architecture: str = "ring"):
    # compute-bound (R = 8): the iteration is the compute of the slowest worker
    return small_plan("training.enabled=true", f'training.architecture="{architecture}"',
                      f'training.profile="{model}"', "training.workers=3",
                      "background.enabled=false", "training.ratio=8", "run.duration=1.0",
                      "run.warmup=0.1", "run.cooldown=0.01", *overrides)


@pytest.mark.parametrize("overrides, field, says", [
    ((f"{ST}=2",), ST, "table"),
    ((f'{ST}={{distribution="gamma"}}',), f"{ST}.distribution", "lognormal"),
    ((f'{ST}={{distribution="uniform", factor_min=1}}',), f"{ST}.factor_max", "missing"),
    ((f'{ST}={{distribution="uniform", factor_min=2, factor_max=1}}',), f"{ST}.factor_max",
     ">= factor_min"),
    ((f'{ST}={{distribution="lognormal", sigma=0.2, factor=2}}',), f"{ST}.factor", "allowed"),
    ((f'{ST}={{factor=0}}',), f"{ST}.factor", "> 0"),
    ((f'{ST}={{factor=2, workers=[3]}}',), f"{ST}.workers[0]", "0-2"),
    ((f'{ST}={{factor=2, workers="some"}}',), f"{ST}.workers", "list"),
    # valid as written, but the drawn factors would push a compute delay past
    # ns-3's 64-bit nanosecond clock (an abort inside ns-3 before this check)
    ((f'{ST}={{factor=1e15}}',), ST, "beyond ns-3's clock"),
    ((f'{ST}={{distribution="uniform", factor_min=1, factor_max=1e300}}',), ST,
     "beyond ns-3's clock"),
    # a tiny median: the message speaks of the drawn factors, not of the
    # profile's compute time alone
    ((f'{ST}={{distribution="lognormal", median=1e-9, sigma=0.1}}',), ST, "drawn factors"),
])
def test_bad_stragglers_name_the_field(overrides, field, says):
    with pytest.raises(ConfigError) as err:
        plan(load_scenario(None, [*TRAINING, *overrides]))
    assert err.value.field == field, str(err.value)
    assert says in str(err.value)


def test_straggler_enters_the_digest_only_when_used():
    plain = load_scenario(None, list(TRAINING))
    slow = load_scenario(None, [*TRAINING, f"{ST}={{factor=2}}"])
    assert plain.to_dict()["training"]["straggler"] is None
    assert slow.digest() != plain.digest()


def test_factors_are_seeded_per_worker_and_cover_the_run():
    s = load_scenario(None, [*TRAINING, f'{ST}={{workers=[0, 2], distribution="lognormal", '
                             'sigma=0.3}'])
    st = s.training.straggler
    a = stragglers.plan(st, 3, 0.01, 1.0, seed=1)
    assert a == stragglers.plan(st, 3, 0.01, 1.0, seed=1)
    assert a[0] != stragglers.plan(st, 3, 0.01, 1.0, seed=2)[0]
    assert a[1] == ()                                   # not a straggler
    assert sum(a[0]) * 0.01 >= 1.0 > sum(a[0][:-1]) * 0.01
    # a longer run extends the same factors
    longer = stragglers.plan(st, 3, 0.01, 3.0, seed=1)
    assert longer[0][:len(a[0])] == a[0]
    assert np.median(longer[0]) == pytest.approx(1.0, abs=0.1)
    uni = load_scenario(None, [*TRAINING, f'{ST}={{distribution="uniform", factor_min=1.5, '
                               'factor_max=2}'])
    f = stragglers.plan(uni.training.straggler, 3, 0.01, 1.0, seed=1)
    assert all(1.5 <= x <= 2 for row in f for x in row) and all(f)


@pytest.mark.parametrize("architecture", ["ring", "ps"])
def test_one_worker_at_factor_2_doubles_a_compute_bound_iteration(model, run_plan,
                                                                  architecture):
    # a PS job's R counts the shard link's load: its compute is twice the ring's
    longer = ("run.duration=2.0",) if architecture == "ps" else ()
    base = run_plan(job_plan(model, *longer, architecture=architecture))
    slow = run_plan(job_plan(model, f"{ST}={{workers=[1], factor=2}}", *longer,
                             architecture=architecture))
    compute_s = slow.plan.job.profile.compute_ms / 1e3
    it = slow.iterations[slow.iterations["measured"]]
    assert len(it) >= 3 * 4
    assert (it.loc[it["worker"] == 1, "compute_factor"] == 2).all()
    assert (it.loc[it["worker"] != 1, "compute_factor"] == 1).all()
    # the job waits for its straggler: every worker's iteration is ~2x the compute
    assert it["iteration_s"].mean() / compute_s == pytest.approx(2.0, rel=0.1)
    alone = base.iterations[base.iterations["measured"]]["iteration_s"].mean()
    assert it["iteration_s"].mean() / alone == pytest.approx(2.0, rel=0.1)
    assert "compute_factor" not in base.iterations
    assert slow.summary["training"]["compute_factor_mean"] == 2.0  # of the stragglers


def test_random_factors_reproduce_with_the_seed_and_differ_with_another(model, run_plan):
    lognormal = f'{ST}={{distribution="lognormal", sigma=0.3}}'
    a, b = (run_plan(job_plan(model, lognormal)) for _ in range(2))
    c = run_plan(job_plan(model, lognormal, "seed=2"))
    assert a.iterations.equals(b.iterations) and a.compute.equals(b.compute)
    assert not a.iterations["compute_factor"].equals(c.iterations["compute_factor"])
    # each layer's compute is stretched by its iteration's factor
    comp = a.compute.merge(a.iterations[["worker", "iteration", "compute_factor"]],
                           on=["worker", "iteration"])
    d = comp.assign(d=comp["end_ns"] - comp["start_ns"])
    nominal = (d["d"] / d["compute_factor"]).groupby([d["phase"], d["layer"]]).transform("median")
    assert np.allclose(d["d"], nominal * d["compute_factor"], rtol=1e-3, atol=2)
