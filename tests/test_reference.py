"""Cached cells (harness.sweeps.cell_cache, `harness cache`; reference results
before): a sweep's reference-scale cells kept as compact tables, and a later
sweep that takes them instead of running them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from harness.analysis import stats
from harness.sweeps import cell_cache, sweeping
from harness.sweeps.aggregate import interval_table
from harness.cli import main
from harness.config.errors import ConfigError
from harness.sweeps.grid import expand, load_grid
from harness.sweeps.sweepdir import prepare_dir

SAMPLE = Path(__file__).parent / "data" / "reference-sample"
SAMPLE_GRID = Path(__file__).parent / "data" / "reference-sample.toml"
REMAKE = ("the committed sample was made for other cells (a default or the grid changed): "
          "remake it as tests/data/reference-sample.toml says")


def _scale_check(tables) -> pd.DataFrame:
    check = tables["scale_check"].sort_values(["arm", "metric", "scale"]).reset_index(drop=True)
    return check


def test_sample_stands_in_for_the_reference_cells(tmp_path):
    grid = load_grid(SAMPLE_GRID)
    cells = expand(grid)
    try:
        from_reference = cell_cache.check(SAMPLE, grid, cells)
    except ConfigError as e:
        pytest.fail(f"{REMAKE}: {e}")
    assert {dict(c.point)["scale"] for c in from_reference} == {1}
    report = sweeping.run_sweep(grid, tmp_path / "s", jobs=2, progress=False, cached=SAMPLE)
    scaled = [c for c in cells if dict(c.point)["scale"] != 1]
    assert report.ran == len(scaled) and not report.failed     # only the scaled side ran
    # the comparison's reference side is the sample's own numbers: the
    # changes computed from the sample's cells alone
    ref_only = interval_table(SAMPLE, grid, from_reference)
    check = _scale_check(report.tables).set_index(["arm", "metric"])
    for row in ref_only.itertuples(index=False):
        got = check.loc[(row.arm, row.metric)]
        assert got["reference_change"] == pytest.approx(row.change, nan_ok=True)
        assert got["reference_low"] == pytest.approx(row.change_low, nan_ok=True)
    # and the scaled side is the cells just run
    scaled_dm = report.tables["deltas_mean"]
    scaled_dm = scaled_dm[scaled_dm["scale"] == 2].set_index(["arm", "metric"])
    for (arm, metric), got in check.iterrows():
        assert got["change"] == pytest.approx(scaled_dm.loc[(arm, metric), "change"],
                                              nan_ok=True)


@pytest.mark.slow
def test_round_trip_gives_the_full_sweeps_comparison(tmp_path):
    grid = load_grid(SAMPLE_GRID)
    full = sweeping.run_sweep(grid, tmp_path / "full", jobs=2, progress=False)
    runner = CliRunner()
    made = runner.invoke(main, ["reference", str(tmp_path / "full"), "-o",   # its old name
                                str(tmp_path / "ref")])
    assert made.exit_code == 0, made.output
    index = json.loads((tmp_path / "ref" / cell_cache.INDEX).read_text())
    assert index["scale"] == 1 and len(index["cells"]) == 4
    flows = pd.read_parquet(next((tmp_path / "ref" / "cells").glob("*/flows.parquet")))
    assert list(flows.columns) == list(cell_cache.FLOW_COLUMNS)        # compact
    again = runner.invoke(main, ["sweep", str(SAMPLE_GRID), "-j", "2", "-o",
                                 str(tmp_path / "again"), "--cached", str(tmp_path / "ref"),
                                 "--no-progress"])
    assert again.exit_code == 0, again.output
    assert "4 cells from the cached cells" in again.output
    assert "4 cells run" in again.output
    a = pd.read_parquet(tmp_path / "again" / "scale_check.parquet")
    b = _scale_check(full.tables)
    a = a.sort_values(["arm", "metric", "scale"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_a_reference_for_other_settings_is_refused_before_running(tmp_path):
    changed = tmp_path / "changed.toml"
    changed.write_text(SAMPLE_GRID.read_text().replace('"background.load" = 0.2',
                                                       '"background.load" = 0.3'))
    result = CliRunner().invoke(main, ["sweep", str(changed), "-o", str(tmp_path / "s"),
                                       "--reference", str(SAMPLE)])   # its old name
    assert result.exit_code == 2
    assert "--cached" in result.output and "lacks the reference-scale cell" in result.output
    assert not (tmp_path / "s").exists()
    # a directory that is no cache, and a grid without a scale axis
    for args, words in ((["--cached", str(tmp_path)], "no reference.json"),):
        r = CliRunner().invoke(main, ["sweep", str(SAMPLE_GRID), "-o", str(tmp_path / "t"),
                                      *args])
        assert r.exit_code == 2 and words in r.output
    # a grid without a scale axis takes the cells the reference holds by id
    # (here scale 2 is set: none of them) and refuses one that matches none
    no_scale = tmp_path / "no-scale.toml"
    no_scale.write_text(SAMPLE_GRID.read_text().replace("scale = [1, 2]\n", "")
                        .replace("[set]\n", "[set]\nscale = 2\n"))
    r = CliRunner().invoke(main, ["sweep", str(no_scale), "-o", str(tmp_path / "u"),
                                  "--cached", str(SAMPLE)])
    assert r.exit_code == 2 and "holds none of grid 'reference-sample'" in r.output
    assert not (tmp_path / "u").exists()


def test_a_grid_without_a_scale_axis_takes_the_cells_held_by_id():
    """buffer-corners (10 Gbit/s throughout, per-band and shared buffers)
    shares its shared-buffer cells with validate's kept 10 Gbit/s side: those
    are taken, the per-band ones run."""
    grid = load_grid("buffer-corners")
    cells = expand(grid)
    held = cell_cache.check(cell_cache.resolve("validate"), grid, cells)
    models = {dict(c.point)["network.buffer.model"] for c in held}
    assert held and models == {"shared"}
    assert len(held) == len([c for c in cells
                             if dict(c.point)["network.buffer.model"] == "shared"])


def test_export_refuses_an_unfinished_sweep_and_an_existing_output(tmp_path):
    grid = load_grid(SAMPLE_GRID)
    out = tmp_path / "partial"
    prepare_dir(out, grid, expand(grid), resume=False)
    with pytest.raises(ConfigError, match="not finished"):
        cell_cache.export(out, tmp_path / "ref")
    shutil.copytree(SAMPLE, tmp_path / "exists")
    with pytest.raises(ConfigError, match="never overwritten"):
        cell_cache.export(out, tmp_path / "exists")
    # through a link to an existing directory: still refused, nothing written
    (tmp_path / "link").symlink_to(tmp_path / "exists")
    with pytest.raises(ConfigError, match="never overwritten"):
        cell_cache.export(out, tmp_path / "link")
    # a name the writer's temporary name cannot fit: refused before anything is read
    with pytest.raises(ConfigError, match="-o") as e:
        cell_cache.export(out, tmp_path / ("r" * 250))
    assert "bytes" in str(e.value)
    assert stats.SCALE_FIELD == "scale"


def test_the_kept_validate_reference_matches_the_validate_grid():
    """The 10 Gbit/s side of `validate` kept in the repository stands in for
    every scale-1 cell of the preset: a change of a default, or of the grid,
    that renames those cells fails here, not in a user's six-hour sweep."""
    assert "validate" in cell_cache.builtin()
    kept = cell_cache.resolve("validate")
    grid = load_grid("validate")
    cells = expand(grid)
    try:
        wanted = cell_cache.check(kept, grid, cells)
    except ConfigError as e:
        pytest.fail(f"the kept reference no longer matches the validate grid: {e}; "
                    "remake it as workloads/reference/validate/README.md says")
    assert len(wanted) == len([c for c in cells if dict(c.point)["scale"] == 1]) > 0
    index = json.loads((kept / cell_cache.INDEX).read_text())
    assert set(index["cells"]) == {c.id for c in wanted}       # nothing else kept
    for cell in wanted:
        flows = pd.read_parquet(kept / "cells" / cell.id / "flows.parquet")
        assert list(flows.columns) == list(cell_cache.FLOW_COLUMNS)
        assert flows.loc[flows["measured"], "completed"].all()   # every measured flow ended


