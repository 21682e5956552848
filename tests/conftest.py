"""Shared helpers: small real-ns-3 runs planned from the built-in scenario."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.config.scenario import load_scenario
from harness.engine.simulation import execute
from harness.engine.planning import Plan, plan

# The default scenario is 4 hosts at 1 Gbit/s: ns-3 tests stay in seconds.

REPO = Path(__file__).resolve().parent.parent

# A 10 Gbit/s ToR with 4 hosts, a ring job and heavy web-search background,
# with 50-packet bands: queues overflow, so TCP retransmits and SACKs, and
# re-arms its timers on every acknowledgement. ~5 s per run.
LOSSY = ["thesis", "--set", "topology.hosts=4", "--set", "training.workers=4",
         "--set", "training.profile=resnet50-like-2MB", "--set", "training.model_bytes=2000000",
         "--set", "training.ratio=1", "--set", "background.rate=300",
         "--set", "network.band_limit_packets=50",
         "--set", "run.duration=0.05", "--set", "run.warmup=0.01", "--set", "run.cooldown=0.01"]
LOSSY_TABLES = ("flows", "queues", "utilization", "iterations", "transfers", "compute")


def lossy_run(out: Path, **env: str) -> subprocess.CompletedProcess:
    """`harness run` of LOSSY into `out`, in a fresh process with `env` added."""
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", *LOSSY, "-o", str(out),
                           "--no-progress"],
                          env={**os.environ, **env}, cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def assert_same_tables(a: Path, b: Path, except_summary: tuple[str, ...] = ()) -> None:
    """Two run directories hold the same LOSSY_TABLES (non-empty, exactly) and
    summaries (but for the keys in `except_summary`)."""
    for name in LOSSY_TABLES:
        ta, tb = pd.read_parquet(a / f"{name}.parquet"), pd.read_parquet(b / f"{name}.parquet")
        assert len(ta) > 0, name
        pd.testing.assert_frame_equal(ta, tb, check_exact=True, obj=name)
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for key in except_summary:
        sa.pop(key), sb.pop(key)
    assert sa == sb


def small_plan(*overrides: str) -> Plan:
    return plan(load_scenario(None, list(overrides)))


def scenario_plan(tmp_path: Path, text: str, *overrides: str) -> Plan:
    """The plan of a scenario file with `text`, written into tmp_path, and overrides."""
    path = tmp_path / "s.toml"
    path.write_text(text)
    return plan(load_scenario(str(path), list(overrides)))


def with_flows(p: Plan, rows: list[dict]) -> Plan:
    """The plan with an explicit flow schedule (id, start_ns, src, dst, size[, tos])."""
    flows = pd.DataFrame(rows)
    flows.insert(0, "id", range(len(flows)))
    hosts = tuple(sorted(set(flows["src"]) | set(flows["dst"])))
    return dataclasses.replace(p, flows=flows, background_hosts=hosts)


def compiled_class(namespace: str, name: str, source: str):
    """`namespace::name` from C++ `source`, compiled into this process with
    cppyy once (ns-3 and the project's modules loaded first)."""
    from harness.engine import ns3

    ns3.load(quiet=True)
    import cppyy

    if not hasattr(getattr(cppyy.gbl, namespace, None), name):
        cppyy.cppdef(source)
    return getattr(getattr(cppyy.gbl, namespace), name)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    import shutil

    no_browser = pytest.mark.skip(reason="chromium is not installed (apt-get install -y chromium)")
    has_browser = shutil.which("chromium") or shutil.which("chromium-browser")
    for item in items:
        if "browser" in item.keywords and not has_browser:
            item.add_marker(no_browser)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def make_profile(tmp_path_factory):
    """Factory of small resnet50-like profile CSVs (harness.traffic.profiles.resnet50_like):
    ``make_profile(layers=10, model_bytes=1_000_000, compute_ms=10.0, name=None)``
    returns the path of that profile, written once per session for each set of
    arguments. ``name`` is the file's stem (the profile's name); by default one
    made of the arguments."""
    from harness.traffic import profiles

    made: dict[tuple, Path] = {}

    def make(layers: int = 10, model_bytes: int = 1_000_000, compute_ms: float = 10.0,
             name: str | None = None) -> Path:
        key = (layers, model_bytes, compute_ms, name)
        if key not in made:
            stem = name or f"resnet50-like-{layers}l-{model_bytes}b-{compute_ms:g}ms"
            path = tmp_path_factory.mktemp("profiles") / f"{stem}.csv"
            profiles.save_profile(profiles.resnet50_like(layers, model_bytes, compute_ms), path)
            made[key] = path
        return made[key]

    return make


@pytest.fixture(scope="module")
def small_model(make_profile):
    """A 20-layer, 2 MB resnet50-like profile (10 ms compute; rescale with R)."""
    return make_profile(20, 2_000_000, 10.0, name="small-model")


@pytest.fixture
def run_plan():
    return lambda p: execute(p, progress=False, quiet=True)


# a small sweep, for the sweep and sweep-plot tests
GRID = """
name = "tiny"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
"run.warmup" = 0.05
"run.cooldown" = 0.05
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 4
[axes]
"training.ratio" = [2, 1]
"background.load" = {loads}
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
"""


@pytest.fixture(scope="session")
def grid_file(tmp_path_factory):
    """A 2 x 2 grid x 2 arms (same, low) of a small training job with background."""
    d = tmp_path_factory.mktemp("grid")
    from harness.traffic import profiles

    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), d / "m1.csv")
    path = d / "tiny.toml"
    path.write_text(GRID.format(model=d / "m1.csv", loads="[0.05, 0.1]"))
    return path


@pytest.fixture(scope="session")
def local_sweep(grid_file, tmp_path_factory):
    """The tiny grid run once, on the local executor (shared by the sweep tests)."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    out = tmp_path_factory.mktemp("sweeps") / "local"
    report = sweeping.run_sweep(load_grid(grid_file), out, jobs=2, progress=False)
    return report
