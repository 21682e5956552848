"""The Python API: harness.run / sweep / check / load_run / load_sweep /
load_sweeps, and a cheap `import harness`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import harness


def test_import_harness_loads_neither_pandas_nor_ns3():
    code = ("import sys, harness; heavy = [m for m in ('pandas', 'numpy', 'cppyy', "
            "'harness.engine.simulation', 'harness.sweeps.sweeping', 'matplotlib') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(harness.__file__).parents[1], check=True).stdout
    assert out.strip() == "[]"


def test_run_and_sweep_are_the_api_functions_not_modules():
    import types

    import harness.engine.simulation
    import harness.sweeps.sweeping

    # plain functions, re-exported from harness.api; importing the engine
    # modules (harness.engine.simulation, harness.sweeps.sweeping) binds nothing over them
    assert harness.run is harness.api.run and harness.sweep is harness.api.sweep
    assert isinstance(harness.run, types.FunctionType)
    assert isinstance(harness.sweep, types.FunctionType)
    assert harness.engine.simulation is sys.modules["harness.engine.simulation"]
    assert harness.sweeps.sweeping is sys.modules["harness.sweeps.sweeping"]
    assert "harness.run" not in sys.modules and "harness.sweep" not in sys.modules


def test_check_takes_overrides_as_a_dict_and_as_keywords():
    sc = harness.check("default", {"run.duration": 4, "background.load": 0.3},
                       seed=5, tcp__initial_cwnd=20)
    assert (sc.run.duration, sc.background.load, sc.seed, sc.tcp.initial_cwnd) == (4, 0.3, 5, 20)
    with pytest.raises(harness.ConfigError, match="background.load: must be a finite"):
        harness.check(None, {"background.load": float("nan")})
    with pytest.warns(UserWarning, match="warm-up"):
        assert harness.check(run__duration=0.3).run.warmup == pytest.approx(0.0375)


@pytest.fixture(scope="module")
def api_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("api") / "run"
    with pytest.warns(UserWarning):  # the shortened run's scaled warm-up
        r = harness.run("default", {"run.duration": 0.3, "background.load": 0.1}, seed=3,
                        out=out)
    return r


def test_run_returns_dataframes_and_writes_the_directory(api_run):
    r = api_run
    assert isinstance(r.flows, pd.DataFrame) and len(r.flows) > 0
    assert r.summary["seed"] == 3 and r.config["scenario"]["run"]["duration"] == 0.3
    assert r.iterations is None  # no training job in the default scenario
    loaded = harness.load_run(r.dir)
    for name in ("flows", "queues", "utilization"):
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(r, name))
    assert loaded.summary == r.summary and loaded.manifest["digest"] == r.manifest["digest"]


def test_load_run_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run directory: missing config.json"):
        harness.load_run(tmp_path)


def test_load_sweep_and_its_cells(local_sweep):
    s = harness.load_sweep(local_sweep.out)
    assert len(s.summary) == 8 and s.deltas is not None and s.grid["reference"] == "same"
    cell = s.summary["cell"].iloc[0]
    assert s.cell(cell[:6]).summary["digest"] == cell


def test_sweep_api_resumes_a_finished_sweep_without_running(local_sweep, grid_file, tmp_path,
                                                            monkeypatch):
    from harness.sweeps import executors

    copy = tmp_path / "copy"
    shutil.copytree(local_sweep.out, copy)
    monkeypatch.setattr(executors, "run_local", lambda *a, **k: pytest.fail("ran a cell"))
    s = harness.sweep(grid_file, copy, resume=True)
    assert (s.summary["status"] == "ok").all() and len(s.summary) == 8


def test_load_sweeps_is_one_table_with_a_sweep_column(local_sweep, tmp_path):
    a, b = tmp_path / "sweeps" / "a", tmp_path / "sweeps" / "b"
    shutil.copytree(local_sweep.out, a)
    shutil.copytree(local_sweep.out, b)
    both = harness.load_sweeps([a, b])
    assert both.summary.columns[0] == "sweep"
    assert both.summary["sweep"].value_counts().to_dict() == {"a": 8, "b": 8}
    assert len(both.deltas) == 2 * len(local_sweep.tables["deltas"])
    assert set(both.deltas_mean["sweep"]) == {"a", "b"}
    globbed = harness.load_sweeps(str(tmp_path / "sweeps" / "*"))
    pd.testing.assert_frame_equal(globbed.summary, both.summary)
    # a query across sweeps: mean iteration change of the low arm per sweep
    it = both.deltas[both.deltas["metric"] == "iteration_time"]
    assert it.groupby("sweep")["change"].mean().index.tolist() == ["a", "b"]