def test_a_reference_by_name_or_path_and_an_unknown_name():
    assert cell_cache.resolve("validate") == cell_cache.REFERENCE_DIR / "validate"
    assert cell_cache.resolve(SAMPLE) == SAMPLE
    with pytest.raises(ConfigError, match="--cached") as e:
        cell_cache.resolve("no-such-reference")
    assert "built-in: validate" in str(e.value)
    listed = CliRunner().invoke(main, ["list"])
    assert listed.exit_code == 0 and "cached cells" in listed.output
    assert "validate" in listed.output.split("cached cells", 1)[1].split("\n\n")[0]


def test_each_sweep_kept_in_parts_still_matches_its_grid():
    """Reference results made from a findings sweep's own unfinished run (a
    sweep kept in parts, its index's grid the sweep's): every cell it holds is
    a cell of today's grid, so a change of a default that would orphan the
    kept part (and rerun it all) fails here first."""
    from harness.findings import registry as kept

    sweeps = {s.key: s for f in kept.load_registry().values() for s in f.sweeps}
    for sweep in sweeps.values():
        if not sweep.cached:
            continue
        index = json.loads((cell_cache.resolve(sweep.cached) / cell_cache.INDEX).read_text())
        grid = load_grid(sweep.grid_path())
        if index["grid"] != grid.name:
            continue   # another grid's cells, taken where they are the same (buffer-corners)
        ids = {c.id for c in expand(grid)}
        orphaned = sorted(set(index["cells"]) - ids)
        assert not orphaned, (f"{sweep.cached} holds {len(orphaned)} cells that are no "
                              f"longer cells of {grid.name}, e.g. {orphaned[0]}: a setting "
                              "or default changed since they were kept; rerun them")


