"""The sweep directory and the state of its cells.

It holds the grid file (grid.toml), sweep.json (the cells), cells/<id>/
(complete run directories, each renamed into place), failed/<id>.json,
corrupt/ (finished cells whose tables could not be read, set aside), logs/,
and the tables summary.parquet, deltas.parquet and deltas_mean.parquet
(harness.sweeps.aggregate). One sweep at a time writes it (locked).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from harness.analysis.tables import read_record, read_sweep_record
from harness.engine import engines
from harness.io import outdir
from harness.io.lock import LOCK_NAME, DirectoryLock, release_output
from harness.sweeps.cells import Cell
from harness.sweeps.grid import Grid, make_cell


class SweepError(RuntimeError):
    """A sweep directory that cannot be (re)used as asked."""


def default_dir(grid: Grid) -> Path:
    """results/sweeps/<name> under $DDNN_HARNESS_RESULTS or the current directory."""
    return outdir.default_sweep_dir(grid.name)


write_atomic = outdir.write_file  # every file of the sweep directory: temporary name, rename


def _cells_record(grid: Grid, cells: list[Cell], added: set[str]) -> dict:
    arms = [a for a, _ in grid.arms]
    for own in grid.point_arms:
        arms += [a for a, _ in own[0] if a not in arms] if own is not None else []
    return {"grid": grid.name, "grid_file": str(grid.path),
            # every cell runs on this one engine (--resume on another is refused)
            "engine": engines.find_engine().describe(),
            "axes": grid.axis_fields, "arms": arms,
            "reference": grid.reference,
            "cells": [{"id": c.id, "arm": c.arm, "point": dict(c.point),
                       **({"reference": c.reference} if grid.per_point_arms else {}),
                       **({"added": True} if c.id in added else {})} for c in cells]}


def check_dir(out: Path, grid: Grid, cells: list[Cell], resume: bool) -> list[Cell]:
    """SweepError unless `out` is new or empty, or holds this grid's sweep and
    `resume` is set (same cells, by resolved-config digest). Returns the seeds
    an adaptive sweep added there before (from sweep.json), as cells."""
    stored = out / "sweep.json"
    if stored.exists():
        if not resume:
            raise SweepError(f"{out} already holds a sweep: --resume to continue it, or "
                             "-o another directory")
        record = read_sweep_record(out)   # damaged: CorruptRecordError, one line
        old = record["cells"]
        _check_engine(out, record.get("engine"))
        old_ids = {c["id"] for c in old}
        new_ids = {c.id for c in cells}
        added = [make_cell(grid, tuple(c["point"].items()), c["arm"])
                 for c in old if c["id"] not in new_ids and c.get("added")]
        if old_ids != new_ids | {c.id for c in added}:
            raise SweepError(
                f"the grid changed since {out} was started: {len(new_ids - old_ids)} new and "
                f"{len(old_ids - new_ids)} missing cells (by resolved-config digest); "
                "start it in a new directory")
        return added
    if outdir.is_half_made_sweep(out):  # stopped before sweep.json: nothing ran
        outdir.clear_half_made_sweep(out)
    elif out.exists() and any(e.name != LOCK_NAME for e in out.iterdir()):
        raise SweepError(f"{out} exists and is not a sweep directory")
    return []


def _check_engine(out: Path, recorded: dict | None) -> None:
    """A sweep's cells all run on one engine: --resume on another is refused."""
    engine = engines.find_engine()
    if not engines.same(recorded, engine):
        was = recorded or {"kind": "wheel"}
        ran = " ".join(str(was[k]) for k in ("kind", "version", "profile", "path") if k in was)
        raise SweepError(f"{out} ran on the ns-3 engine {ran}, and this process runs on "
                         f"{engine.label()}: a sweep's cells all run on one engine; resume it "
                         f"with that engine ({engines.BUILD_ENV}), or start a new directory")


