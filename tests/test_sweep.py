"""`harness sweep`: grids, the local and Dask executors, failures, kill and resume."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from harness.analysis import claims, metrics, stats
from harness.sweeps import adaptive, aggregate, sweeping, sweepdir
from harness.sweeps.aggregate import TIMING_COLUMNS
from harness.sweeps.cells import Cell
from harness.config.scenario import ConfigError
from harness.sweeps.grid import Grid, expand, load_grid

def results(out) -> pd.DataFrame:
    """The summary without its wall-clock columns (they are measurements of the host)."""
    df = pd.read_parquet(out / "summary.parquet")
    return df.drop(columns=list(TIMING_COLUMNS)).sort_values("cell").reset_index(drop=True)


def test_local_sweep_runs_every_cell_and_pairs_the_arms(local_sweep):
    s = local_sweep.tables["summary"]
    assert len(s) == 8 and (s["status"] == "ok").all() and not local_sweep.failed
    assert set(s["arm"]) == {"same", "low"}
    assert (s["iterations"] > 0).all()
    # both arms of a point see the same background flows (common random numbers)
    out = local_sweep.out
    for _, pair in s.groupby(["training.ratio", "background.load"]):
        a, b = (pd.read_parquet(out / "cells" / c / "flows.parquet") for c in pair["cell"])
        assert a[["id", "size", "start_s", "src", "dst"]].equals(b[["id", "size", "start_s",
                                                                      "src", "dst"]])
    d = local_sweep.tables["deltas"]
    assert set(d["arm"]) == {"low"} and len(d) == 4 * len(metrics.DELTA_METRICS)
    it = d[d["metric"] == "iteration_time"]
    assert ((it["value"] / it["reference"] - 1 - it["change"]).abs() < 1e-12).all()
    m = local_sweep.tables["deltas_mean"]
    assert len(m) == len(d) and (m["n"] <= 1).all()


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_results(local_sweep, grid_file, tmp_path):
    report = sweeping.run_sweep(load_grid(grid_file), tmp_path / "dask", jobs=2,
                             executor="dask", progress=False)
    assert not report.failed
    pd.testing.assert_frame_equal(results(tmp_path / "dask"), results(local_sweep.out))
    for cell in report.tables["summary"]["cell"]:
        for name in ("flows.parquet", "iterations.parquet", "transfers.parquet"):
            assert ((tmp_path / "dask" / "cells" / cell / name).read_bytes()
                    == (local_sweep.out / "cells" / cell / name).read_bytes())


@pytest.mark.slow
def test_dask_cells_over_their_time_limit_are_killed_and_the_worker_goes_on(grid_file,
                                                                           tmp_path):
    # one worker: its cell server forks a child per cell, so the first cell's
    # kill leaves the server running the second
    slow = tmp_path / "slow.toml"
    slow.write_text(grid_file.read_text().replace('timeout = "10min"', 'timeout = "0.5s"')
                    .replace("[0.05, 0.1]", "[0.05]").replace("[2, 1]", "[2]"))
    report = sweeping.run_sweep(load_grid(slow), tmp_path / "out", jobs=1,
                             executor="dask", progress=False)
    s = report.tables["summary"]
    assert len(report.failed) == 2 and s["error"].str.startswith("timeout").all()
    assert not list((tmp_path / "out" / "cells").iterdir())


@pytest.mark.slow
def test_sigkill_then_resume_finishes_each_cell_once(local_sweep, grid_file, tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "harness.cli", "sweep", str(grid_file), "-j", "1", "-o",
           str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not list((out / "cells").glob("[0-9a-f]*")):
        time.sleep(0.2)
    time.sleep(1.0)  # well inside the next cell
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = {p.name for p in (out / "cells").glob("[0-9a-f]*")}
    assert 0 < len(done_before) < 8
    # without --resume the directory is refused
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{8 - len(done_before)} cells run, {len(done_before)} already done" in resumed.stderr
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert len(cells) == 8 and not any(c.startswith(".") for c in cells)
    pd.testing.assert_frame_equal(results(out), results(local_sweep.out))


def test_a_failing_cell_is_recorded_and_the_others_finish(grid_file, tmp_path):
    # invalid values on an axis (negative, inf, nan) fail their own cells only
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05, -0.1, inf, nan]")
                   .replace('"training.ratio" = [2, 1]', '"training.ratio" = [2]'))
    r = subprocess.run([sys.executable, "-m", "harness.cli", "sweep", str(bad), "-j", "2",
                        "-o", str(tmp_path / "out"), "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    s = pd.read_parquet(tmp_path / "out" / "summary.parquet")
    failed = s[s["status"] == "failed"]
    assert len(failed) == 6 and not (failed["background.load"] == 0.05).any()
    assert failed["error"].str.startswith("background.load: must be").all()
    assert (s.loc[s["status"] == "ok", "iterations"] > 0).all() and len(s) == 8
    assert (s["status"] == "ok").sum() == 2
    # a fresh sweep: nothing was "done before"
    assert "2 cells run, 6 invalid (not run); 6 failed" in r.stderr
    assert "already done" not in r.stderr and "Traceback" not in r.stderr


def test_a_cell_over_its_time_limit_is_killed_and_recorded(grid_file, tmp_path):
    slow = tmp_path / "slow.toml"
    slow.write_text(grid_file.read_text().replace('timeout = "10min"', 'timeout = "0.5s"')
                    .replace("[0.05, 0.1]", "[0.05]").replace("[2, 1]", "[2]"))
    report = sweeping.run_sweep(load_grid(slow), tmp_path / "out", jobs=2, progress=False)
    s = report.tables["summary"]
    assert len(report.failed) == 2 and s["error"].str.startswith("timeout").all()
    assert not list((tmp_path / "out" / "cells").iterdir())


@pytest.mark.parametrize("change, field", [
    (('"training.ratio" = [2, 1]', '"training.ratioo" = [2, 1]'), "axes.training.ratioo"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = []'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = [2, "fast"]'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = 2'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = [2, 2]'), "axes.training.ratio"),
    (('reference = "same"', 'reference = "high"'), "arms.reference"),
    (('name = "tiny"', 'name = "tiny"\ncolour = "red"'), "colour"),
    (('"run.duration" = 0.25', '"run.duraton" = 0.25'), "set.run.duraton"),
    (('scenario = "default"', 'scenario = "nowhere"'), "scenario"),
    (('timeout = "10min"', 'timeout = "10min"\npoints = 3'), "points"),
    (('timeout = "10min"', 'timeout = "10min"\npoints = [{ "training.ratio" = 2 }]'),
     "points[0].training.ratio"),                                  # also an axis
    (('timeout = "10min"', 'timeout = "10min"\npoints = [{ "seedd" = 2 }]'), "points[0].seedd"),
    (('timeout = "10min"', 'timeout = "10min"\npoints = [{ seed = 2 }, { seed = 2 }]'),
     "points"),
    (('timeout = "10min"', 'timeout = "10min"\npoints = [{ "training.priority" = "low" }]'),
     "arms.same.training.priority"),                               # also an arm field
    (('[arms]', '[adaptive]\nmax_seeds = 2\n[arms]'), "adaptive.max_seeds"),  # no seed axis
    (('[arms]', '[adaptive]\nmax_seed = 2\n[arms]'), "adaptive.max_seed"),
])
def test_grid_errors_name_the_field_before_anything_runs(grid_file, tmp_path, change, field):
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace(*change))
    with pytest.raises(ConfigError) as err:
        load_grid(bad)
    assert err.value.field == field, str(err.value)


@pytest.mark.parametrize("budget", ['"-5min"', '"soon"', "0"])
def test_a_bad_adaptive_budget_is_named(grid_file, tmp_path, budget):
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace('"training.ratio" = [2, 1]',
                                                 '"training.ratio" = [2, 1]\nseed = [1]')
                   + f"\n[adaptive]\nmax_seeds = 2\nbudget = {budget}\n")
    with pytest.raises(ConfigError) as err:
        load_grid(bad)
    assert err.value.field == "adaptive.budget", str(err.value)


def _one_seed_run(tmp_path):
    """Three points (R = 1, 2, 3) with seed 1 run (cells of 10, 100 and 40 s
    of measured wall time), seed 2 to add: (grid, cells, extra, per-seed cost
    of each point)."""
    grid = Grid("g", None, "", {}, (), (("training.ratio", (1, 2, 3)), ("seed", (1,))),
                (("same", ()), ("low", ())), "same", 60.0)
    walls = {1: 10.0, 2: 100.0, 3: 40.0}      # seconds per cell, by ratio
    cells = []
    for r, wall in walls.items():
        for arm in ("same", "low"):
            cell = Cell(f"c{r}{arm}", arm, (("training.ratio", r), ("seed", 1)), None)
            directory = tmp_path / "cells" / cell.id
            directory.mkdir(parents=True)
            (directory / "manifest.json").write_text(json.dumps({"run_wall_s": wall}))
            cells.append(cell)
    extra = [Cell(f"e{r}{arm}", arm, (("training.ratio", r), ("seed", 2)), None)
             for r in (1, 2, 3) for arm in ("same", "low")]
    return grid, cells, extra, {r: 2 * (w + adaptive.CELL_OVERHEAD_S) for r, w in walls.items()}


def test_added_seeds_go_to_the_cheapest_points_that_fit_the_budget(tmp_path):
    """within_budget: a point's cost is the mean over its seeds of its cells'
    measured wall time (manifest run_wall_s + overhead); points are taken
    cheapest first while the round fits in what is left on `jobs` cores."""
    grid, cells, extra, per_point = _one_seed_run(tmp_path)
    # room on 2 cores for R=1 and R=3 (cheapest first), not for R=2 as well
    left = (per_point[1] + per_point[3]) / 2 + 1
    chosen, left_out = adaptive.within_budget(tmp_path, grid, cells, extra, left, jobs=2)
    assert {dict(c.point)["training.ratio"] for c in chosen} == {1, 3}
    assert len(chosen) == 4 and left_out == 1
    # nothing fits: no seeds at all, every point left out
    chosen, left_out = adaptive.within_budget(tmp_path, grid, cells, extra, 1.0, jobs=2)
    assert chosen == [] and left_out == 3
    # all fit
    chosen, left_out = adaptive.within_budget(tmp_path, grid, cells, extra, 1e6, jobs=2)
    assert len(chosen) == 6 and left_out == 0


def test_added_seeds_go_first_to_points_nearest_a_verdict(tmp_path):
    """With projections (stats.seeds_to_decide), a point projected to be
    decided within max_seeds goes before cheaper points that are not, and
    keeps room for its later seeds: a cheap hopeless point gets a seed only
    in what is left after that."""
    grid, cells, extra, per_seed = _one_seed_run(tmp_path)
    # R=3 decided at 3 seeds (this one and one more), R=1 at 50 (hopeless with
    # max_seeds 6), R=2 unknown
    to_decide = {(1,): 50.0, (2,): math.inf, (3,): 3.0}
    room = 2 * per_seed[3]                       # R=3's seed now and its next one
    chosen, left_out = adaptive.within_budget(tmp_path, grid, cells, extra, room / 2 + 1, 2,
                                              to_decide, max_seeds=6)
    assert {dict(c.point)["training.ratio"] for c in chosen} == {3} and left_out == 2
    # room for R=1 too, once R=3's are kept
    chosen, _ = adaptive.within_budget(tmp_path, grid, cells, extra,
                                       (room + per_seed[1]) / 2 + 1, 2, to_decide, max_seeds=6)
    assert {dict(c.point)["training.ratio"] for c in chosen} == {1, 3}
    # projected past max_seeds: R=3 is no longer nearer than the cheap R=1
    chosen, _ = adaptive.within_budget(tmp_path, grid, cells, extra, per_seed[1] / 2 + 1, 2,
                                       {(3,): 30.0}, max_seeds=6)
    assert {dict(c.point)["training.ratio"] for c in chosen} == {1}


def test_points_are_crossed_with_the_axes(grid_file, tmp_path):
    grid_text = grid_file.read_text().replace('"background.load" = [0.05, 0.1]', "seed = [1, 2]")
    path = tmp_path / "points.toml"
    path.write_text(grid_text.replace('timeout = "10min"', 'timeout = "10min"\npoints = ['
                                      '{ "background.load" = 0.05, "run.warmup" = 0.04 }, '
                                      '{ "background.load" = 0.1 }]'))
    grid = load_grid(path)
    assert grid.axis_fields == ["background.load", "run.warmup", "training.ratio", "seed"]
    cells = expand(grid)
    points = {tuple(sorted(dict(c.point).items())) for c in cells}
    assert len(cells) == 2 * 2 * 2 * 2 and len(points) == 8     # points x ratio x seed x arms
    first = [c for c in cells if dict(c.point)["background.load"] == 0.05]
    assert all(c.scenario.run.warmup == 0.04 and c.scenario.background.load == 0.05
               for c in first)
    assert all(c.scenario.run.warmup == 0.05 for c in cells if c not in first)


def test_a_point_that_sets_fewer_fields_is_judged_alone(tmp_path):
    """Adaptive seeding judges a point from its own cells: sensitivity's
    band-limit point sets none of the DRR point's fields (network.qdisc,
    network.weights.*), and judging it alone once stopped the sweep with a
    KeyError after its first point had run."""
    from harness.sweeps.aggregate import compare

    grid = load_grid("sensitivity")
    own = [c for c in expand(grid) if dict(c.point).get("label") == "band-limit-100"
           and dict(c.point)["training.ratio"] == 16 and dict(c.point)["background.rate"] == 23]
    assert len(own) == 2 and "network.qdisc" not in dict(own[0].point)
    tables = compare(tmp_path, grid, own)   # nothing ran: no verdict, and no error
    assert set(grid.axis_fields) <= set(tables["summary"].columns)
    assert tables["deltas_mean"].empty


def test_changed_grid_is_detected_on_resume(local_sweep, grid_file, tmp_path):
    changed = tmp_path / "changed.toml"
    changed.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05, 0.2]"))
    with pytest.raises(sweepdir.SweepError, match="grid changed"):
        sweepdir.prepare_dir(local_sweep.out, load_grid(changed),
                             expand(load_grid(changed)), resume=True)


@pytest.mark.parametrize("preset, cells", [("quick", 32), ("thesis", 96)])
def test_presets_expand_to_the_reference_grid(preset, cells):
    grid = load_grid(preset)
    expanded = expand(grid)
    assert len(expanded) == cells and all(c.scenario is not None for c in expanded)
    assert grid.axis_fields[0] == "training.ratio" and grid.reference == "same"
    ratios = {c.scenario.training.ratio for c in expanded}
    assert ratios == {16, 8, 4, 2}


def test_cells_start_longest_predicted_first(grid_file, tmp_path, monkeypatch):
    from harness.sweeps import executors

    cells = expand(load_grid(grid_file))
    by_point = {}
    for c in cells:
        by_point.setdefault(c.point, set()).add(c.predicted_bytes)
    assert all(len(v) == 1 for v in by_point.values())      # both arms alike
    b = {(dict(p)["training.ratio"], dict(p)["background.load"]): v.pop()
         for p, v in by_point.items()}
    # more background load, and a more network-bound job: more bytes to simulate
    assert b[2, 0.1] > b[2, 0.05] > 0 and b[1, 0.1] > b[1, 0.05]
    assert b[1, 0.05] > b[2, 0.05]
    started = []
    monkeypatch.setattr(executors, "run_local",
                        lambda tasks, jobs, on_done: started.extend(t.cell for t in tasks))
    sweeping.run_sweep(load_grid(grid_file), tmp_path / "out", progress=False)
    predicted = [c.predicted_bytes for c in started]
    assert len(started) == len(cells) and predicted == sorted(predicted, reverse=True)


def test_ctrl_c_stops_the_cells_writes_the_tables_and_prints_resume(grid_file, tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C: the running
    cell is unfinished (not failed), the finished ones are in the tables."""
    small = tmp_path / "small.toml"
    small.write_text(grid_file.read_text().replace("[2, 1]", "[2]"))
    out = tmp_path / "out"
    # SIGINT at its default in the sweep, however this test run was started
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", str(small), "-j", "1",
                             "-o", str(out), "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while time.time() < deadline and not list((out / "cells").glob("[0-9a-f]*")):
        time.sleep(0.2)
    time.sleep(1.0)  # inside the next cell
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"harness sweep {small} -o {out} --resume" in err and "Traceback" not in err
    done = {p.name for p in (out / "cells").iterdir()}
    assert 0 < len(done) < 4 and not any(n.startswith(".") for n in done)  # no leftovers
    assert not list((out / "failed").iterdir())
    s = pd.read_parquet(out / "summary.parquet")
    assert set(s.loc[s["status"] == "ok", "cell"]) == done
    assert (s.loc[~s["cell"].isin(done), "status"] == "unfinished").all()
    assert f"{4 - len(done)} unfinished" in err


