"""Findings as kept results (harness.findings, harness findings):
a real sweep kept, read back, drawn with its provenance, and checked against
today's code: current as kept, stale (naming the setting) once a setting that
decides its cells changes, a grid file's or a default's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli
from harness.config.errors import ConfigError
from harness.findings import checking, keeping
from harness.findings import registry as kept


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
        'sweeps = ["tiny"]\nfigures = [{ file = "tiny-map.png", sweep = "tiny", kind = "map" },\n'
        '           { file = "tiny-frontier.png", sweep = "tiny", kind = "frontier" }]\n')
    monkeypatch.setattr(kept, "FINDINGS_DIR", root)
    monkeypatch.setattr(kept, "REGISTRY", root / "findings.toml")
    monkeypatch.setattr(kept, "GRIDS_DIR", root / "grids")
    return root


@pytest.fixture
def kept_tiny(registry, local_sweep):
    return keeping.keep(kept.kept_sweep("tiny"), local_sweep.out)


def test_kept_sweep_holds_tables_settings_and_provenance(kept_tiny, local_sweep):
    from harness.analysis.tables import load_sweep

    names = {p.name for p in kept_tiny.iterdir()}
    assert {"sweep.json", "grid.toml", "summary.parquet", "deltas_mean.parquet",
            "settings.json", "provenance.json"} <= names
    assert not (kept_tiny / "cells").exists()     # no run directories, no per-flow logs
    record = json.loads((kept_tiny / "provenance.json").read_text())
    assert record["cells"] == 8 and record["simulation_cpu_s"] > 0
    assert record["buffer_model"] and record["seeds"] == "1" and record["commit"]
    assert record["engine"]["kind"] == "wheel"   # the ns-3 its cells ran on
    again = load_sweep(kept_tiny)
    assert again.deltas_mean.equals(load_sweep(local_sweep.out).deltas_mean)
    settings = json.loads((kept_tiny / "settings.json").read_text())
    assert set(settings["cells"]) == set(again.summary["cell"])
    # the load axis is a cell's own setting, the rest shared once
    assert all("background.load" in own for own in settings["cells"].values())


def test_a_result_kept_from_a_tree_with_changes_keeps_the_diff(registry, local_sweep,
                                                                monkeypatch):
    """A "+changes" commit alone does not reproduce a kept result: the code's
    diff against it is kept beside (changes.diff), named in the provenance;
    a clean tree keeps none."""
    monkeypatch.setattr(keeping, "head_commit", lambda: "0123456789ab+changes")
    monkeypatch.setattr(keeping, "uncommitted_changes", lambda: "--- a/x\n+++ b/x\n")
    folder = keeping.keep(kept.kept_sweep("tiny"), local_sweep.out)
    record = json.loads((folder / "provenance.json").read_text())
    assert record["commit"] == "0123456789ab+changes" and record["changes"] == "changes.diff"
    assert (folder / "changes.diff").read_text() == "--- a/x\n+++ b/x\n"
    monkeypatch.setattr(keeping, "head_commit", lambda: "0123456789ab")
    folder = keeping.keep(kept.kept_sweep("tiny"), local_sweep.out)   # kept again: replaced
    assert not (folder / "changes.diff").exists()
    assert "changes" not in json.loads((folder / "provenance.json").read_text())


def test_the_listing_s_digest_check_agrees_with_the_planned_one(kept_tiny, registry):
    """`findings list` compares digests without planning (seconds, where it
    took minutes): the same status and reasons as the planned check, current
    and stale."""
    sweep = kept.kept_sweep("tiny")
    fast, full = checking.check_sweep(sweep, planned=False), checking.check_sweep(sweep)
    assert fast.status == full.status == checking.CURRENT
    grid = registry / "grids" / "tiny.toml"
    grid.write_text(grid.read_text().replace("[set]", '[set]\n"tcp.initial_cwnd" = 4', 1))
    fast, full = checking.check_sweep(sweep, planned=False), checking.check_sweep(sweep)
    assert fast.status == full.status == checking.STALE and fast.reasons == full.reasons


def test_check_is_current_then_stale_naming_the_grid_setting(kept_tiny, registry):
    assert checking.check_sweep(kept.kept_sweep("tiny")).status == checking.CURRENT
    grid = registry / "grids" / "tiny.toml"
    grid.write_text(grid.read_text().replace("[set]", '[set]\n"tcp.initial_cwnd" = 4', 1))
    state = checking.check_sweep(kept.kept_sweep("tiny"))
    assert state.status == checking.STALE
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
    from harness.findings import figures, status_pages

    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.usecases.findings.docs_dir", lambda: docs)
    monkeypatch.setattr("harness.config.paths.DOCS_DIR", docs)
    assert status_pages.finding_figures("tiny-map") == ""    # nothing drawn: no links
    result = CliRunner().invoke(cli.main, ["findings", "draw", "tiny-map"])
    assert result.exit_code == 0, result.output
    # relative to findings/tiny.md, each linked to its full size
    assert status_pages.finding_figures("tiny-map") == (
        "[![tiny: map](../tiny-map.png)](../tiny-map.png)\n\n"
        "[![tiny: frontier](../tiny-frontier.png)](../tiny-frontier.png)\n")
    record = json.loads((kept_tiny / "provenance.json").read_text())
    for figure in ("tiny-map.png", "tiny-frontier.png"):
        meta = figures.png_metadata(docs / figure)
        for key in ("preset", "buffer_model", "scale", "seeds", "commit", "date"):
            assert key in meta
        assert (meta["commit"], meta["date"], meta["seeds"]) == (record["commit"],
                                                                 record["date"], "1")
    assert CliRunner().invoke(cli.main, ["findings", "check"]).exit_code == 0
    record["date"] = "1999-01-01"
    (kept_tiny / "provenance.json").write_text(json.dumps(record))
    result = CliRunner().invoke(cli.main, ["findings", "check"])
    assert result.exit_code == 1 and "tiny-map.png was drawn from other tables" in result.output


def test_the_provenance_line_names_a_build_engine_only():
    from harness.findings import status_pages

    record = {"grid": "g", "scale": "2", "buffer_model": "shared", "seeds": "3", "cells": 4,
              "simulation_cpu_s": 10.0, "date": "2026-11-28", "commit": "abc",
              "machine": "x", "engine": {"kind": "wheel", "version": "3.44.post0"}}
    assert "build" not in status_pages.provenance_line(record)
    record["engine"] = {"kind": "build", "version": "3.44", "profile": "optimized"}
    assert "an ns-3.44 build (optimized profile" in status_pages.provenance_line(record)


def test_generated_page_parts(kept_tiny):
    from harness.findings import change_tables, map_pages, status_pages, verdict_pages

    block = status_pages.finding_block("tiny-map")
    assert "(current)" in block and "harness findings run tiny-map" in block
    table = change_tables.finding_changes("tiny", "iteration_time")
    header, rule, *rows = table.splitlines()
    assert header.split("|")[1:4] == [" R ", " load ", " arm "] and len(rows) == 4
    assert all("`low` | iteration_time |" in r and "[" in r for r in rows)  # with its interval
    grid_map = map_pages.finding_map("tiny")
    assert "| R | load 0.05 | load 0.1 |" in grid_map and grid_map.count("\n| ") == 3  # head, 2 rows
    # absolute values per point and arm: the mean over seeds, in ms for seconds
    from harness.analysis.tables import load_sweep

    summary = load_sweep(kept_tiny).summary
    means = change_tables.finding_table("tiny", "mean_iteration_s")
    header, rule, *rows = means.splitlines()
    assert header == "| R | load | arm | mean iteration, ms |" and len(rows) == len(summary)
    one = summary.iloc[0]
    assert f"{1000 * one['mean_iteration_s']:.4g} (1)" in means  # one seed: no interval
    with pytest.raises(KeyError, match="no column 'nope'"):
        change_tables.finding_table("tiny", "nope")
    # the knob frontier: a table per point, the reference at 0, the point's verdict
    from harness.analysis import frontier

    plane = verdict_pages.finding_frontier("tiny")
    deltas = load_sweep(kept_tiny).deltas_mean
    low = deltas[(deltas["arm"] == "low") & (deltas["metric"] == "iteration_time")]
    assert plane.count("| `same` | 0 (reference) | 0 | 0 | ") == len(low) == 4
    # the reference's own Pareto marks (it may be dominated), not a constant
    table, _ = frontier.sweep_frontier(deltas, load_sweep(kept_tiny).grid)
    for ref in table[table["is_reference"]].to_dict("records"):
        assert f"| `same` | 0 (reference) | 0 | 0 | {frontier.pareto_marks(ref)} |" in plane
    for row in low.to_dict("records"):
        assert frontier.interval_text(row["change"], row["change_low"],
                                      row["change_high"]) in plane
    assert plane.count("best: ") + plane.count("none: ") == 4
    words = map_pages.finding_summary("tiny")
    assert words.startswith("- **Training** (`low` vs `same`):") and "of 4 verdicts decided" in words


def test_not_kept_and_unknown_names(registry):
    assert checking.check_sweep(kept.kept_sweep("tiny")).status == checking.NOT_KEPT
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
    # begun, not kept: list shows its finished cells and the CPU they cost
    cells = sorted((results / "tiny" / "cells").iterdir())
    manifests = [json.loads((c / "manifest.json").read_text()) for c in cells]
    aside = tmp_path / "aside"
    shutil.move(cells[0], aside)
    listed = CliRunner().invoke(cli.main, ["findings", "list", "--results", str(results)])
    cpu = sum(m["simulation_cpu_s"] for m in manifests[1:])
    # what is left, at the finished cells' CPU per predicted byte
    from harness.sweeps.grid import expand, load_grid

    predicted = {c.id: c.predicted_bytes for c in expand(load_grid(results / "tiny" / "grid.toml"))}
    left = cpu / sum(predicted[c.name] for c in cells[1:]) * predicted[cells[0].name]
    assert f"7 of 8 cells run in {results / 'tiny'} ({cpu:,.0f} s CPU), " \
           f"~{left:,.0f} s CPU left" in " ".join(listed.output.split())
    shutil.move(aside, cells[0])
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.usecases.findings.docs_dir", lambda: docs)
    result = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "1",
                                           "--results", str(results)])
    assert result.exit_code == 0, result.output
    assert "--resume" in result.output and "kept tiny" in result.output
    assert (registry / "tiny" / "deltas_mean.parquet").is_file()
    assert (docs / "tiny-map.png").is_file()
    assert checking.check_sweep(kept.kept_sweep("tiny")).status == checking.CURRENT
    # kept and current: a second run leaves it (no budget spent again) unless --rerun
    again = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "1",
                                          "--results", str(results)])
    assert again.exit_code == 0 and "kept tiny is current: left as it is" in again.output
    assert "--resume" not in again.output
    # --rerun keeps it again: the kept folder is replaced whole
    before = (registry / "tiny" / "provenance.json").stat().st_ino
    rerun = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "1", "--rerun",
                                          "--no-added-seeds", "--results", str(results)])
    assert rerun.exit_code == 0, rerun.output
    assert "kept tiny" in rerun.output and (registry / "tiny" / "provenance.json").stat().st_ino != before
    assert checking.check_sweep(kept.kept_sweep("tiny")).status == checking.CURRENT
    # a file keeping did not write stops the run before any sweep runs, and stays
    (registry / "tiny" / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "1", "--rerun",
                                            "--results", str(results)])
    assert refused.exit_code != 0 and "--resume" not in refused.output
    assert str(registry / "tiny") in refused.output and "did not write" in refused.output
    assert (registry / "tiny" / "notes.txt").read_text() == "mine"
    bad = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "0"])
    assert bad.exit_code == 2 and "-j/--jobs" in bad.output


def test_a_finding_goes_on_from_cells_kept_in_parts(registry, local_sweep, tmp_path,
                                                    monkeypatch, capfd):
    """A sweep too long for one sitting: its finished cells kept as cached
    cells (by `harness reference` and findings.toml's `reference`, the old
    names of `harness cache` and `cached`), named in findings.toml; `findings list` says
    how many are kept, `findings run` runs only the others and keeps the
    tables of one run straight through."""
    from harness.analysis.tables import load_sweep

    part = tmp_path / "part"
    shutil.copytree(local_sweep.out, part)
    for cell in sorted((part / "cells").iterdir())[:3]:   # three cells did not finish
        shutil.rmtree(cell)
    made = CliRunner().invoke(cli.main, ["reference", str(part), "-o", str(tmp_path / "ref")])
    assert made.exit_code == 0 and "5 cached cells" in made.output, made.output
    registry_file = registry / "findings.toml"
    registry_file.write_text(registry_file.read_text().replace(
        'grid = "tiny"\n', f'grid = "tiny"\nreference = "{tmp_path / "ref"}"\n', 1))
    listed = CliRunner().invoke(cli.main, ["findings", "list", "--results",
                                           str(tmp_path / "results")])
    assert "5 of 8 cells kept as cached cells" in listed.output, listed.output
    assert "(estimate) for the rest" in listed.output
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.usecases.findings.docs_dir", lambda: docs)
    result = CliRunner().invoke(cli.main, ["findings", "run", "tiny-map", "-j", "2",
                                           "--no-added-seeds", "--results",
                                           str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    assert f"--cached {tmp_path / 'ref'}" in result.output
    sweep_said = capfd.readouterr().err   # the sweep's own lines (a subprocess)
    assert "5 cells from the cached cells" in sweep_said and "3 cells run" in sweep_said
    assert checking.check_sweep(kept.kept_sweep("tiny")).status == checking.CURRENT
    assert load_sweep(registry / "tiny").deltas_mean.equals(
        load_sweep(local_sweep.out).deltas_mean)


def test_no_added_seeds_caps_seeds_only_where_a_grid_has_a_seed_axis(tmp_path):
    from harness.usecases.findings import sweep_command

    standard = sweep_command(kept.kept_sweep("standard"), tmp_path / "s", 2, True)
    assert standard[standard.index("--max-seeds") + 1] == "1" and "--budget" not in standard
    grid = tmp_path / "grids" / "no-seeds.toml"
    grid.parent.mkdir()
    grid.write_text('name = "no-seeds"\nscenario = "default"\n[axes]\n"background.load" = [0.1]\n')
    sweep = kept.KeptSweep(key="no-seeds", grid=str(grid), budget="1h")
    command = sweep_command(sweep, tmp_path / "n", 2, True)
    assert "--max-seeds" not in command and "--budget" not in command
    # seeds but no reference arm (points with arms of their own, as
    # seed-claims): none are added, and --max-seeds would be refused
    claims = sweep_command(kept.kept_sweep("seed-claims"), tmp_path / "c", 2, True)
    assert "--max-seeds" not in claims


def test_claims_are_judged_by_their_whole_interval(registry):
    """A paper's claim agrees only where the whole interval is on its side;
    a phase picks the n-th phase's row of the claims table."""
    import pandas as pd

    from harness.analysis import claims

    nan = float("nan")
    table = pd.DataFrame([
        {"label": "x", "arm": "a", "baseline": "b", "start_s": nan, "end_s": nan},
        {"label": "x", "arm": "a", "baseline": "b", "start_s": 1.5, "end_s": 2.5},
        {"label": "x", "arm": "a", "baseline": "b", "start_s": 0.5, "end_s": 1.5},
    ])
    assert claims.comparison_row(table, "x", "a", "b", phase=2)["start_s"] == 1.5
    assert claims.comparison_row(table, "x", "a", "b")["start_s"] is None   # the whole window
    assert claims.comparison_row(table, "y", "a", "b") is None
    assert claims.agrees("faster", -0.3, -0.1) == "yes"
    assert claims.agrees("faster", -0.3, 0.1) == "undecided"
    assert claims.agrees("faster", 0.1, 0.3) == "no: the opposite"
    assert claims.agrees("slower", 0.1, 0.3) == "yes"


