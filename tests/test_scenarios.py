"""The built-in scenario files, and scenario inheritance (`base = ...`)."""

from __future__ import annotations

import pytest

from harness.config.scenario import SCENARIOS_DIR, ConfigError, load_scenario
from harness.engine.planning import plan


@pytest.mark.parametrize("path", sorted(SCENARIOS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_built_in_scenario_plans(path):
    p = plan(load_scenario(path))
    assert p.scenario.name == path.stem


@pytest.mark.parametrize("ratio, compute_ms", [(16, 2240), (8, 1120), (4, 560), (2, 280)])
def test_thesis_ratio_gives_the_reference_compute_time(ratio, compute_ms):
    p = plan(load_scenario("thesis", [f"training.ratio={ratio}"]))
    assert p.job.profile.compute_ms == pytest.approx(compute_ms)
    assert p.job.hosts == tuple(range(8)) and p.job.profile.n_layers == 50
    assert p.topology.host_link(0).rate_bps == 10e9


@pytest.mark.parametrize("rate, load", [(23, 0.031), (46, 0.063), (92, 0.125), (184, 0.25)])
def test_thesis_background_rate_gives_the_reference_load(rate, load):
    p = plan(load_scenario("thesis", [f"background.rate={rate}"]))
    assert p.background_load == pytest.approx(load, abs=0.002)


def test_thesis_priority_arms():
    same = plan(load_scenario("thesis"))
    low = plan(load_scenario("thesis", ["training.priority=low"]))
    assert same.job.tos == same.background_tos
    of = low.classes.class_of_tos()
    assert (of[low.job.tos], of[low.background_tos]) == ("low", "high")
    # common random numbers: both arms see the same background flows
    assert same.flows.equals(low.flows)


def test_arm_files_inherit_from_their_base():
    both = load_scenario("thesis")
    alone = load_scenario("thesis-training-alone")
    assert not alone.background.enabled and alone.training == both.training
    assert alone.run == both.run and alone.topology == both.topology
    bg = load_scenario("thesis-background-alone")
    assert not bg.training.enabled and bg.background == both.background


def test_base_errors(tmp_path):
    (tmp_path / "a.toml").write_text('base = "b.toml"\n')
    (tmp_path / "b.toml").write_text('base = "a.toml"\n')
    with pytest.raises(ConfigError, match="include each other") as err:
        load_scenario(tmp_path / "a.toml")
    assert err.value.field == "base"
    (tmp_path / "c.toml").write_text('base = "nowhere"\n')
    with pytest.raises(ConfigError, match="not found.*built-in: .*thesis") as err:
        load_scenario(tmp_path / "c.toml")
    assert err.value.field == "base"
    (tmp_path / "d.toml").write_text('base = "thesis"\n[training]\nratio = 2.0\n')
    d = load_scenario(tmp_path / "d.toml")
    assert d.training.ratio == 2 and d.training.workers == 8