def test_resume_removes_every_leftover_of_killed_writers(local_sweep, grid_file, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(local_sweep.out, out)
    dead = 4_194_305  # above Linux's largest pid: no such process
    leftovers = [out / f".summary.parquet.tmp-{dead}", out / "failed" / f".abc.json.tmp-{dead}",
                 out / "cells" / f".abc.old-{dead}", out / "cells" / f".abc.tmp-{dead}"]
    for path in leftovers:
        if path.name.endswith(f"old-{dead}") or path.parent.name == "cells":
            path.mkdir()
            (path / "flows.parquet").write_bytes(b"x")
        else:
            path.write_bytes(b"x")
    alive = out / "cells" / f".abc.tmp-{os.getppid()}"  # a writer still running: kept
    alive.mkdir()
    user = out / "notes.txt"
    user.write_text("mine")
    grid = load_grid(grid_file)
    sweepdir.prepare_dir(out, grid, expand(grid), resume=True)
    assert not any(p.exists() for p in leftovers)
    assert alive.is_dir() and user.read_text() == "mine"


def test_failure_records_keep_the_real_message(local_sweep, grid_file, tmp_path):
    """A Python failure keeps the exception's own message; an ns-3 abort its
    msg= line, not the gdb backtrace that follows it."""
    import dataclasses
    import json

    from harness.sweeps import executors

    grid = load_grid(grid_file)
    cells = [c for c in expand(grid) if c.arm == "same"][:2]
    tr, tcp = cells[0].scenario.training, cells[1].scenario.tcp
    broken = [  # past validation, as a bug or a changed file would get there
        dataclasses.replace(cells[0], scenario=cells[0].scenario.replace(
            training=tr.replace(profile=str(tmp_path / "gone")))),
        dataclasses.replace(cells[1], scenario=cells[1].scenario.replace(
            tcp=tcp.replace(initial_cwnd=100_000_000_000))),
    ]
    outcomes = []
    tasks = [executors.Task(c, tmp_path / "cells" / c.id, tmp_path / f"{c.id}.log", 300)
             for c in broken]
    executors.run_local(tasks, 2, outcomes.append, warm_up=False)
    errors = {o.cell.id: o for o in outcomes}
    python = errors[broken[0].id]
    assert python.error.startswith("training.profile: no file"), python.error
    assert "Traceback" in python.detail
    ns3 = errors[broken[1].id]
    assert ns3.error == ("ns-3 fatal error: Could not set default value for "
                         "ns3::TcpSocket::InitialCwnd (exit code 133 (an ns-3 fatal error or "
                         "abort))"), ns3.error
    assert "#0 " not in ns3.detail and "Thread " not in ns3.detail
    sweepdir.record_failure(tmp_path, ns3.cell, ns3.error, ns3.detail)
    record = json.loads((tmp_path / "failed" / f"{ns3.cell.id}.json").read_text())
    assert record["error"] == ns3.error and "msg=" in record["detail"]


def test_crash_message_finds_ns3s_msg_line():
    from harness.sweeps.failures import crash_message

    log = ('msg="Invalid attribute value", file=/x/config.cc, line=888\nNS_FATAL, terminating\n'
           "terminate called without an active exception\n *** Break *** abort\n"
           "Thread 3 (Thread 0x7f (LWP 1) \"python\"):\n#0  __futex_wait () at x.c:57\n")
    assert crash_message("exit code 133", log) == \
        "ns-3 fatal error: Invalid attribute value (exit code 133)"
    # once the simulator exists, ns-3 puts the time and the node before file=
    during = ('NS_ASSERT failed, cond="m_dupAckCount == 1", msg="From OPEN->DISORDER but '
              'with 2 dup ACKs", +0.520318422s 5 file=/x/tcp-socket-base.cc, line=1935\n'
              "NS_FATAL, terminating\nterminate called without an active exception\n")
    assert crash_message("exit code 133", during) == \
        "ns-3 fatal error: From OPEN->DISORDER but with 2 dup ACKs (exit code 133)"
    assert crash_message("killed by signal SIGSEGV", "loading\nsegfault here\n#0 f ()\n") == \
        "cell process died: killed by signal SIGSEGV: segfault here"
    assert crash_message("exit code 1", "") == "cell process died: exit code 1"


def test_single_axis_grid_with_arms_gives_deltas():
    """paired_deltas on one axis: the reference is found (it was looked up as
    (v,) in a plain Index, which is always False: empty deltas)."""
    from harness.analysis import metrics

    summary = pd.DataFrame({"background.load": [0.1, 0.1, 0.2, 0.2],
                            "arm": ["same", "low", "same", "low"],
                            "mean_iteration_s": [1.0, 1.5, 2.0, 2.0],
                            "training_stalled": [False] * 4})
    d = metrics.paired_deltas(summary, ["background.load"], "arm", "same",
                              (("mean_iteration_s", "iteration_time"),))
    assert list(d["background.load"]) == [0.1, 0.2]
    assert list(d["change"]) == pytest.approx([0.5, 0.0])


def test_a_dead_childs_closed_pipe_reads_as_no_message():
    """A child that died without a reply leaves its pipe at EOF: poll() is
    true, recv() raises EOFError; the parent takes it as no message (and reads
    the child's log), instead of raising out of the sweep."""
    from multiprocessing import Pipe

    from harness.sweeps.executors import _reply

    recv, send = Pipe(duplex=False)
    send.close()
    assert recv.poll() and _reply(recv) == (None, None)
    recv2, send2 = Pipe(duplex=False)
    send2.send(("training.profile: no file", "Traceback ..."))
    assert _reply(recv2) == ("training.profile: no file", "Traceback ...")


# ---------------------------------------------------------------- points with their own arms

OWN_ARMS = """
name = "own-arms"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.3
"run.warmup" = 0.05
"run.cooldown" = 0.01
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 3
"training.architecture" = "ps"
"training.ratio" = 2
"network.band_limit_packets" = 100
"background.enabled" = false
[axes]
seed = [1, 2]

[[points]]
label = "tictac"
"training.pull_barrier" = true
reference = "random"
arms.random = {{ "training.policy" = "random" }}
arms.tictac = {{ "training.policy" = "tictac" }}

[[points]]
label = "p3"
"training.servers" = 1
reference = "fifo"
arms.fifo = {{ "training.policy" = "fifo" }}
arms.p3 = {{ "training.policy" = "p3" }}
"""


@pytest.fixture(scope="module")
def own_arms_file(tmp_path_factory):
    from harness.traffic import profiles

    d = tmp_path_factory.mktemp("own-arms")
    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), d / "m.csv")
    path = d / "own.toml"
    path.write_text(OWN_ARMS.format(model=d / "m.csv"))
    return path