@pytest.mark.parametrize("spec, words", [
    ('tables = ["nope"]', "sweeps.tiny.tables: unknown tables ['nope']; allowed: claims"),
    ('claims = [{ system = "S", claim = "c", sweep = "tiny", label = "x", arm = "a", '
     'baseline = "b" }]', "keeps no claims table"),
    ('claims = [{ system = "S", claim = "c", sweep = "tiny", label = "x", arm = "a", '
     'baseline = "b", side = "up" }]', "side: 'up'; allowed: faster, slower"),
])
def test_bad_claims_and_tables_are_named(registry, spec, words):
    text = (registry / "findings.toml").read_text()
    if spec.startswith("tables"):
        text = text.replace('grid = "tiny"\n', f'grid = "tiny"\n{spec}\n')
    else:
        text = text.replace('sweeps = ["tiny"]\n', f'sweeps = ["tiny"]\n{spec}\n')
    (registry / "findings.toml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(words)):
        kept.load_registry()


def test_cached_and_its_old_name_reference_mean_the_same(registry):
    """findings.toml's `cached` (the cached cells a sweep takes) is still
    read under its old name `reference`; both at once is refused."""
    text = (registry / "findings.toml").read_text()
    for key in ("cached", "reference"):
        (registry / "findings.toml").write_text(
            text.replace('grid = "tiny"\n', f'grid = "tiny"\n{key} = "validate"\n', 1))
        assert kept.kept_sweep("tiny").cached == "validate"
    (registry / "findings.toml").write_text(
        text.replace('grid = "tiny"\n', 'grid = "tiny"\ncached = "a"\nreference = "b"\n', 1))
    with pytest.raises(ConfigError, match="both cached and reference"):
        kept.load_registry()


@pytest.mark.slow
def test_a_boundary_search_is_kept_checked_and_drawn(registry, tmp_path, monkeypatch):
    """A real search (2-3 probes) run by `findings run` as `harness boundary`,
    kept with its boundary and probes tables, current against today's code,
    its crossings generated into a page and drawn over its kept map."""
    from harness.analysis.tables import read_table
    from harness.findings import boundary_pages, figures
    from harness.traffic import profiles
    from tests.test_boundary import REAL_SEARCH

    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), tmp_path / "m1.csv")
    (registry / "grids" / "search.toml").write_text(
        REAL_SEARCH.format(model=tmp_path / "m1.csv"))
    with (registry / "findings.toml").open("a") as f:
        f.write('\n[sweeps.search]\ngrid = "search"\n\n'
                '[findings.edge]\ntitle = "An edge"\npage = "findings/edge.md"\n'
                'sweeps = ["search"]\nfigures = [{ file = "edge.png", sweep = "search", '
                'kind = "boundary", over = "tiny" }]\n')
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr("harness.usecases.findings.docs_dir", lambda: docs)
    result = CliRunner().invoke(cli.main, ["findings", "run", "edge", "-j", "2",
                                           "--results", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    assert "harness.cli boundary" in result.output and "kept search" in result.output
    state = checking.check_sweep(kept.kept_sweep("search"))
    assert state.status == checking.CURRENT, state.reasons
    table = read_table(registry / "search" / "boundary.parquet")
    probes = read_table(registry / "search" / "probes.parquet")
    assert len(table) == 1 and table["probes"].iloc[0] == len(probes) >= 2
    page = boundary_pages.finding_boundary("search")
    header, rule, row = page.splitlines()
    assert header.startswith("| R | threshold | status |")
    assert f"| 1 % | {table['status'].iloc[0]} |" in row
    # an open bracket reads as one end, a closed one as both
    start = {"below range": "< ", "above range": "> ", "bracketed": "["}.get(
        table["status"].iloc[0])
    assert start is None or row.split(" | ")[4].startswith(start), row
    assert figures.png_metadata(docs / "edge.png")["preset"] == "search"  # its grid
    # the figure's `over` must name a kept sweep of the registry
    with (registry / "findings.toml").open("a") as f:
        f.write('\n[findings.bad]\ntitle = "x"\npage = "findings/x.md"\nsweeps = ["search"]\n'
                'figures = [{ file = "x.png", sweep = "search", kind = "boundary", '
                'over = "nope" }]\n')
    with pytest.raises(ConfigError, match=r"findings.bad.figures\[0\].over: unknown sweep 'nope'"):
        kept.load_registry()


def test_the_scale_check_is_generated_beside_its_reference(registry):
    """finding-scale-check: each scale-down's change beside the reference
    scale's interval, and whether it lies inside (pure: a kept table)."""
    import pandas as pd

    from harness.analysis import stats
    from harness.findings import change_tables

    rows = [{"training.ratio": 2, "scale": scale, "arm": "low", "metric": "iteration_time",
             "change": change, "change_low": change - 0.05, "change_high": change + 0.05}
            for scale, change in ((1, 0.10), (2, 0.12), (10, -0.02))]
    check = stats.compare_scales(pd.DataFrame(rows), ["training.ratio", "scale"])
    (registry / "tiny").mkdir()
    check.to_parquet(registry / "tiny" / "scale_check.parquet")
    text = change_tables.finding_scale_check("tiny")
    header, rule, row, _, tally2, tally10 = text.splitlines()
    assert tally2 == "- Scale 2: training inside the reference's interval in 1 of 1, with its sign in 1."
    assert tally10 == "- Scale 10: training inside the reference's interval in 0 of 1, with its sign in 0."
    assert header == ("| R | arm | metric | scale 1 (reference) | scale 2 | scale 10 | "
                      "inside / same sign |")
    assert row == ("| 2 | `low` | training's iteration time | +10.0 [+5.0, +15.0] | "
                   "+12.0 [+7.0, +17.0] | -2.0 [-7.0, +3.0] | 2: yes / yes, 10: no / no |")
    (registry / "tiny" / "scale_check.parquet").unlink()
    assert "no kept scale check for `tiny`" in change_tables.finding_scale_check("tiny")


def _faceted(monkeypatch):
    """A kept sweep of two labelled points (the sensitivity grid's shape: each
    label sets fields the other leaves empty) over R x lambda, as the page
    generators read it: no simulation, the generators' logic only."""
    import pandas as pd
    from types import SimpleNamespace

    cells, rows = [], []
    labels = {"small-buffer": {"network.band_limit_packets": 10},
              "drr": {"network.qdisc": "drr"}}
    for label, fields in labels.items():
        for ratio in (16, 2):
            for rate in (23, 184):
                point = {"label": label, **fields, "training.ratio": ratio,
                         "background.rate": rate, "seed": 1}
                cells += [{"id": f"{label}{ratio}{rate}{arm}", "arm": arm, "point": point}
                          for arm in ("same", "low")]
                # drr: decided green everywhere; small-buffer: red where R = 2, lambda = 184
                red = label == "small-buffer" and ratio == 2 and rate == 184
                change = 0.5 if red else 0.001
                rows.append({"label": label, **fields, "training.ratio": ratio,
                             "background.rate": rate, "arm": "low",
                             "metric": "iteration_time", "change": change,
                             "change_low": change - (0.1 if red else 0.002),
                             "change_high": change + (0.1 if red else 0.002),
                             "verdict": "red" if red else "green", "decided": True,
                             "seeds": 1})
    grid = {"axes": ["label", "network.band_limit_packets", "network.qdisc",
                     "training.ratio", "background.rate", "seed"],
            "arms": ["same", "low"], "reference": "same", "cells": cells}
    loaded = SimpleNamespace(grid=grid, deltas_mean=pd.DataFrame(rows))
    monkeypatch.setattr(kept, "load_kept", lambda key: (None, loaded))


def test_a_grid_of_labelled_points_is_summarised_per_label(monkeypatch):
    from harness.findings import map_pages

    _faceted(monkeypatch)
    words = map_pages.finding_summary("x")
    # once per label, in the grid's order (not sorted), each with its own verdicts
    first, second = words.index("Under label `small-buffer`"), words.index("Under label `drr`")
    assert first < second
    assert ("4 of 4 verdicts decided: green at R = 16 (lambda 23, 184), R = 2 (lambda 23); "
            "red at R = 2 (lambda 184).") in words[first:second]
    assert "red" not in words[second:]


def test_contrast_names_the_points_where_two_maps_disagree(monkeypatch):
    from harness.findings import contrast_pages as pages

    _faceted(monkeypatch)
    text = pages.finding_contrast("x:label=drr", "x:label=small-buffer", "iteration_time")
    assert "`drr` against `small-buffer`, 4 points" in text
    assert "intervals disjoint at 1 (R = 2 (lambda 184))" in text
    assert "decided verdicts differ at 1 (R = 2 (lambda 184))" in text
    with pytest.raises(KeyError, match="no point of x has label = nope"):
        pages.finding_contrast("x:label=drr", "x:label=nope")
    with pytest.raises(KeyError, match="no field 'nope'"):
        pages.finding_contrast("x:label=drr", "x:nope=1")


def test_a_map_with_a_third_axis_gets_a_column_for_it():
    """The project's kept buffer-models sweep: one row per model and R, the
    models in the grid's order, each cell the kept change of its own model."""
    from harness.findings import map_pages
    from harness.outputs import words

    sweep, loaded = kept.load_kept("buffer-models")
    table = map_pages.finding_map("buffer-models")
    rows = [r for r in table.splitlines() if r.startswith("| `")]
    models = list(dict.fromkeys(c["point"]["network.buffer.model"] for c in loaded.grid["cells"]))
    assert len(rows) == 4 * len(models)
    assert [r.split("|")[1].strip(" `") for r in rows[::4]] == models
    dm = loaded.deltas_mean
    for model, row in zip(models, rows[::4]):   # R = 16, lambda = 23 of each model
        one = dm[(dm["network.buffer.model"] == model) & (dm["training.ratio"] == 16)
                 & (dm["background.rate"] == 23) & (dm["metric"] == "iteration_time")]
        assert words.pct(one["change"].iloc[0]) in row.split("|")[3]


def test_the_costs_table_lists_each_kept_sweep_once(kept_tiny):
    from harness.findings import status_pages

    record = json.loads((kept_tiny / "provenance.json").read_text())
    table = status_pages.findings_costs()
    rows = [r for r in table.splitlines() if r.startswith("| `")]
    assert len(rows) == 1 and rows[0].startswith("| `tiny` | 8 | ")
    assert f"{record['simulation_cpu_s']:,.0f} s" in rows[0] and "ns3 wheel" in rows[0]


def test_tails_against_means_sorts_each_point_by_its_intervals(monkeypatch):
    import pandas as pd
    from types import SimpleNamespace

    from harness.findings import contrast_pages

    def row(rate, metric, change, low, high):
        return {"training.ratio": 2, "background.rate": rate, "arm": "low", "metric": metric,
                "change": change, "change_low": low, "change_high": high}
    nan = float("nan")
    dm = pd.DataFrame([
        row(23, "m", -0.2, -0.3, -0.1), row(23, "t", -0.5, -0.8, -0.2),   # both lower
        row(46, "m", -0.2, -0.3, -0.1), row(46, "t", +0.9, -0.2, +2.0),   # the mean only
        row(92, "m", +0.01, -0.02, 0.04), row(92, "t", -0.1, -0.2, -0.05),   # the tail only
        row(184, "m", -0.2, -0.3, -0.1), row(184, "t", +0.4, nan, nan)])  # no tail interval
    grid = {"axes": ["training.ratio", "background.rate", "seed"], "arms": ["same", "low"],
            "reference": "same"}
    monkeypatch.setattr(kept, "load_kept",
                        lambda key: (None, SimpleNamespace(grid=grid, deltas_mean=dm)))
    text = contrast_pages.finding_tails("x", "m:t")
    assert "4 points): the same verdict at 1 (R = 2 (lambda 23))" in text
    assert "only the mean significant at 1 (R = 2 (lambda 46))" in text
    assert "only the tail at 1 (R = 2 (lambda 92))" in text and "opposite directions at 0" in text
    assert "too few samples for a verdict at 1 (R = 2 (lambda 184))" in text
    assert "The tail's change is the larger at 3 of 3." in text


def test_the_seeds_table_puts_each_seeds_change_beside_the_pooled_one(monkeypatch):
    """finding-seeds: a pooled change carried by one seed shows as such (its
    sign shared by 1 of 3 seeds), a seed missing at a point leaves its column
    empty and is not counted."""
    import pandas as pd
    from types import SimpleNamespace

    from harness.findings import change_tables

    point = {"training.ratio": 8, "arm": "low", "metric": "rpc_p99"}
    dm = pd.DataFrame([{**point, "background.rate": 184, "change": 9.9, "change_low": 5.0,
                        "change_high": 15.0, "seeds": 3},
                       {**point, "background.rate": 46, "change": -0.1, "change_low": -0.2,
                        "change_high": -0.05, "seeds": 2}])
    deltas = pd.DataFrame([{**point, "background.rate": 184, "seed": s, "change": c}
                           for s, c in ((1, -0.1), (2, 55.0), (3, -0.2))]
                          + [{**point, "background.rate": 46, "seed": s, "change": c}
                             for s, c in ((1, -0.1), (3, -0.3))])
    grid = {"axes": ["training.ratio", "background.rate", "seed"], "arms": ["same", "low"],
            "reference": "same"}
    monkeypatch.setattr(kept, "load_kept", lambda key: (
        None, SimpleNamespace(grid=grid, deltas_mean=dm, deltas=deltas)))
    header, rule, light, heavy = change_tables.finding_seeds("x", "rpc_p99").splitlines()
    assert header.endswith("| seed 1 | seed 2 | seed 3 | seeds with its sign |")
    assert heavy.endswith("| -10.0 | +5500.0 | -20.0 | 1 of 3 |"), heavy
    assert light.endswith("| -10.0 |  | -30.0 | 2 of 2 |"), light


@pytest.mark.parametrize("damage", ["cut", "another-table"])
def test_check_reads_every_kept_table_it_vouches_for(kept_tiny, damage):
    """A kept table cut in half, or another table under its name, is stale
    (its file named): `findings draw` would refuse it, so check does."""
    table = kept_tiny / "deltas_mean.parquet"
    if damage == "cut":
        data = table.read_bytes()
        table.write_bytes(data[:len(data) // 2])
    else:
        shutil.copyfile(kept_tiny / "summary.parquet", table)
    state = checking.check_sweep(kept.kept_sweep("tiny"))
    assert state.status == checking.STALE
    assert any("deltas_mean.parquet" in r for r in state.reasons), state.reasons
