"""Where results go and how they are written: nothing a user wrote is ever
deleted or overwritten, default outputs land under the current directory
(or $DDNN_HARNESS_RESULTS) with safe names, no temporary leftovers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli
from harness.io import outdir
from harness.config.errors import ConfigError


@pytest.mark.parametrize("name, safe", [
    ("default", "default"), ("../../../escaped", "escaped"), ("/etc/passwd", "etc-passwd"),
    ("a b/c", "a-b-c"), ("..", "unnamed"), ("", "unnamed"), ("thesis-small_2.x", "thesis-small_2.x"),
])
def test_names_become_one_safe_path_component(name, safe):
    assert outdir.safe_name(name) == safe


def test_default_outputs_are_under_the_current_directory_or_the_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(outdir.RESULTS_ENV, raising=False)
    run_dir = outdir.default_run_dir("../../../escaped", "0123")
    assert run_dir == tmp_path / "results" / "runs" / "escaped-0123"
    monkeypatch.setenv(outdir.RESULTS_ENV, str(tmp_path / "elsewhere"))
    assert outdir.default_sweep_dir("../x") == tmp_path / "elsewhere" / "sweeps" / "x"


def test_a_grid_named_with_dots_stays_inside_results(grid_file, tmp_path, monkeypatch):
    from harness.sweeps.grid import load_grid
    from harness.sweeps.sweepdir import default_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(outdir.RESULTS_ENV, raising=False)
    escaping = tmp_path / "escaping.toml"
    escaping.write_text(grid_file.read_text().replace('name = "tiny"',
                                                      'name = "../../../escaped"'))
    out = default_dir(load_grid(escaping))
    assert out == tmp_path / "results" / "sweeps" / "escaped"


def _fake_run(path: Path) -> Path:
    path.mkdir(parents=True)
    for name in ("config.json", "summary.json", "manifest.json", "flows.parquet"):
        (path / name).write_text("old")
    return path


def test_write_dir_replaces_only_empty_or_run_directories(tmp_path):
    def fill(tmp):
        (tmp / "config.json").write_text("new")
        (tmp / "manifest.json").write_text("new")

    ours = _fake_run(tmp_path / "ours")
    (ours / "plots").mkdir()
    (ours / "plots" / "fct-cdf.png").write_bytes(b"png")
    assert outdir.is_run_dir(ours)
    outdir.write_dir(ours, fill)
    assert sorted(p.name for p in ours.iterdir()) == ["config.json", "manifest.json"]

    empty = tmp_path / "empty"
    empty.mkdir()
    outdir.write_dir(empty, fill)
    assert (empty / "config.json").read_text() == "new"

    user = _fake_run(tmp_path / "user")
    (user / "notes.tex").write_text("mine")
    assert not outdir.is_run_dir(user)
    with pytest.raises(ConfigError, match="not a run directory"):
        outdir.write_dir(user, fill)
    assert (user / "notes.tex").read_text() == "mine"
    assert (user / "config.json").read_text() == "old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftovers


def test_figure_directories_know_our_figures_by_the_registrys_names(tmp_path):
    """harness.io knows no sweep figure: `harness plot` passes the registry's
    names (registry.FIGURE_NAMES) to the check. Every figure of the registry
    (and a run's, and a metric map) is then ours; a user's PNG never is, nor
    a sweep figure where only a run's figures are known (a run directory's
    plots/, checked by writers below the figures' layer)."""
    from harness.outputs import report
    from harness.outputs.plots import registry

    names = registry.FIGURE_NAMES
    assert outdir.RUN_FIGURES <= names
    assert {f.name for f in registry.SWEEP_FIGURES} <= names
    assert report.SWEEP_FIGURES == registry.report_order()
    figs = tmp_path / "figs"
    figs.mkdir()
    for figure in registry.SWEEP_FIGURES:
        (figs / f"{figure.name}.png").write_bytes(b"png")
    (figs / "fct-cdf.pdf").write_bytes(b"pdf")
    (figs / "map-fct_small_p99.svg").write_bytes(b"svg")
    assert outdir.is_figure_dir(figs, names)
    assert outdir.check_figure_dir(figs, "-o", ("png",), 1, names) == figs.resolve()
    assert not outdir.is_figure_dir(figs)   # a run's names only: the sweep's are not
    (figs / "my-plot.png").write_bytes(b"mine")
    assert not outdir.is_figure_dir(figs, names)
    with pytest.raises(ConfigError, match="my-plot.png"):
        outdir.check_figure_dir(figs, "-o", ("png",), 1, names)
    assert (figs / "my-plot.png").read_bytes() == b"mine"


def test_write_dir_keeps_an_existing_result_when_asked_and_cleans_up_on_error(tmp_path):
    done = _fake_run(tmp_path / "cell")
    outdir.write_dir(done, lambda tmp: (tmp / "config.json").write_text("new"), existing="keep")
    assert (done / "config.json").read_text() == "old"

    def broken(tmp):
        (tmp / "config.json").write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        outdir.write_dir(tmp_path / "new", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cell"]


def test_remove_leftovers_spares_live_writers_and_other_files(tmp_path):
    dead, alive = 4_194_305, os.getppid()
    (tmp_path / f".x.tmp-{dead}").mkdir()
    (tmp_path / f".y.parquet.tmp-{dead}").write_text("")
    (tmp_path / f".z.old-{dead}").mkdir()
    (tmp_path / f".w.tmp-{alive}").mkdir()
    (tmp_path / ".hidden").write_text("")
    (tmp_path / f"x.tmp-{dead}").write_text("")  # not hidden: not ours
    removed = outdir.remove_leftovers(tmp_path)
    assert len(removed) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".hidden", f".w.tmp-{alive}", f"x.tmp-{dead}"]


def test_run_replaces_its_own_directory_but_never_a_users(tmp_path, monkeypatch):
    """Real runs through the CLI: -o an earlier run directory is replaced (same
    seed: the same summary.json); with a user's file in it, it is refused
    before the simulation and the file stays."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    args = ["run", "--set", "run.duration=0.3", "--set", "background.load=0.1", "-o", "d"]
    first = runner.invoke(cli.main, args)
    assert first.exit_code == 0, first.output
    assert "note: run.duration = 0.3 s" in first.stderr  # warm-up and cool-down scaled
    summary = (tmp_path / "d" / "summary.json").read_bytes()
    assert b"wall" not in summary  # timings live in manifest.json
    second = runner.invoke(cli.main, args)
    assert second.exit_code == 0, second.output
    assert (tmp_path / "d" / "summary.json").read_bytes() == summary
    (tmp_path / "d" / "notes.tex").write_text("mine")
    third = runner.invoke(cli.main, args)
    assert third.exit_code == 2 and "not empty and is not a run directory" in third.stderr
    assert "scenario 'default'" not in third.stderr  # refused before the run started
    assert (tmp_path / "d" / "notes.tex").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # no temporary folders
