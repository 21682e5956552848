"""bench.boundary_oracle's pure logic on made-up curves (no ns-3): the oracle
brackets where the curve crosses, pays for exactly the seeds it names, and
the model's searches locate what a noiseless curve makes easy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench import boundary_oracle as bo
from harness.analysis import stats
from harness.sweeps import boundary


def _curve(slowdowns: dict[float, float], sd: float = 0.01, cpu: float = 10.0) -> bo.Curve:
    return bo.Curve([bo.CurvePoint(v, s, sd, 5, cpu * v / 23, 3) for v, s in slowdowns.items()])


STEEP = {23: 0.0, 46: 0.002, 92: 0.05, 184: 0.6}


def test_the_curve_is_interpolated_over_log_value():
    c = _curve({23: 0.0, 92: 0.04})
    assert c.at(46).slowdown == pytest.approx(0.02)     # halfway in log
    assert c.at(23).slowdown == 0.0 and c.at(92).slowdown == pytest.approx(0.04)


def test_seeds_to_clear_grow_near_the_threshold_and_with_power():
    far, near = (bo.seeds_to_clear(bo.CurvePoint(1, s, 0.01, 5, 1, 1), 0.01, 0.5)
                 for s in (0.05, 0.015))
    assert far == 1 and near > far
    p = bo.CurvePoint(1, 0.015, 0.01, 5, 1, 1)
    assert bo.seeds_to_clear(p, 0.01, 0.9) > bo.seeds_to_clear(p, 0.01, 0.5)
    # on the threshold no number of seeds decides: the cap
    assert bo.seeds_to_clear(bo.CurvePoint(1, 0.01, 0.01, 5, 1, 1), 0.01, 0.5) == bo.MOST_SEEDS


def test_the_oracle_brackets_each_crossing_within_the_step_and_prices_its_seeds():
    c = _curve(STEEP)
    cost, brackets, plan = bo.oracle(c, [0.01, 0.30], 2.0, 0.8)
    for th, (a, b) in zip((0.01, 0.30), brackets):
        assert b / a == pytest.approx(2.0)
        assert c.at(a).slowdown <= th < c.at(b).slowdown
    assert cost == pytest.approx(sum(p.seeds * c.at(p.value).cpu_s for p in plan))
    sides = {side for p in plan for _, side in p.must}
    assert sides == {stats.BELOW, stats.ABOVE}


def test_the_oracle_takes_a_range_end_when_the_crossing_lies_beyond_it():
    c = _curve({23: 0.05, 46: 0.1, 92: 0.2, 184: 0.25})
    _, brackets, plan = bo.oracle(c, [0.01, 0.30], 2.0, 0.5)
    assert brackets == [(None, 23), (184, None)]
    assert [p.value for p in plan] == [23, 184]


def test_the_oracle_seed_by_seed_decides_its_ends_on_a_quiet_curve():
    c = _curve(STEEP, sd=0.001)
    _, _, plan = bo.oracle(c, [0.01, 0.30], 2.0, 0.5)
    cost, decided = bo.oracle_seed_by_seed(c, plan, np.random.default_rng(3))
    assert decided
    assert cost == pytest.approx(sum(c.at(p.value).cpu_s for p in plan))   # a seed each


def test_the_model_search_locates_every_crossing_of_a_quiet_curve():
    curves = {16: _curve(STEEP, sd=0.001), 8: _curve({23: 0.02, 46: 0.1, 92: 0.4, 184: 1.0},
                                                   sd=0.001)}
    span = boundary.Range(23, 184, 2, log=True)
    cost, located = bo.search_sample(curves, span, [0.01, 0.30], 1, 3,
                                     np.random.default_rng(1))
    assert located == 4 and cost > 0


def test_within_step():
    assert bo.within_step(boundary.Crossing(boundary.BRACKETED, 60, 46, 92, 3), 2.0)
    assert not bo.within_step(boundary.Crossing(boundary.UNDECIDED_BETWEEN, math.nan, 23, 65, 3),
                              2.0)
    assert not bo.within_step(boundary.Crossing(boundary.UNDECIDED_BETWEEN, math.nan, math.nan,
                                                92, 3), 2.0)
    assert bo.within_step(boundary.Crossing(boundary.BELOW_RANGE, math.nan, math.nan, 23, 1), 2.0)


def test_a_directory_that_is_not_a_sweep_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        bo.main([str(tmp_path)])
    assert e.value.code == 2
    assert "not a sweep directory" in capsys.readouterr().err
