"""The everyday commands: harness list, harness check, --help naming the
built-ins. Nothing here runs a simulation."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from harness import cli
from harness import catalog
from harness.engine import ns3


@pytest.fixture
def invoke(monkeypatch):
    monkeypatch.setattr(ns3, "load", lambda *a, **k: pytest.fail("ns-3 was started"))
    runner = CliRunner()
    return lambda *argv: runner.invoke(cli.main, list(argv), prog_name="harness")


def test_list_shows_every_kind_of_builtin(invoke):
    r = invoke("list")
    assert r.exit_code == 0, r.output
    for title in ("scenarios", "sweeps", "topologies", "workloads", "profiles", "policies"):
        assert f"\n{title} (" in f"\n{r.stdout}"
    for name in (*catalog.scenario_names(), *catalog.sweep_names(), "leaf-spine",
                 "websearch", "datamining", "resnet50-like-2MB", "mercury", "bytescheduler"):
        assert f"  {name} " in r.stdout, name
    assert "mean 1,711,250 B" in r.stdout  # the web-search CDF's mean (docs/model/background.md)


def _unwrapped(text: str) -> str:
    """click wraps help text at hyphens too ("two-\n  jobs-spine"): undo that."""
    return re.sub(r"-\n\s*", "-", text)


def test_help_texts_name_the_builtins(invoke):
    run_help = _unwrapped(invoke("run", "--help").stdout)
    assert all(name in run_help for name in catalog.scenario_names())
    sweep_help = _unwrapped(invoke("sweep", "--help").stdout)
    assert all(name in sweep_help for name in catalog.sweep_names())
    assert "harness list" in invoke("--help").stdout


def test_check_json_prints_the_resolved_scenario_and_the_short_run_note(invoke):
    r = invoke("check", "--json", "--set", "run.duration=0.3", "--set", "seed=7")
    assert r.exit_code == 0, r.output
    assert "note: run.duration = 0.3 s is shorter than the inherited warm-up" in r.stderr
    resolved = json.loads(r.stdout)  # stdout is the JSON alone
    run = resolved["scenario"]["run"]
    assert run["duration"] == 0.3 and run["warmup"] == pytest.approx(0.0375)
    assert run["cooldown"] == pytest.approx(0.0375) and resolved["scenario"]["seed"] == 7
    assert "is valid" in r.stderr and "events" in r.stderr


def test_a_longer_run_keeps_its_warmup(invoke):
    r = invoke("check", "--json", "--set", "run.duration=4")
    assert r.exit_code == 0 and "note:" not in r.stderr
    assert json.loads(r.stdout)["run"]["warmup"] == 0.25


def test_check_lists_a_grids_cells_with_invalid_ones_and_a_cost(invoke, grid_file, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05, inf]"))
    r = invoke("check", str(bad), "-j", "2")
    assert r.exit_code == 1, r.output  # a sweep would record the invalid cells failed
    lines = r.stdout.splitlines()
    assert sum("invalid: background.load: must be a finite number" in l for l in lines) == 4
    assert sum(l.rstrip().endswith(" ok") for l in lines) == 4
    assert "8 cells (2 x 2 points x 2 arms), 4 valid, 4 invalid" in r.stdout
    assert "on 2 cores" in r.stdout
    good = invoke("check", str(grid_file))
    assert good.exit_code == 0 and "8 valid, 0 invalid" in good.stdout


def test_check_tells_a_scenario_from_a_sweep_preset(invoke):
    r = invoke("check", "quick")  # only a sweep preset
    assert r.exit_code == 0 and "32 cells" in r.stdout
    both = invoke("check", "thesis")  # a scenario and a sweep preset
    assert both.exit_code == 0 and "harness check --sweep thesis" in both.stderr
    assert "scenario 'thesis' is valid" in both.stdout
    assert "96 cells" in invoke("check", "--sweep", "thesis").stdout
