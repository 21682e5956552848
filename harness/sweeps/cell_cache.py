"""Cached cells: a sweep's costly cells kept as compact tables, so that a
later sweep of the same grid runs only its other cells and is compared
against them. (Called "reference results" before: `harness reference` and
`--reference` are the old names of `harness cache` and `--cached`.)

The use: `validate` runs each point at scale 1 (10 Gbit/s, CPU-hours) and at
scale 10 (minutes). `harness cache SWEEP -o DIR` keeps the scale-1 cells
of a finished sweep in DIR (per cell its summary, config and manifest, the
iterations and the flow columns the paired intervals need); `harness sweep
validate --cached DIR` puts them into the new sweep directory as finished
cells and runs only the scaled ones, so scale_check.parquet compares a new
scale-down against the same 10 Gbit/s results.

A cached cell is matched by its cell id, the digest of its resolved
scenario: cached cells made for other settings (another window, another
buffer model, a change of a default) are refused by name, before anything
runs, instead of being compared with the wrong thing. A grid without a scale
axis (e.g. buffer-corners, at 10 Gbit/s throughout) takes those of its cells
the cache holds, by id, and runs the rest.

The same keeps a long sweep in parts: `harness cache` of a grid without a
scale axis keeps whichever of its cells are finished, so a sweep that takes
longer than one sitting (or one machine) goes on from the kept cells with
`--cached` (docs/user-guide/sweeps.md, "A sweep in parts").
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
from pathlib import Path

from harness.analysis import stats
from harness.io import outdir
from harness.sweeps.cells import Cell
from harness.config.errors import ConfigError, CorruptRecordError
from harness.sweeps.grid import Grid, expand, load_grid
from harness.config.paths import REFERENCE_DIR
from harness.sweeps.sweepdir import SweepError, cell_dir, check_dir, is_done
from harness.analysis.tables import read_record, read_sweep_record, read_table

#: the cache's index of its cells (the old name, kept: export's docstring says why)
INDEX = "reference.json"
#: what the sweep's aggregation reads of a cell, whole
CELL_FILES = ("summary.json", "config.json", "manifest.json", "iterations.parquet")
#: of flows.parquet, the columns the paired FCT intervals need
FLOW_COLUMNS = ("id", "size", "size_class", "start_s", "fct_s", "completed", "measured")
#: the services' tables, whole where a cell has them: the paired service
#: intervals match requests and stream packets on what was planned, measured or not
SERVICE_TABLES = ("services.parquet", "streams.parquet")


def builtin() -> list[str]:
    """The names of the cached cells kept in the repository (workloads/reference/)."""
    return sorted(p.parent.name for p in REFERENCE_DIR.glob(f"*/{INDEX}"))


def resolve(name: str | Path) -> Path:
    """Cached cells by path, or by the name of a cache kept in the
    repository (e.g. "validate"); a ConfigError naming --cached otherwise."""
    path = Path(name)
    if (path / INDEX).is_file():
        return path
    if (REFERENCE_DIR / str(name) / INDEX).is_file():
        return REFERENCE_DIR / str(name)
    known = ", ".join(builtin()) or "none"
    raise ConfigError("--cached", f"{name} holds no cached cells (no {INDEX}; make "
                      f"them with harness cache SWEEP -o DIR); built-in: {known}")


def read_index(directory: Path) -> dict:
    """Cached cells' index, reference.json (harness.analysis.tables.read_record:
    a damaged one is one error naming it), each cell's labels an object."""
    path = Path(directory) / INDEX
    what = "the cache's index of its cells"
    index = read_record(path, {"grid": str, "scale": int, "cells": dict}, what)
    if not all(isinstance(labels, dict) for labels in index["cells"].values()):
        raise CorruptRecordError(str(path), f"its 'cells' are not each an object; it is "
                                 f"{what}: restore it, or make it again (harness cache)")
    return index


