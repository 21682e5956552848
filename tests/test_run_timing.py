"""execute()'s on_phase hook and the timings in the manifest (no timed asserts)."""

from __future__ import annotations

import contextlib
import time

import pytest

from conftest import small_plan
from harness import ns3
from harness.simulation import _process_start, execute


def test_on_phase_brackets_the_simulation_and_the_manifest_times_it():
    seen = []

    @contextlib.contextmanager
    def phase():
        sim = ns3.load(quiet=True).Simulator
        seen.append(("enter", sim.Now().GetSeconds()))
        yield
        seen.append(("exit", sim.Now().GetSeconds()))

    r = execute(small_plan("run.duration=0.05", "run.warmup=0.01", "run.cooldown=0.01"),
                quiet=True, on_phase=phase())
    # the run ends at its duration, or sooner once the window's flows are done
    assert seen == [("enter", 0.0), ("exit", pytest.approx(r.summary["simulated_s"]))]
    assert r.summary["window_s"][1] <= r.summary["simulated_s"] <= 0.05 + 1e-9
    m = r.manifest
    assert m["events"] == r.summary["events"] > 0
    assert 0 < m["simulation_wall_s"] <= m["run_wall_s"]
    assert m["simulation_cpu_s"] > 0
    assert 0 < m["startup_s"] < time.time() - _process_start() + 1e-6
    assert 0 < m["network_build_s"] < m["startup_s"]   # a part of start-up


def test_process_start_agrees_with_psutil():
    # psutil adds /proc/stat's boot time, rounded to whole seconds: up to 1 s early
    psutil = pytest.importorskip("psutil")
    ours, theirs = _process_start(), psutil.Process().create_time()
    assert ours <= time.time()
    assert -0.05 <= ours - theirs <= 1.05