def prepare_dir(out: Path, grid: Grid, cells: list[Cell], resume: bool) -> list[Cell]:
    """Create a new sweep directory, or check that `--resume` continues the
    same grid (check_dir), and clear what killed writers left behind. Returns
    the cells, with the seeds an adaptive sweep added before."""
    stored = out / "sweep.json"
    cells = cells + check_dir(out, grid, cells, resume)
    if not stored.exists():  # first, so that a sweep stopped from here on is resumable
        write_atomic(out / "grid.toml", grid.text)
        write_cells(out, grid, cells, set())
    for sub in ("cells", "failed", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    # what writers killed mid-write left: cell directories, replaced cell
    # directories, failure records, tables
    for directory in (out, out / "cells", out / "failed"):
        outdir.remove_leftovers(directory)
    return cells


def write_cells(out: Path, grid: Grid, cells: list[Cell], added: set[str]) -> None:
    """sweep.json: the grid's cells; `added`: ids of seeds an adaptive sweep added."""
    record = _cells_record(grid, cells, added)
    write_atomic(out / "sweep.json", json.dumps(record, indent=2, default=str) + "\n")


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / "cells" / cell.id


def is_done(out: Path, cell: Cell) -> bool:
    return (cell_dir(out, cell) / "summary.json").is_file()


def is_failed(out: Path, cell: Cell) -> bool:
    return (out / "failed" / f"{cell.id}.json").is_file()


def record_failure(out: Path, cell: Cell, error: str, detail: str | None = None) -> None:
    """failed/<id>.json: the error's own message (one line, what the summary
    shows) and, if any, the detail behind it (a traceback, ns-3's last output)."""
    record = {**cell.labels(), "error": error}
    if detail:
        record["detail"] = detail
    write_atomic(out / "failed" / f"{cell.id}.json",
                 json.dumps(record, indent=2, default=str) + "\n")


def clear_failure(out: Path, cell: Cell) -> None:
    (out / "failed" / f"{cell.id}.json").unlink(missing_ok=True)


def output_bytes_left(out: Path, cells: list[Cell]) -> int:
    """A rough size of what the sweep still writes into `out`: the run
    directories of its valid cells not done yet (Cell.output_bytes) and its
    tables, for the free-space check made before any cell runs
    (harness.io.outdir.check_space)."""
    todo = [c for c in cells if c.scenario is not None and not is_done(out, c)]
    return sum(c.output_bytes for c in todo) + 256 * 1024 + 4096 * len(cells)


@contextlib.contextmanager
def locked(out: Path):
    """Hold `out`'s lock (harness.io.lock.DirectoryLock) while the sweep writes it: a
    second sweep or --resume on a running sweep is refused at once. A
    directory this call had to create is removed again if nothing was
    written in it (a refused grid leaves no trace)."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        lock = DirectoryLock(out).acquire()
    except BaseException:
        if created and not any(out.iterdir()):
            out.rmdir()
        raise
    try:
        yield
    except BaseException:
        if created and {e.name for e in out.iterdir()} <= {LOCK_NAME}:
            (out / LOCK_NAME).unlink(missing_ok=True)
            out.rmdir()
        raise
    finally:
        lock.release()
        release_output(out)   # the output's lock its checks took (harness.io.lock.OutputLock)


def _readable(out: Path, cell: Cell) -> str | None:
    """None if every table of a finished cell opens; else why one does not
    (a disk that filled up, or a copy cut short, after the cell finished)."""
    import pyarrow.parquet as pq

    from harness.config.errors import CorruptRecordError

    for record in sorted(cell_dir(out, cell).glob("*.json")):   # summary, manifest, ...
        try:
            read_record(record)
        except CorruptRecordError as e:
            return f"{record.name} {str(e).split(': ', 1)[1].split(';')[0]}"
    for table in sorted(cell_dir(out, cell).glob("*.parquet")):
        try:
            pq.read_metadata(table)  # the footer: what a cut-short file lacks
        except (OSError, ValueError) as e:
            return f"{table.name} cannot be read ({' '.join(str(e).split())[:120]})"
    return None


def _set_aside(out: Path, cell: Cell, why: str) -> None:
    """Move a corrupt finished cell to corrupt/<id>-<n> (kept, not deleted), so
    that it runs again, and say so."""
    aside = out / "corrupt" / cell.id
    n = 1
    while aside.exists():
        n += 1
        aside = out / "corrupt" / f"{cell.id}-{n}"
    aside.parent.mkdir(exist_ok=True)
    os.replace(cell_dir(out, cell), aside)
    print(f"sweep: cell {cell.id}: {why}; moved to {aside.relative_to(out)} and run again",
          file=sys.stderr, flush=True)


def cell_state(out: Path, cell: Cell, retry_failed: bool) -> str:
    """done, invalid (recorded failed without running), failed-before (not
    retried) or run; a finished cell's old failure record is cleared, and a
    finished cell whose tables cannot be read is set aside and runs again."""
    if is_done(out, cell):
        why = _readable(out, cell)
        if why is None:
            clear_failure(out, cell)
            return "done"
        _set_aside(out, cell, why)
    if cell.scenario is None:
        record_failure(out, cell, cell.error)   # invalid scenario: fails without running
        return "invalid"
    if is_failed(out, cell) and not retry_failed:
        return "failed-before"
    return "run"