def reference_scale(grid: Grid) -> int:
    """The grid's reference fidelity: its smallest scale (stats.compare_scales),
    whose cells a cache holds."""
    axes = dict(grid.axes)
    if stats.SCALE_FIELD not in axes:
        raise ConfigError("--cached", f"grid {grid.name!r} has no {stats.SCALE_FIELD!r} "
                          "axis: cached cells stand in for the cells of its smallest "
                          "scale")
    return min(axes[stats.SCALE_FIELD])


def reference_cells(grid: Grid, cells: list[Cell]) -> list[Cell]:
    """The cells a cache holds: those at the grid's smallest scale."""
    scale = reference_scale(grid)
    return [c for c in cells if dict(c.point).get(stats.SCALE_FIELD) == scale]


def _cells_scale(cells: list[Cell]) -> int:
    """A grid without a scale axis: its cells' smallest scale (as reference_scale's)."""
    return min(c.scenario.scale for c in cells)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # an installed wheel: no repository
        return f"ddnn-harness {importlib.metadata.version('ddnn-harness')} (no git checkout)"


def export(sweep_dir: Path, out: Path) -> int:
    """Write the reference-scale cells of a finished sweep to `out` (a new
    directory) as cached cells; returns the number of cells. Every such cell
    must be done. A grid without a scale axis: its finished cells, at least
    one (a sweep kept in parts); reference.json counts the grid's cells
    beside them.

    The index keeps its old name, reference.json (from when cached cells
    were called reference results): the caches kept in the repository
    (workloads/reference/, which findings.toml's `cached` names) and those
    users have made are found by it, and renaming it would orphan them."""
    record_path = sweep_dir / "sweep.json"
    if not record_path.is_file():
        raise ConfigError("SWEEP", f"{sweep_dir} is not a sweep directory (no sweep.json)")
    out = outdir.check_new_dir(out, "-o", "a cache of cells")
    read_sweep_record(sweep_dir)   # a damaged sweep.json: named as such, first
    grid = load_grid(sweep_dir / "grid.toml")   # the grid as the sweep ran it
    if grid.search is not None:
        raise ConfigError("SWEEP", f"{sweep_dir} holds a boundary search (harness boundary), "
                          "whose probes are not a grid's cells; cached cells are kept "
                          "from a sweep (harness sweep) with a scale axis")
    base = expand(grid)
    try:
        cells = base + check_dir(sweep_dir, grid, base, resume=True)   # + seeds it added
    except SweepError as e:   # its grid.toml and sweep.json disagree
        raise ConfigError("SWEEP", str(e)) from None
    if stats.SCALE_FIELD in dict(grid.axes):
        wanted, scale = reference_cells(grid, cells), reference_scale(grid)
        of = len(wanted)
        missing = [c for c in wanted if not is_done(sweep_dir, c)]
        if missing:
            raise ConfigError("SWEEP", f"{len(missing)} of its {len(wanted)} reference-scale "
                              f"cells (scale {scale}) are not finished, e.g. "
                              f"{missing[0].id} ({_labels(missing[0])}): finish them "
                              "(harness sweep --resume) first")
    else:   # no scale axis: whatever is finished, kept to go on from
        runnable = [c for c in cells if c.scenario is not None]
        wanted, of = [c for c in runnable if is_done(sweep_dir, c)], len(runnable)
        if not wanted:
            raise ConfigError("SWEEP", f"none of its {len(runnable)} cells is finished: "
                              "run some first (harness sweep --resume)")
        scale = _cells_scale(wanted)
    # at most the cells' files and flow tables as they are (the copy keeps fewer columns)
    outdir.check_space(out, sum(f.stat().st_size for c in wanted
                                for f in cell_dir(sweep_dir, c).iterdir() if f.is_file()),
                       "-o", "the cached cells")
    index = {"grid": grid.name, "scale": scale, "commit": _commit(),
             "of": of, "cells": {c.id: c.labels() for c in wanted}}

    def fill(tmp: Path) -> None:
        for cell in wanted:
            src, dst = cell_dir(sweep_dir, cell), tmp / "cells" / cell.id
            dst.mkdir(parents=True)
            for name in CELL_FILES:
                if (src / name).is_file():
                    shutil.copy2(src / name, dst / name)
            flows = read_table(src / "flows.parquet")
            # the intervals pair measured flows only (harness.analysis.stats): the
            # others (warm-up, cool-down) are most of a long cell's table
            kept = flows[flows["measured"]] if "measured" in flows else flows
            kept[[c for c in FLOW_COLUMNS if c in flows]].to_parquet(
                dst / "flows.parquet", index=False, compression="zstd")
            for name in SERVICE_TABLES:
                if (src / name).is_file():
                    read_table(src / name).to_parquet(dst / name, index=False,
                                                      compression="zstd")
        (tmp / INDEX).write_text(json.dumps(index, indent=2, default=str) + "\n")
        shutil.copy2(sweep_dir / "grid.toml", tmp / "grid.toml")

    outdir.write_dir(out, fill)
    return len(wanted)