def test_points_with_their_own_arms_compare_each_with_its_own_reference(own_arms_file, tmp_path):
    from harness.outputs.plots import sweep_data

    grid = load_grid(own_arms_file)
    cells = expand(grid)
    assert {(dict(c.point)["label"], c.arm, c.reference) for c in cells} == {
        ("tictac", "random", "random"), ("tictac", "tictac", "random"),
        ("p3", "fifo", "fifo"), ("p3", "p3", "fifo")}
    assert all(c.scenario.training.pull_barrier == (dict(c.point)["label"] == "tictac")
               for c in cells)
    report = sweeping.run_sweep(grid, tmp_path / "out", jobs=2, progress=False)
    assert not report.failed
    d = report.tables["deltas"]
    assert set(zip(d["label"], d["arm"])) == {("tictac", "tictac"), ("p3", "p3")}
    s = report.tables["summary"].set_index(["label", "arm", "seed"])
    it = d[d["metric"] == "iteration_time"].set_index(["label", "arm", "seed"])
    for (label, arm, seed), row in it.iterrows():
        ref = {"tictac": "random", "p3": "fifo"}[label]
        assert row["reference"] == s.loc[(label, ref, seed), "mean_iteration_s"]
        assert row["value"] == s.loc[(label, arm, seed), "mean_iteration_s"]
    m = report.tables["deltas_mean"]
    m = m[m["metric"].isin(["iteration_time", "end_spread"])].set_index(["label", "metric"])
    # an interval wherever there are enough paired iterations for one
    assert (m["seeds"] == 2).all() and m["samples"].min() > 0
    assert (m["change_low"].notna() == (m["samples"] >= stats.MIN_ITERATION_PAIRS)).all()
    assert m.loc[("tictac", "iteration_time"), "change"] < 0   # tictac beats random order
    record = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert {c["reference"] for c in record["cells"]} == {"random", "fifo"}
    frame = sweep_data.comparison_frame(report.tables["summary"], record)
    # labelled points with their own arms: a bar per "label: arm", hue = role
    assert set(frame["point"]) == {"tictac: random", "tictac: tictac", "p3: fifo", "p3: p3"}
    roles = frame.drop_duplicates("point").set_index("point")["arm"]
    assert roles["tictac: random"] == roles["p3: fifo"] == "reference"
    assert roles["tictac: tictac"] == roles["p3: p3"] == "compared"
    # the claims table: each point's arm against the point's own reference
    table = claims.claims_table(tmp_path / "out").set_index(["label", "arm"])
    assert dict(zip(table.index, table["baseline"])) == {("tictac", "tictac"): "random",
                                                          ("p3", "p3"): "fifo"}
    for label, arm in (("tictac", "tictac"), ("p3", "p3")):
        assert table.loc[(label, arm), "change"] == pytest.approx(
            m.loc[(label, "iteration_time"), "change"], nan_ok=True)
    assert "| tictac | tictac vs random | all |" in claims.markdown(table.reset_index())


