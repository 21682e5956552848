"""Asynchronous adaptive seeding (harness.sweeps.sweeping): a point's next seed starts as
soon as its cells have ended, and the sweep ends with the cells and tables the
round-by-round sweep (each round waiting for its slowest cell) gives."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.sweeps import sweeping
from harness.sweeps.aggregate import TIMING_COLUMNS
from harness.sweeps.grid import load_grid


@pytest.fixture(scope="module")
def adaptive_file(grid_file, tmp_path_factory):
    """The tiny grid from one seed, 2 x 2 points, up to 3 seeds each."""
    text = grid_file.read_text().replace("[axes]", "[axes]\nseed = [1]") \
        .replace('"background.load" = [0.05, 0.1]', '"background.load" = [0.1, 0.2]')
    path = tmp_path_factory.mktemp("async") / "adaptive.toml"
    path.write_text(text + "\n[adaptive]\nmax_seeds = 3\n")
    return path


@pytest.fixture(scope="module")
def adaptive_grid(adaptive_file):
    return load_grid(adaptive_file)


def _round_by_round(grid, out, max_seeds: int):
    """The former way, from the public pieces: each round waits for its
    slowest cell, then every undecided point gets one more seed
    (harness.sweeps.adaptive.more_seeds), written to sweep.json as added
    cells, which the resumed sweep runs. The report of the last round, and
    how many rounds ran."""
    from harness.sweeps.adaptive import more_seeds
    from harness.sweeps.grid import expand
    from harness.sweeps.sweepdir import write_cells

    report = sweeping.run_sweep(grid, out, jobs=2, progress=False, max_seeds=0)
    cells, added, rounds = expand(grid), set(), 1
    while "deltas_mean" in report.tables:
        extra = more_seeds(grid, cells, report.tables["deltas_mean"], max_seeds)
        if not extra:
            break
        rounds += 1
        cells += extra
        added |= {c.id for c in extra}
        write_cells(out, grid, cells, added)
        report = sweeping.run_sweep(grid, out, jobs=2, progress=False, resume=True,
                                    max_seeds=0)
    return report, rounds


@pytest.fixture(scope="module")
def both_ways(adaptive_grid, tmp_path_factory):
    d = tmp_path_factory.mktemp("both")
    rounds = _round_by_round(adaptive_grid, d / "rounds", adaptive_grid.max_seeds)
    at_once = sweeping.run_sweep(adaptive_grid, d / "async", jobs=2, progress=False)
    return rounds, at_once


def _cells(out):
    return [(c["id"], c.get("added", False))
            for c in json.loads((out / "sweep.json").read_text())["cells"]]


def test_async_seeding_gives_the_round_by_round_cells_and_tables(both_ways):
    (rounds, n_rounds), at_once = both_ways
    assert n_rounds > 1, "the grid must add seeds for the test to mean anything"
    # the same cells, added ones marked, in the same order (sweep.json, for --resume)
    assert _cells(at_once.out) == _cells(rounds.out)
    assert (at_once.cells, at_once.rounds, at_once.failed) == \
        (rounds.cells, n_rounds, rounds.failed)
    pd.testing.assert_frame_equal(at_once.tables["deltas_mean"], rounds.tables["deltas_mean"])
    pd.testing.assert_frame_equal(at_once.tables["deltas"], rounds.tables["deltas"])
    timing = [c for c in rounds.tables["summary"] if c in TIMING_COLUMNS]
    pd.testing.assert_frame_equal(at_once.tables["summary"].drop(columns=timing),
                                  rounds.tables["summary"].drop(columns=timing))
    # written tables as returned
    pd.testing.assert_frame_equal(pd.read_parquet(at_once.out / "deltas_mean.parquet"),
                                  pd.read_parquet(rounds.out / "deltas_mean.parquet"))


def test_async_sweep_resumes_with_nothing_to_run(both_ways, adaptive_grid):
    _, at_once = both_ways
    again = sweeping.run_sweep(adaptive_grid, at_once.out, jobs=2, progress=False, resume=True)
    assert again.ran == 0 and again.cells == at_once.cells
    pd.testing.assert_frame_equal(again.tables["deltas_mean"], at_once.tables["deltas_mean"])


def test_a_points_next_seed_starts_before_the_others_cells_end(adaptive_grid, tmp_path,
                                                              monkeypatch):
    """No barrier: the executor is handed a point's next seed while cells of
    other points are still to run (run_local receives them from on_done)."""
    from harness.sweeps import executors

    handed: list[tuple[int, int]] = []   # (cells ended so far, cells handed back)
    original = executors.run_local

    def watching(tasks, jobs, on_done, *args, **kwargs):
        ended = [0]

        def watched(outcome):
            ended[0] += 1
            more = list(on_done(outcome) or ())
            if more:
                handed.append((ended[0], len(more)))
            return more

        return original(tasks, jobs, watched, *args, **kwargs)

    monkeypatch.setattr(executors, "run_local", watching)
    report = sweeping.run_sweep(adaptive_grid, tmp_path / "s", jobs=2, progress=False)
    assert sum(n for _, n in handed) == report.cells - 8   # every added cell, one run_local
    assert handed and handed[0][0] < 8, handed   # before the 8 cells of the grid ended


@pytest.mark.slow
def test_dask_worker_processes_give_the_local_executors_tables(both_ways, adaptive_grid,
                                                                tmp_path):
    """A `dask scheduler` and two `dask worker --preload harness.sweeps.executors`
    processes (each with its warm cell server): the adaptive sweep adds the
    same seeds, and its tables and cell files are byte for byte the local
    executor's."""
    from bench.dask_processes import dask_processes

    _, local = both_ways
    with dask_processes(2, tmp_path / "cluster") as address:
        report = sweeping.run_sweep(adaptive_grid, tmp_path / "dask", jobs=2, executor="dask",
                                    scheduler=address, progress=False)
    assert not report.failed
    assert _cells(report.out) == _cells(local.out)
    for name in ("deltas.parquet", "deltas_mean.parquet"):
        assert (report.out / name).read_bytes() == (local.out / name).read_bytes(), name
    for cell in report.tables["summary"]["cell"]:
        for name in ("flows.parquet", "iterations.parquet", "transfers.parquet"):
            assert ((report.out / "cells" / cell / name).read_bytes()
                    == (local.out / "cells" / cell / name).read_bytes()), (cell, name)