def _point(labels: dict) -> dict:
    """A cell's labels without its id and reference arm: its point and arm."""
    return {k: v for k, v in labels.items() if k not in ("cell", "reference")}


def _labels(cell: Cell) -> str:
    return ", ".join(f"{k}={v}" for k, v in _point(cell.labels()).items())


def check(cached: Path, grid: Grid, cells: list[Cell]) -> list[Cell]:
    """The cells the cache `cached` stands in for, before anything runs. A
    grid with a scale axis: its reference-scale cells, each of which must be
    held (a ConfigError naming the first one it lacks, or holds for another
    scenario). A grid without one: those of its cells the cache holds (a
    cell id is the digest of everything that decides the run), at least one."""
    index = read_index(resolve(cached))
    if stats.SCALE_FIELD not in dict(grid.axes):
        held = [c for c in cells if c.id in index["cells"]]
        if not held:
            raise ConfigError("--cached", f"{cached} holds none of grid {grid.name!r}'s "
                              f"{len(cells)} cells (it was made from {index['grid']!r}): "
                              "their settings differ from the cached cells'")
        return _present(cached, held)
    wanted = reference_cells(grid, cells)
    for cell in wanted:
        if cell.id not in index["cells"]:
            same_labels = [cid for cid, labels in index["cells"].items()
                           if _point(labels) == _point(cell.labels())]
            why = (f"it holds that point for another scenario (cell {same_labels[0]}): the "
                   "grid's settings or a default changed since it was made"
                   if same_labels else "it does not hold that point")
            raise ConfigError("--cached", f"{cached} lacks the reference-scale cell "
                              f"{cell.id} ({_labels(cell)}): {why}")
    return _present(cached, wanted)


#: what a cached cell's folder must hold to stand in for a run (export writes them)
HELD_FILES = ("summary.json", "config.json", "flows.parquet")


def _present(cached: Path, cells: list[Cell]) -> list[Cell]:
    """cells, each of whose folders the cache really has with the files a
    finished cell has (its index may list a folder since removed): a
    ConfigError naming the first that is missing, before any sweep
    directory is made."""
    root = resolve(cached)
    for cell in cells:
        folder = root / "cells" / cell.id
        lacks = [n for n in HELD_FILES if not (folder / n).is_file()]
        if lacks:
            what = (f"has no folder cells/{cell.id}/" if not folder.is_dir() else
                    f"its cells/{cell.id}/ lacks {', '.join(lacks)}")
            raise ConfigError("--cached", f"{cached}'s {INDEX} lists cell {cell.id} "
                              f"({_labels(cell)}) but it {what}: restore the cache, or "
                              "make it again (harness cache SWEEP -o DIR)")
    return cells


def install(cached: Path, out: Path, cells: list[Cell]) -> int:
    """Put the cached cells into sweep directory `out` as finished cells
    (those not there yet), each written whole; returns how many were put."""
    todo = [c for c in cells if not is_done(out, c)]
    for cell in todo:
        src = resolve(cached) / "cells" / cell.id
        outdir.write_dir(cell_dir(out, cell),
                         lambda tmp, src=src: shutil.copytree(src, tmp, dirs_exist_ok=True),
                         existing="keep")
    return len(todo)
