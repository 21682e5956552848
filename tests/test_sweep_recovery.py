"""Recovery paths of a sweep directory: one sweep at a time (the directory
lock), a finished cell whose table was cut short, a directory left half-made
before its sweep.json. Real sweeps of the tiny grid (conftest)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from harness.io import outdir
from harness.io.lock import LOCK_NAME, DirectoryLock
from harness.sweeps import sweeping
from harness.config.errors import CorruptTableError
from harness.sweeps.grid import load_grid
from harness.analysis.tables import load_run, load_sweep

DEAD_PID = 4_194_305  # above Linux's largest pid: no such process


def harness_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True,
                          text=True, timeout=900)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), \
        proc.stderr
    return lines[0]


@pytest.fixture
def sweep_copy(local_sweep, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(local_sweep.out, out)
    return out


def cut_short(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def test_a_running_sweep_refuses_a_second_one_and_its_resume(sweep_copy, grid_file):
    # the lock as a running sweep holds it (this process is its owner)
    with DirectoryLock(sweep_copy):
        for extra in ((), ("--resume",)):
            proc = harness_cli("sweep", str(grid_file), "-o", str(sweep_copy), "--no-progress",
                               *extra)
            line = one_line_error(proc)
            assert "in use by a running sweep" in line
            assert f"pid {__import__('os').getpid()}" in line
    # released (its process ended): --resume goes on, nothing left to run
    proc = harness_cli("sweep", str(grid_file), "-o", str(sweep_copy), "--no-progress",
                       "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "0 cells run, 8 already done" in proc.stderr


def test_the_lock_of_a_dead_sweep_is_taken_over(sweep_copy, grid_file):
    # a killed sweep leaves its lock file; the kernel dropped its lock
    (sweep_copy / LOCK_NAME).write_text(json.dumps(
        {"pid": DEAD_PID, "host": "gone", "since": 0}))
    proc = harness_cli("sweep", str(grid_file), "-o", str(sweep_copy), "--no-progress",
                       "--resume")
    assert proc.returncode == 0, proc.stderr
    owner = json.loads((sweep_copy / LOCK_NAME).read_text())
    assert owner["pid"] != DEAD_PID


def test_resume_sets_a_corrupt_finished_cell_aside_and_runs_it_again(sweep_copy, grid_file,
                                                                     local_sweep):
    cell = sorted(p.name for p in (sweep_copy / "cells").iterdir())[0]
    flows = sweep_copy / "cells" / cell / "flows.parquet"
    cut_short(flows)
    cut = flows.read_bytes()
    # readers name the file in one line
    with pytest.raises(CorruptTableError) as err:
        load_run(sweep_copy / "cells" / cell)
    assert str(flows) in str(err.value)
    proc = harness_cli("sweep", str(grid_file), "-o", str(sweep_copy), "--no-progress",
                       "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"cell {cell}: flows.parquet cannot be read" in proc.stderr
    assert "1 cells run, 7 already done" in proc.stderr
    # kept, not deleted; the rerun equals the original (same seed, same tables)
    assert (sweep_copy / "corrupt" / cell / "flows.parquet").read_bytes() == cut
    pd.testing.assert_frame_equal(load_run(sweep_copy / "cells" / cell).flows,
                                  load_run(local_sweep.out / "cells" / cell).flows)


def test_a_cut_short_sweep_table_is_one_line_naming_it(sweep_copy, tmp_path):
    cut_short(sweep_copy / "summary.parquet")
    with pytest.raises(CorruptTableError, match="summary.parquet"):
        load_sweep(sweep_copy)
    line = one_line_error(harness_cli("plot", str(sweep_copy), "-o", str(tmp_path / "figs")))
    assert "summary.parquet" in line and "cannot be read" in line
    assert not (tmp_path / "figs").exists()


def test_a_half_made_sweep_directory_is_started_again(grid_file, tmp_path):
    small = tmp_path / "small.toml"
    small.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05]")
                     .replace("[2, 1]", "[2]"))
    out = tmp_path / "half"
    for sub in ("cells", "failed", "logs"):  # what a sweep stopped by a full disk left
        (out / sub).mkdir(parents=True)
    (out / "grid.toml").write_text(small.read_text())
    assert outdir.is_half_made_sweep(out)
    proc = harness_cli("sweep", str(small), "-o", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert len(list((out / "cells").iterdir())) == 2 and (out / "sweep.json").is_file()


def test_a_directory_with_a_user_file_is_not_half_made(tmp_path):
    out = tmp_path / "mine"
    (out / "cells").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    assert not outdir.is_half_made_sweep(out)
    (out / "notes.txt").unlink()
    (out / "cells" / "abc").mkdir()  # a cell: something ran
    assert not outdir.is_half_made_sweep(out)


def test_a_refused_grid_leaves_no_directory(grid_file, tmp_path, monkeypatch):
    out = tmp_path / "new"
    grid = load_grid(grid_file)

    def refuse(*args, **kwargs):
        raise sweeping.SweepError("refused")

    monkeypatch.setattr(sweeping, "prepare_dir", refuse)
    with pytest.raises(sweeping.SweepError):
        sweeping.run_sweep(grid, out, progress=False)
    assert not out.exists()
