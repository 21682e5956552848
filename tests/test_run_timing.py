"""execute()'s on_phase hook and the timings in the manifest (no timed asserts)."""

from __future__ import annotations

import contextlib
import time

import pandas as pd
import pytest

from conftest import small_plan
from harness.engine import ns3
from harness.engine.simulation import _process_start, execute


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


def test_the_event_count_does_not_depend_on_how_the_run_is_sliced(monkeypatch):
    """The run is sliced by wall time (~0.5 s a slice, for the progress bar),
    so a loaded machine makes more slices. A slice's own Stop is not the
    model's event: where the job's target or the window's end stops Run
    first, it is taken out of the queue, not left to end a later slice and be
    counted (the events of a run on a loaded machine differed by 56)."""
    from harness.engine import simulation

    def run():
        from harness.config.scenario import load_scenario
        from harness.engine.planning import plan

        p = plan(load_scenario("ps-small", ["run.duration=2", "run.warmup=0.02",
                                            "run.cooldown=0.02", "run.min_iterations=3"]))
        r = execute(p, quiet=True)
        return r.manifest["events"], r.summary["simulated_s"]

    events, simulated = run()
    assert simulated < 2   # the job's target stopped Run before the duration
    # a clock on which every slice takes 0.5 s: the step stays 1 ms, ~200 slices
    clock = iter(range(0, 10**9))
    monkeypatch.setattr(simulation.time, "perf_counter", lambda: 0.25 * next(clock))
    sliced_events, sliced_simulated = run()
    assert (sliced_events, sliced_simulated) == (events, simulated)


_PADDING = r"""
#include "ns3/simulator.h"
namespace ddnn_padding {
struct Padding {
    // n events that never run (after the run's end), and n cancelled ones
    // due within it: the event queue is larger and purges at other times
    static void Add(uint32_t n, double never, double within) {
        for (uint32_t i = 0; i < n; ++i) {
            ns3::Simulator::Schedule(ns3::Seconds(never), []() {});
            ns3::Simulator::Cancel(ns3::Simulator::Schedule(ns3::Seconds(within), []() {}));
        }
    }
};
}
"""


def test_the_event_count_is_the_events_that_ran_whatever_else_the_queue_holds():
    """Events are counted as they run: what else the queue holds (more
    pending events, cancelled timers) moves its purges, not the count (ns-3
    counts a cancelled event it skips, so the count once moved with them:
    113,698 against 113,394 here)."""
    from conftest import compiled_class
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    padding = compiled_class("ddnn_padding", "Padding", _PADDING)
    p = plan(load_scenario("ps-small", ["run.duration=0.1", "run.warmup=0.01",
                                        "run.cooldown=0.01"]))

    @contextlib.contextmanager
    def padded():
        padding.Add(3000, 10.0, 0.05)
        yield

    plain, busy = execute(p, quiet=True), execute(p, quiet=True, on_phase=padded())
    assert busy.manifest["events"] == plain.manifest["events"] > 0
    assert busy.summary["simulated_s"] == plain.summary["simulated_s"]


_LEFTOVERS = """
#include "ns3/core-module.h"
#include "ns3/network-module.h"
namespace ddnn_leftovers {
struct Leftovers {
    // what other ns-3 use in the process may leave behind: nodes, and
    // events due within a run's time
    static void Add(uint32_t nodes, uint32_t events) {
        ns3::NodeContainer c;
        c.Create(nodes);
        for (uint32_t i = 0; i < events; ++i) {
            ns3::Simulator::Schedule(ns3::MicroSeconds(10 * (i + 1)), []() {});
        }
    }
};
}
"""


def test_a_run_is_the_same_whatever_the_process_left_in_the_simulator():
    """Nodes and events left in ns-3's simulator by earlier use in the process
    (a test's own network, a user's script) are not part of the run: on CI a
    test file's leftovers joined the next file's run (56 events more)."""
    from conftest import compiled_class
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    leftovers = compiled_class("ddnn_leftovers", "Leftovers", _LEFTOVERS)
    p = plan(load_scenario("ps-small", ["run.duration=0.05", "run.warmup=0.005",
                                        "run.cooldown=0.005"]))
    plain = execute(p, quiet=True)
    leftovers.Add(4, 56)
    after = execute(p, quiet=True)
    assert after.manifest["events"] == plain.manifest["events"] > 0
    pd.testing.assert_frame_equal(after.flows, plain.flows)


def test_a_run_stopped_by_an_error_leaves_the_next_run_in_the_process_clean():
    """A sweep's cells can share a process: a run that an error stops midway
    (here in the hook around the simulation) leaves no nodes, addresses or
    events behind (before, the next run died of an address collision)."""
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    p = plan(load_scenario("ps-small", ["run.duration=0.05", "run.warmup=0.005",
                                        "run.cooldown=0.005"]))
    before = execute(p, quiet=True).manifest["events"]

    @contextlib.contextmanager
    def failing():
        raise RuntimeError("stopped")
        yield

    with pytest.raises(RuntimeError, match="stopped"):
        execute(p, quiet=True, on_phase=failing())
    assert execute(p, quiet=True).manifest["events"] == before


def test_start_up_counts_from_the_harness_start_not_the_process_fork(tmp_path):
    """A shell that forks, waits 3 s, then execs `harness run` (as
    `(sleep 3; exec harness run ...)` does): the start-up the run reports
    counts from the harness's own start, not the fork, so it fits in what
    the whole command took less the wait (before, it held the wait too)."""
    import json
    import subprocess
    import sys

    code = "from harness.launcher import main; main()"
    out = tmp_path / "run"
    began = time.time()
    done = subprocess.run(
        ["bash", "-c", 'sleep 3; exec "$@"', "bash", sys.executable, "-c", code, "run",
         "--set", "run.duration=0.05", "--set", "run.warmup=0.01", "--set", "run.cooldown=0.01",
         "--allow-short", "--no-progress", "-o", str(out)],
        capture_output=True, text=True, timeout=600)
    took = time.time() - began
    assert done.returncode == 0, done.stderr[-2000:]
    startup = json.loads((out / "manifest.json").read_text())["startup_s"]
    assert 0 < startup <= took - 3.0