def test_claims_phases_split_the_window_at_every_change(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({
        "run": {"warmup": 0.5, "duration": 4.0, "cooldown": 0.5},
        "link_changes": [{"link": 0, "at_ns": 2_000_000_000, "rate_bps": 1e9},
                         {"link": 1, "at_ns": 2_000_000_000, "rate_bps": 1e9}],
        "background": {"steps": [[1.0, 50.0], [3.8, 0.0]]}}))
    got = claims.phases(claims.Cell("x", "a", 1, run))
    assert got == [(0.5, 1.0), (1.0, 2.0), (2.0, 3.5)]


@pytest.mark.parametrize("change, field", [
    (('reference = "random"', 'reference = "fifo"'), "points[0].reference"),
    (('reference = "random"\n', ''), "points[0].reference"),
    (('label = "p3"', 'label = "tictac"'), "points[1].label"),
    (('label = "p3"\n', ''), "points[1].label"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = {{ "training.servers" = 2 }}'),
     "points[1].arms.p3.training.servers"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = {{ "training.polcy" = "p3" }}'),
     "points[1].arms.p3.training.polcy"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = 3'), "points[1].arms.p3"),
    (('label = "p3"', 'label = 3'), "points[1].label"),
])
def test_own_arms_errors_name_the_field(own_arms_file, tmp_path, change, field):
    bad = tmp_path / "bad.toml"
    text = own_arms_file.read_text()
    old, new = (c.replace("{{", "{").replace("}}", "}") for c in change)
    assert old in text
    bad.write_text(text.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_grid(bad)
    assert err.value.field == field, str(err.value)


def test_seed_claims_grid_sets_every_system_against_its_baseline():
    from harness.engine.planning import plan

    grid = load_grid("seed-claims")
    cells = expand(grid)
    assert all(c.scenario is not None for c in cells), [c.error for c in cells if c.error]
    by_label: dict[str, list] = {}
    for c in cells:
        by_label.setdefault(dict(c.point)["label"], []).append(c)
    assert {"bytescheduler", "p3", "prophet", "tictac", "mercury", "autobyte",
            "ring-priority"} <= set(by_label)
    for label, group in by_label.items():
        assert {dict(c.point)["seed"] for c in group} == {1, 2, 3}, label
        arms = {c.arm for c in group}
        assert group[0].reference in arms and len(arms) >= 2, label
        # the arms of a seed replay the same background flows and run as long
        first = [plan(c.scenario) for c in group if dict(c.point)["seed"] == 1]
        assert all(p.flows.equals(first[0].flows) for p in first[1:]), label
        assert len({p.run.duration for p in first}) == 1, label


def test_labelled_points_times_axes_keep_one_row_per_point():
    # a grid of labelled `points` multiplied by another axis: a label alone
    # names 2 points here, so deltas_mean must join on label and axis (it
    # once joined on the label only: every row got every point's interval)
    from harness.analysis.tables import POINT_LABEL

    rows = [{POINT_LABEL: label, "training.ratio": r, "network.qdisc": q, "arm": "low",
             "metric": "iteration_time"}
            for label, q in (("a", "drr"), ("b", None)) for r in (2, 16)]
    means = pd.DataFrame([{**row, "mean": 0.01 * i} for i, row in enumerate(rows)])
    intervals = pd.DataFrame([{**row, "network.qdisc": float("nan") if row["network.qdisc"]
                               is None else row["network.qdisc"], "change": 0.01 * i}
                              for i, row in enumerate(rows)])
    out = aggregate._with_intervals(means, intervals, [POINT_LABEL, "training.ratio",
                                                       "network.qdisc"], ["training.ratio"])
    assert len(out) == 4
    assert (out["mean"] == out["change"]).all()
