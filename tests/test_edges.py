"""API and CLI edges a user reported: a run without `out`, warnings that name
the caller's line, rate and load together, the completion warning and long
runs, tiny link rates, --budget in seconds, `harness check`'s summary and
shell completion. Bad-input lines of scenarios and grids are in the matrix
(test_bad_inputs.py); real ns-3 runs here are the 0.3 s default."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import harness
from harness import cli
from harness import catalog
from harness.engine import ns3

SHORT = {"run.duration": 0.3, "background.load": 0.1}


@pytest.fixture
def invoke(monkeypatch, tmp_path):
    """`harness ARGS` in-process in an empty directory; ns-3 must not start."""
    monkeypatch.setattr(ns3, "load", lambda *a, **k: pytest.fail("ns-3 was started"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DDNN_HARNESS_RESULTS", raising=False)
    runner = CliRunner()
    return lambda *argv, **kw: runner.invoke(cli.main, list(argv), prog_name="harness", **kw)


# --------------------------------------------------------------------------
# 1. harness.run without out: in memory, and says so; load_run(None) is named


@pytest.fixture(scope="module")
def memory_run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the shortened run's scaled warm-up
        return harness.run("default", SHORT, seed=4)


def test_a_run_without_out_is_in_memory_and_says_so(memory_run, tmp_path):
    r = memory_run
    assert r.dir is None and len(r.flows) > 0
    assert "in memory only" in repr(r) and "save" in repr(r)
    assert not list(tmp_path.iterdir())
    with pytest.raises(TypeError, match=r"load_run: path: .*got None.*r\.save\(DIR\)"):
        harness.load_run(r.dir)


def test_save_writes_what_harness_run_out_writes(memory_run, tmp_path):
    """r.save(DIR) writes the directory harness.run(out=DIR) writes: the same
    files, and load_run reads back the same tables."""
    r = memory_run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = harness.run("default", SHORT, seed=4, out=tmp_path / "out")
    saved_dir = r.save(tmp_path / "saved")
    assert r.dir == saved_dir and "in memory" not in repr(r) and str(saved_dir) in repr(r)
    assert sorted(p.name for p in saved_dir.iterdir()) == \
        sorted(p.name for p in written.dir.iterdir())
    loaded = harness.load_run(saved_dir)
    for name in ("flows", "queues", "utilization"):
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(r, name))
    assert loaded.summary == json.loads((written.dir / "summary.json").read_text())
    assert loaded.config == json.loads((written.dir / "config.json").read_text())


def test_save_refuses_a_users_directory_naming_out(memory_run, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(harness.ConfigError, match=r"^out: .*not a run directory"):
        memory_run.save(mine)
    assert (mine / "notes.txt").read_text() == "mine" and len(list(mine.iterdir())) == 1


def test_load_run_names_its_argument_for_a_bad_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"load_run: path: .*nope does not exist"):
        harness.load_run(tmp_path / "nope")
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError, match=r"load_run: path: .* is a file"):
        harness.load_run(tmp_path / "f")
    with pytest.raises(FileNotFoundError, match=r"load_run: path: .*missing config.json"):
        harness.load_run(tmp_path)
    with pytest.raises(TypeError, match=r"load_sweep: path: .*got 3"):
        harness.load_sweep(3)
    with pytest.raises(TypeError, match=r"load_sweeps: paths: .*got None"):
        harness.load_sweeps(None)


def test_harness_run_names_out_for_a_bad_output(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(harness.ConfigError, match=r"^out: .*not a directory"):
        harness.run("default", {"run.duration": 4}, out=tmp_path / "f" / "run")


# --------------------------------------------------------------------------
# 2. warnings name the caller's file and line


def _warnings_of(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except harness.ConfigError:
            pass
    return [w for w in caught if issubclass(w.category, UserWarning)]


def test_the_scaled_warmup_warning_names_the_callers_line(tmp_path):
    (tmp_path / "f").write_text("x")
    for call in (lambda: harness.check(run__duration=0.3),
                 # through harness.run, stopped by its bad `out` after the
                 # warning, before ns-3
                 lambda: harness.run("default", {"run.duration": 0.3}, out=tmp_path / "f" / "r")):
        caught = _warnings_of(call)
        assert len(caught) == 1 and "warm-up" in str(caught[0].message)
        assert caught[0].filename == __file__, caught[0].filename
        line = Path(__file__).read_text().splitlines()[caught[0].lineno - 1]
        assert "lambda: harness." in line, line


def test_a_long_run_warns_with_its_cost_at_the_callers_line(monkeypatch):
    from harness.engine import simulation

    class Stop(Exception):
        pass

    def no_run(*a, **k):
        raise Stop

    monkeypatch.setattr(simulation, "execute", no_run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Stop):
            harness.run("default", {"run.duration": "2min"})
    long = [w for w in caught if "a long run" in str(w.message)]
    assert len(long) == 1 and long[0].filename == __file__
    assert "120 s simulated" in str(long[0].message) and "wall time" in str(long[0].message)


# --------------------------------------------------------------------------
# 3. background.rate and background.load together


def test_rate_and_load_together_are_refused_in_the_api():
    with pytest.raises(harness.ConfigError, match="background.rate: .*background.load") as e:
        harness.check("default", {"background.load": 0.3}, background__rate=5)
    assert e.value.field == "background.rate"


def test_one_of_rate_or_load_still_replaces_the_inherited_other(invoke, tmp_path):
    """Layers still work: the default scenario gives load; a derived file or
    one --set giving rate replaces it (and the other way round)."""
    assert harness.check("default", {"background.rate": 5}).background.load is None
    (tmp_path / "s.toml").write_text('base = "default"\n[background]\nrate = 5\n')
    r = invoke("check", "s.toml", "--json")
    assert r.exit_code == 0, r.output
    background = json.loads(r.stdout)["scenario"]["background"]
    assert background["rate"] == 5 and background["load"] is None
    r = invoke("check", "s.toml", "--json", "--set", "background.load=0.3")
    background = json.loads(r.stdout)["scenario"]["background"]
    assert background["rate"] is None and background["load"] == 0.3


# --------------------------------------------------------------------------
# 4. the completion warning tells the truth; long runs are announced


@pytest.mark.parametrize("measured, done", [(6979, 6978), (3, 2), (100_000, 99_999),
                                            (200, 1), (10**9, 1)])
def test_the_incomplete_flows_line_never_reads_100_percent(measured, done):
    text = cli.incomplete_flows({"measured_flows": measured, "completed_flows": done})
    m = re.fullmatch(r"([\d,]+) of ([\d,]+) measured flows? did not complete "
                     r"\(([\d.]+) % completed\)", text)
    assert m, text
    missing, total, shown = int(m[1].replace(",", "")), int(m[2].replace(",", "")), float(m[3])
    assert (missing, total) == (measured - done, measured)
    assert 0 < shown < 100
    assert shown == pytest.approx(100 * done / measured, rel=0.05)


def test_harness_run_announces_a_long_run_before_it_starts(invoke, monkeypatch):
    from harness.engine import simulation

    monkeypatch.setattr(simulation, "execute",
                        lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    long = invoke("run", "--set", 'run.duration="2min"')
    assert long.exit_code == 130, long.output
    notes = [l for l in long.stderr.splitlines() if l.startswith("note: a long run")]
    assert len(notes) == 1 and "120 s simulated" in notes[0] and "min" in notes[0]
    short = invoke("run", "--set", "run.duration=0.3")
    assert short.exit_code == 130 and "a long run" not in short.stderr


# --------------------------------------------------------------------------
# 5. a link rate given as a bare number


def test_a_tiny_link_rate_names_the_link_not_the_utilisation_interval(invoke):
    r = invoke("check", "--set", "topology.link_rate=10")
    assert r.exit_code == 2 and "utilization_interval" not in r.stderr
    assert r.stderr.startswith("error: topology.link_rate: ")
    ok = invoke("check", "--json", "--set", "topology.link_rate=1e6")  # 1 Mbit/s: the least
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["topology"]["params"]["link_rate"] == 1e6


# --------------------------------------------------------------------------
# 6. --budget in seconds


GRID = """name = "g"
scenario = "default"
[set]
"run.duration" = 0.25
[axes]
"background.load" = [0.05, 0.1]
"""


@pytest.mark.parametrize("budget, seconds", [("60", 60.0), ("90.5", 90.5), ("2h", 7200.0),
                                             ("30min", 1800.0), ("45s", 45.0)])
def test_sweep_budget_takes_seconds_and_units(invoke, monkeypatch, tmp_path, budget, seconds):
    from harness.sweeps import sweeping

    got = {}

    def no_sweep(grid, out, jobs, executor, scheduler, resume, retry_failed, progress,
                 cells=None, max_seeds=None, budget_s=None, reference=None):
        got["budget_s"] = budget_s
        raise KeyboardInterrupt

    monkeypatch.setattr(sweeping, "run_sweep", no_sweep)
    (tmp_path / "g.toml").write_text(GRID)
    r = invoke("sweep", "g.toml", "--budget", budget)
    assert r.exit_code == 130, r.output   # stopped where the cells would start
    assert got["budget_s"] == pytest.approx(seconds)


# --------------------------------------------------------------------------
# 7. harness check: a short summary; --json for the whole resolved scenario


def test_check_prints_a_short_summary_by_default(invoke):
    r = invoke("check", "thesis")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) <= 8, r.stdout
    assert "{" not in r.stdout
    assert lines[0].startswith("scenario 'thesis' is valid") and "cost ~" in lines[0]
    assert any(l.strip().startswith("background:") for l in lines)
    assert any(l.strip().startswith("training:") for l in lines)
    assert "--json" in r.stdout
    full = invoke("check", "thesis", "--json")
    resolved = json.loads(full.stdout)
    flows = resolved["background"]["flows"]
    assert f"{flows} background flows" in lines[0]
    assert resolved["digest"] in lines[0]
    assert "is valid" in full.stderr


def test_check_json_of_a_grid_is_its_cells(invoke, tmp_path):
    (tmp_path / "g.toml").write_text(GRID)
    table = invoke("check", "g.toml")
    r = invoke("check", "g.toml", "--json")
    assert r.exit_code == 0, r.output
    cells = json.loads(r.stdout)
    n = int(re.search(r"grid 'g': (\d+) cells", r.stderr)[1])
    assert len(cells) == n == len(table.stdout.splitlines()) - 2   # header and total
    assert all(c["status"] == "ok" for c in cells)


# --------------------------------------------------------------------------
# 8. shell completion


def _harness_command() -> list[str]:
    exe = shutil.which("harness")
    if exe:
        return [exe]
    return [sys.executable, "-c", "from harness.cli import main; main(prog_name='harness')"]


def _complete(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(_harness_command(), capture_output=True, text=True, cwd=tmp_path,
                          timeout=120, env={**os.environ, **env})


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F _harness_completion"),
                                           ("zsh", "#compdef harness"),
                                           ("fish", "complete --no-files --command harness")])
def test_the_completion_script_comes_from_harness(tmp_path, shell, marker):
    proc = _complete(tmp_path, _HARNESS_COMPLETE=f"{shell}_source")
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout and "_HARNESS_COMPLETE" in proc.stdout
    assert proc.stderr == ""


def test_bash_completes_a_command(tmp_path):
    proc = _complete(tmp_path, COMP_WORDS="harness sw", COMP_CWORD="1",
                     _HARNESS_COMPLETE="bash_complete")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["plain,sweep"]


def _offered(invoke, words: str) -> list[str]:
    r = invoke(env={"_HARNESS_COMPLETE": "bash_complete", "COMP_WORDS": words,
                    "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))})
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


@pytest.mark.parametrize("words, kinds", [("harness run th", ("scenario",)),
                                          ("harness alone two", ("scenario",)),
                                          ("harness sweep q", ("sweep",)),
                                          ("harness check th", ("scenario", "sweep")),
                                          ("harness check ", ("scenario", "sweep"))])
def test_scenario_and_grid_arguments_complete_builtin_names(invoke, words, kinds):
    typed = "" if words.endswith(" ") else words.split()[-1]
    names = {"scenario": catalog.scenario_names(), "sweep": catalog.sweep_names()}
    expected = {n for kind in kinds for n in names[kind] if n.startswith(typed)}
    offered = _offered(invoke, words)
    assert offered[0] == f"file,{typed}"   # no name matching: the shell completes files
    assert {o.split(",", 1)[1] for o in offered[1:]} == expected
    assert all(o.startswith("plain,") for o in offered[1:]) and len(offered) - 1 == len(expected)
    assert expected   # the prefixes above match some built-in
