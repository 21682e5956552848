"""The background flow schedule (pure Python): sizes, classes, seeding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.traffic import background
from harness.analysis.metrics import size_class

HOSTS = tuple(range(8))


@pytest.fixture(scope="module")
def websearch():
    return background.load_cdf("websearch")


def test_websearch_cdf_mean_matches_the_published_value(websearch):
    assert websearch.mean == pytest.approx(1_711_250)


def test_sampled_sizes_follow_the_cdf(websearch):
    flows = background.schedule(HOSTS, rate=2000.0, duration=10.0, cdf=websearch, seed=7)
    n = len(flows)
    assert n > 100_000
    assert flows["size"].mean() == pytest.approx(1_711_250, rel=0.02)
    classes = size_class(flows["size"]).value_counts(normalize=True)
    for cls, p in (("small", 0.5417), ("large", 0.030)):
        sigma = np.sqrt(p * (1 - p) / n)
        assert abs(classes[cls] - p) < 4 * sigma, cls


def test_arrivals_are_poisson_at_the_configured_rate(websearch):
    rate, duration = 50.0, 40.0
    flows = background.schedule(HOSTS, rate, duration, websearch, seed=3)
    expected = rate * len(HOSTS) * duration
    assert abs(len(flows) - expected) < 4 * np.sqrt(expected)
    gaps = np.diff(flows["start_ns"].to_numpy()) / 1e9
    # exponential gaps: coefficient of variation ~ 1
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)
    assert flows["start_ns"].is_monotonic_increasing
    assert (flows["start_ns"] < duration * 1e9).all()


def test_endpoints_are_uniform_and_never_equal(websearch):
    flows = background.schedule(HOSTS, 500.0, 10.0, websearch, seed=11)
    assert (flows["src"] != flows["dst"]).all()
    share = flows["src"].value_counts(normalize=True)
    assert set(share.index) == set(HOSTS)
    assert share.max() - share.min() < 0.02
    pairs = flows.groupby(["src", "dst"]).size()
    assert len(pairs) == len(HOSTS) * (len(HOSTS) - 1)


def test_same_seed_same_schedule_other_seed_other_schedule(websearch):
    a = background.schedule(HOSTS, 30.0, 5.0, websearch, seed=1)
    b = background.schedule(HOSTS, 30.0, 5.0, websearch, seed=1)
    c = background.schedule(HOSTS, 30.0, 5.0, websearch, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_longer_run_extends_the_same_schedule(websearch):
    """Common random numbers: the first seconds do not depend on the duration."""
    short = background.schedule(HOSTS, 30.0, 2.0, websearch, seed=5)
    long = background.schedule(HOSTS, 30.0, 6.0, websearch, seed=5)
    pd.testing.assert_frame_equal(short, long.iloc[:len(short)])


def test_load_and_rate_agree(websearch):
    cfg = background.BackgroundConfig(load=0.25, rate=None)
    rate = background.rate_per_host(cfg, websearch, 10e9)
    assert rate == pytest.approx(0.25 * 10e9 / (8 * 1_711_250))
    assert background.offered_load(184, websearch, 10e9) == pytest.approx(0.2519, abs=1e-3)
