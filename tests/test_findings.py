"""Findings as kept results (harness.sweeps.findings, harness findings):
a real sweep kept, read back, drawn with its provenance, and checked against
today's code: current as kept, stale (naming the setting) once a setting that
decides its cells changes, a grid file's or a default's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli
from harness.sweeps import findings as kept


@pytest.fixture
def registry(tmp_path, monkeypatch, grid_file):
    """A findings registry of its own, with one finding on a copy of the tiny grid."""
    root = tmp_path / "findings"
    (root / "grids").mkdir(parents=True)
    grid = root / "grids" / "tiny.toml"
    shutil.copyfile(grid_file, grid)
    (root / "findings.toml").write_text(
        '[sweeps.tiny]\ngrid = "tiny"\n\n'
        '[findings.tiny-map]\ntitle = "A tiny map"\npage = "findings/tiny.md"\n'
        'sweeps = ["tiny"]\nfigures = [{ file = "tiny-map.png", sweep = "tiny", kind = "map" }]\n')
    monkeypatch.setattr(kept, "FINDINGS_DIR", root)
    monkeypatch.setattr(kept, "REGISTRY", root / "findings.toml")
    monkeypatch.setattr(kept, "GRIDS_DIR", root / "grids")
    return root


@pytest.fixture
def kept_tiny(registry, local_sweep):
    return kept.keep(kept.kept_sweep("tiny"), local_sweep.out)


def test_kept_sweep_holds_tables_settings_and_provenance(kept_tiny, local_sweep):
    from harness.analysis.tables import load_sweep

    names = {p.name for p in kept_tiny.iterdir()}
    assert {"sweep.json", "grid.toml", "summary.parquet", "deltas_mean.parquet",
            "settings.json", "provenance.json"} <= names
    assert not (kept_tiny / "cells").exists()     # no run directories, no per-flow logs
    record = json.loads((kept_tiny / "provenance.json").read_text())
    assert record["cells"] == 8 and record["simulation_cpu_s"] > 0
    assert record["buffer_model"] and record["seeds"] == "1" and record["commit"]
    again = load_sweep(kept_tiny)
    assert again.deltas_mean.equals(load_sweep(local_sweep.out).deltas_mean)
    settings = json.loads((kept_tiny / "settings.json").read_text())
    assert set(settings["cells"]) == set(again.summary["cell"])
    # the load axis is a cell's own setting, the rest shared once
    assert all("background.load" in own for own in settings["cells"].values())


def test_check_is_current_then_stale_naming_the_grid_setting(kept_tiny, registry):
    assert kept.check_sweep(kept.kept_sweep("tiny")).status == kept.CURRENT
    grid = registry / "grids" / "tiny.toml"
    grid.write_text(grid.read_text().replace("[set]", '[set]\n"tcp.initial_cwnd" = 4', 1))
    state = kept.check_sweep(kept.kept_sweep("tiny"))
    assert state.status == kept.STALE
    assert any(r.startswith("tcp.initial_cwnd: 10 -> 4") for r in state.reasons), state.reasons


def test_a_changed_default_makes_check_fail(kept_tiny, registry, tmp_path):
    """A default that decides the kept cells changes in the code (a copy of the
    package with tcp.initial_cwnd's default edited): `harness findings check`
    exits 1 naming the finding and the setting."""
    repo = Path(__file__).resolve().parents[1]
    copy = tmp_path / "repo"
    shutil.copytree(repo / "harness", copy / "harness",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("workloads/sweeps", "workloads/scenarios", "workloads/cdf",
                   "workloads/profiles", "topologies"):
        shutil.copytree(repo / folder, copy / folder)
    shutil.copytree(registry, copy / "workloads" / "findings")
    schema = copy / "harness" / "config" / "schema" / "tcp.py"
    text = schema.read_text()
    assert 'Field(10, description="initial window' in text
    schema.write_text(text.replace('Field(10, description="initial window',
                                   'Field(4, description="initial window'))

    def check() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "harness.cli", "findings", "check"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(copy)})

    result = check()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tiny-map" in result.stdout and "stale" in result.stdout
    assert "tcp.initial_cwnd: 10 -> 4 (8 of 8 cells)" in result.stdout
    assert "findings not current: tiny-map" in result.stderr
    # the same code with the default as it was: the cells are current again
    schema.write_text(text)
    assert "tcp.initial_cwnd" not in check().stdout


def test_figure_carries_provenance_and_check_compares_it(kept_tiny, tmp_path, monkeypatch):
    from harness.outputs import findings_pages

    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.services.findings.docs_dir", lambda: docs)
    result = CliRunner().invoke(cli.main, ["findings", "draw", "tiny-map"])
    assert result.exit_code == 0, result.output
    meta = findings_pages.png_metadata(docs / "tiny-map.png")
    record = json.loads((kept_tiny / "provenance.json").read_text())
    for key in ("preset", "buffer_model", "scale", "seeds", "commit", "date"):
        assert key in meta
    assert (meta["commit"], meta["date"], meta["seeds"]) == (record["commit"], record["date"], "1")
    assert CliRunner().invoke(cli.main, ["findings", "check"]).exit_code == 0
    record["date"] = "1999-01-01"
    (kept_tiny / "provenance.json").write_text(json.dumps(record))
    result = CliRunner().invoke(cli.main, ["findings", "check"])
    assert result.exit_code == 1 and "tiny-map.png was drawn from other tables" in result.output


def test_generated_page_parts(kept_tiny):
    from harness.outputs import findings_pages

    block = findings_pages.finding_block("tiny-map")
    assert "(current)" in block and "harness findings run tiny-map" in block
    table = findings_pages.finding_changes("tiny", "iteration_time")
    header, rule, *rows = table.splitlines()
    assert header.split("|")[1:4] == [" R ", " load ", " arm "] and len(rows) == 4
    assert all("`low` | iteration_time |" in r and "[" in r for r in rows)  # with its interval
    grid_map = findings_pages.finding_map("tiny")
    assert "| R | load 0.05 | load 0.1 |" in grid_map and grid_map.count("\n| ") == 3  # head, 2 rows


def test_not_kept_and_unknown_names(registry):
    assert kept.check_sweep(kept.kept_sweep("tiny")).status == kept.NOT_KEPT
    result = CliRunner().invoke(cli.main, ["findings", "check"])
    assert result.exit_code == 0 and "not kept" in result.output
    assert CliRunner().invoke(cli.main, ["findings", "check", "--strict"]).exit_code == 1
    result = CliRunner().invoke(cli.main, ["findings", "run", "nope"])
    assert result.exit_code == 2 and "no finding 'nope'; findings: tiny-map" in result.output


def test_registry_findings_all_name_known_pages_and_sweeps():
    """The project's own registry: every page exists, every grid loads."""
    from harness.sweeps.grid import load_grid

    docs = Path(__file__).resolve().parents[1] / "docs"
    for finding in kept.load_registry().values():
        assert (docs / finding.page).is_file(), finding.page
        for sweep in finding.sweeps:
            load_grid(sweep.grid_path())


def test_findings_run_resumes_keeps_and_draws(registry, local_sweep, tmp_path, monkeypatch):
    """`harness findings run` on a sweep that already ran there: nothing is
    simulated again, its tables are kept and its figure drawn."""
    results = tmp_path / "results"
    shutil.copytree(local_sweep.out, results / "tiny")
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.services.findings.docs_dir", lambda: docs)
    result = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "1",
                                           "--results", str(results)])
    assert result.exit_code == 0, result.output
    assert "--resume" in result.output and "kept tiny" in result.output
    assert (registry / "tiny" / "deltas_mean.parquet").is_file()
    assert (docs / "tiny-map.png").is_file()
    assert kept.check_sweep(kept.kept_sweep("tiny")).status == kept.CURRENT
    bad = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "0"])
    assert bad.exit_code == 2 and "-j/--jobs" in bad.output