def test_a_budget_spent_by_the_grids_cells_adds_no_seed(adaptive_grid, tmp_path, capfd):
    """The grid's own cells always run; a point's next seed only where it fits
    in what is left after the cells running or waiting."""
    report = sweeping.run_sweep(adaptive_grid, tmp_path / "s", jobs=2, progress=False,
                             budget_s=1.0)
    assert (report.cells, report.rounds, report.ran) == (8, 1, 8)
    assert "budget:" in capfd.readouterr().err


def test_ctrl_c_after_a_seed_was_added_then_resume_gives_the_same_tables(both_ways,
                                                                         adaptive_file,
                                                                         tmp_path):
    """SIGINT once sweep.json holds an added seed: the tables of what finished
    are written, the added cells stay in sweep.json (unfinished), and
    --resume ends with the round-by-round sweep's cells and tables."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (rounds, _), _ = both_ways
    out = tmp_path / "out"
    # SIGINT at its default in the sweep: a test run started in the
    # background of a script inherits SIGINT ignored, and so would the sweep
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", str(adaptive_file),
                             "-j", "2", "-o", str(out), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        try:
            if any(c.get("added") for c in json.loads((out / "sweep.json").read_text())["cells"]):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    record = _cells(out)
    assert any(added for _, added in record)
    assert set(record) <= set(_cells(rounds.out))
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(summary) == len(record)
    again = sweeping.run_sweep(load_grid(adaptive_file), out, jobs=2, progress=False, resume=True)
    assert _cells(out) == _cells(rounds.out)
    pd.testing.assert_frame_equal(again.tables["deltas_mean"], rounds.tables["deltas_mean"])
