"""The Python API refuses what the CLI refuses: both call the same use cases
(harness.usecases), so each pre-check of `harness sweep` and
`harness boundary` is made by harness.sweep and harness.api.boundary too,
raising the harness's ConfigError types (not SystemExit), before any cell
runs or the directory is made. ns-3 never starts here."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import harness
import harness.api
from harness import cli
from harness.config.errors import ConfigError
from harness.sweeps.sweepdir import SweepError
from tests.test_bad_inputs import GRID, SEARCH, SHORT_GRID

ADAPTIVE_WITHOUT_SEEDS = GRID   # no seed axis: added seeds have nothing to add to


@pytest.fixture
def no_run(monkeypatch, tmp_path):
    """ns-3 must not start and no cell may run; the current directory is an
    empty temporary one."""
    from harness.engine import ns3
    from harness.sweeps import sweeping

    def refuse(*args, **kwargs):
        raise AssertionError("ns-3 was started or a cell ran")

    monkeypatch.setattr(ns3, "load", refuse)
    monkeypatch.setattr(sweeping, "run_sweep", refuse)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DDNN_HARNESS_RESULTS", raising=False)
    return tmp_path


def _both(tmp_path, command: str, files: dict[str, str], argv: list[str], api_call,
          match: str) -> None:
    """The CLI stops with exit 2 and one line naming `match`; the API raises
    a ConfigError (or SweepError) naming it; neither makes `out`."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = CliRunner().invoke(cli.main, [command, *argv, "-o", str(tmp_path / "cli-out")],
                           prog_name="harness")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and match in r.stderr, r.stderr
    with pytest.raises((ConfigError, SweepError), match=match.replace("[", r"\[")):
        api_call(tmp_path / "api-out")
    assert not (tmp_path / "api-out").exists() and not (tmp_path / "cli-out").exists()


def test_a_boundary_grid_is_refused_as_a_sweep_by_both(no_run):
    _both(no_run, "sweep", {"b.toml": SEARCH}, ["b.toml"],
          lambda out: harness.sweep("b.toml", out), "is a boundary search; run it with")


def test_a_sweep_grid_is_refused_as_a_boundary_search_by_both(no_run):
    _both(no_run, "boundary", {"g.toml": GRID}, ["g.toml"],
          lambda out: harness.api.boundary("g.toml", out), "search: missing")


def test_added_seeds_without_a_seed_axis_are_refused_by_both(no_run):
    # the CLI names --max-seeds, the API max_seeds: the same check
    _both(no_run, "sweep", {"g.toml": ADAPTIVE_WITHOUT_SEEDS}, ["g.toml", "--max-seeds", "3"],
          lambda out: harness.sweep("g.toml", out, max_seeds=3),
          "adding seeds needs a seed axis")


def test_a_bad_budget_is_refused_by_both(no_run):
    (no_run / "g.toml").write_text(GRID)
    r = CliRunner().invoke(cli.main, ["sweep", "g.toml", "--budget", "soon", "-o", "cli-out"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --budget: "), r.output
    with pytest.raises(ConfigError, match="^budget: "):
        harness.sweep("g.toml", "api-out", budget="soon")
    assert not (no_run / "api-out").exists() and not (no_run / "cli-out").exists()


def test_a_short_window_in_a_cell_is_refused_by_both(no_run):
    _both(no_run, "sweep", {"s.toml": SHORT_GRID}, ["s.toml"],
          lambda out: harness.sweep("s.toml", out), "runs them anyway")
    with pytest.raises(ConfigError, match="allow_short=True runs them anyway"):
        harness.sweep("s.toml", no_run / "api-out")


def test_a_directory_of_another_sweep_is_refused_by_both(no_run):
    """Without --resume (resume=True), a directory holding a sweep is not
    continued; a directory of other files is never used."""
    (no_run / "g.toml").write_text(GRID)
    for out in ("cli-out", "api-out"):
        (no_run / out).mkdir()
        (no_run / out / "notes.txt").write_text("mine")
    r = CliRunner().invoke(cli.main, ["sweep", "g.toml", "-o", "cli-out"])
    assert r.exit_code == 2 and r.stderr.startswith("error: -o: "), r.output
    with pytest.raises(ConfigError, match="^out: "):
        harness.sweep("g.toml", "api-out")
    assert (no_run / "api-out" / "notes.txt").read_text() == "mine"


def test_an_unknown_executor_is_refused_by_the_api(no_run):
    (no_run / "g.toml").write_text(GRID)
    with pytest.raises(ConfigError, match="^executor: unknown executor 'slurm'"):
        harness.sweep("g.toml", "out", executor="slurm")
    with pytest.raises(ConfigError, match="^jobs: must be >= 1"):
        harness.sweep("g.toml", "out", jobs=0)
    assert not (no_run / "out").exists()


def test_check_makes_harness_check_s_checks_naming_the_api_argument(no_run):
    """harness.check plans the scenario as `harness check` does: a service's
    load its links cannot carry is refused (the API took a QPS of 25,000 % of
    a link), and a window shorter than one iteration is refused naming
    allow_short=True, the API's argument (not the CLI's --allow-short)."""
    with pytest.raises(ConfigError, match=r"service\[0\]\.qps: .* busy at zero load"):
        harness.check(None, {"topology.file": "single-tor-1g",
                             "service": [{"kind": "rpc", "qps": 1e7}]})
    with pytest.raises(ConfigError, match="allow_short=True") as short:
        harness.check("thesis", {"run.duration": 0.5, "run.warmup": 0.1, "run.cooldown": 0.1})
    assert "--allow-short" not in str(short.value)
    assert harness.check("thesis", {"run.duration": 0.5, "run.warmup": 0.1,
                                    "run.cooldown": 0.1}, allow_short=True).name == "thesis"