def test_cache_is_the_command_and_reference_its_hidden_old_name(tmp_path):
    """`harness cache` keeps cached cells; `harness reference`, its old name,
    is the same command, out of --help, its help saying so."""
    import click

    from harness import cli_results

    assert cli_results.reference.callback is cli_results.cache.callback
    assert cli_results.reference.params == cli_results.cache.params
    old = main.get_command(click.Context(main), "reference")
    assert old is cli_results.reference and old.hidden
    assert "The old name of `harness cache`" in old.help
    assert "reference " not in CliRunner().invoke(main, ["--help"]).output.split("Commands:")[1]
    # each refuses what is no sweep directory alike, naming SWEEP
    for command in (cli_results.cache, cli_results.reference):
        r = CliRunner().invoke(command, [str(tmp_path), "-o", str(tmp_path / "c")])
        assert r.exit_code == 2 and "SWEEP" in r.output and "no sweep.json" in r.output


@pytest.mark.parametrize("damage", ["folder", "table"])
def test_a_cache_whose_index_lists_a_missing_cell_is_refused_before_the_sweep(tmp_path,
                                                                             damage):
    """reference.json lists a cell whose folder (or its flow table) is gone:
    one line naming the cell and what is missing, before any sweep
    directory is made (it crashed after making it)."""
    cache = tmp_path / "cache"
    shutil.copytree(SAMPLE, cache)
    cell = sorted((cache / "cells").iterdir())[0]
    if damage == "folder":
        shutil.rmtree(cell)
    else:
        (cell / "flows.parquet").unlink()
    r = CliRunner().invoke(main, ["sweep", str(SAMPLE_GRID), "-j", "1", "-o",
                                  str(tmp_path / "out"), "--cached", str(cache),
                                  "--no-progress"])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--cached" in lines[0] and cell.name in lines[0], r.stderr
    assert ("has no folder" if damage == "folder" else "lacks flows.parquet") in lines[0]
    assert not (tmp_path / "out").exists()
