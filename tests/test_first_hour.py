"""A new user's first hour (issue 46): a window that cannot measure is refused,
Ctrl-C's --resume command repeats the options given, the small courtesies of
the console, and the compiled code's cache keys."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from harness import cli

SHORT = ["--set", "scale=10", "--set", "run.duration=0.6", "--set", "run.warmup=0.1",
         "--set", "run.cooldown=0.1"]


# --------------------------------------------------------------------------
# a window shorter than one no-contention iteration


def test_a_short_window_is_refused_and_allow_short_forces_it():
    import harness
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan, short_window

    runner = CliRunner()
    refused = runner.invoke(cli.main, ["run", "thesis", *SHORT], prog_name="harness")
    assert refused.exit_code == 2 and "--allow-short" in refused.stderr
    checked = runner.invoke(cli.main, ["check", "thesis", *SHORT, "--allow-short"],
                            prog_name="harness")
    assert checked.exit_code == 0 and "is valid" in checked.stdout
    with pytest.raises(harness.ConfigError, match="run.duration: .*allow_short=True"):
        harness.run("thesis", {"scale": 10, "run.duration": 0.6, "run.warmup": 0.1,
                               "run.cooldown": 0.1})
    # the bound: one iteration (567 ms) fits in 0.1 + 0.1 + 0.568 s, not in 0.767 s
    fits = plan(load_scenario("thesis", ["scale=10", "run.duration=0.768", "run.warmup=0.1",
                                         "run.cooldown=0.1"], []))
    short = plan(load_scenario("thesis", ["scale=10", "run.duration=0.76", "run.warmup=0.1",
                                          "run.cooldown=0.1"], []))
    assert short_window(fits) is None and short_window(short) is not None
    # run.min_iterations lengthens the run to measure them: never short
    target = plan(load_scenario("thesis", [*SHORT[1::2], "run.min_iterations=2"], []))
    assert short_window(target) is None and target.run.duration > 0.6


def test_a_later_job_start_shortens_its_window(tmp_path):
    """Each job's window starts at its start: job b starting 1 ms before the
    window ends cannot measure, and is named."""
    from harness.config.paths import SCENARIOS_DIR
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan, short_window

    text = (SCENARIOS_DIR / "two-jobs.toml").read_text()
    assert short_window(plan(load_scenario("two-jobs", [], []))) is None
    late = tmp_path / "late.toml"
    late.write_text(text.replace('name = "b"', 'name = "b"\nstart = 0.949'))
    problem = short_window(plan(load_scenario(str(late), [], [])))
    assert problem is not None and "job 'b' [0.949, 0.95] s" in str(problem), problem


# --------------------------------------------------------------------------
# Ctrl-C: the printed --resume command repeats every option given

ADAPTIVE_GRID = """
name = "tiny-resume"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
"run.warmup" = 0.05
"run.cooldown" = 0.05
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 4
"training.ratio" = 2
[axes]
"background.load" = [0.05, 0.1]
seed = [1]
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
"""


def test_ctrl_c_prints_a_resume_command_with_every_option_given(tmp_path):
    """A real SIGINT to the sweep's process group; the printed command, run
    as printed, continues with the same options (-j 1: one cell at a time)."""
    from harness.traffic import profiles

    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), tmp_path / "m.csv")
    grid = tmp_path / "g.toml"
    grid.write_text(ADAPTIVE_GRID.format(model=tmp_path / "m.csv"))
    out = tmp_path / "out"
    given = ["-j", "1", "--max-seeds", "2", "--budget", "10min", "--no-progress"]
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", str(grid), "-o",
                             str(out), *given], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while time.time() < deadline and not list((out / "cells").glob("[0-9a-f]*")):
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    line = next(x for x in err.splitlines() if "continue with: " in x)
    command = shlex.split(line.split("continue with: ", 1)[1])
    assert command[:6] == ["harness", "sweep", str(grid), "-o", str(out), "--resume"]
    assert command[6:] == ["--jobs", "1", "--max-seeds", "2", "--budget", "10min",
                           "--no-progress"]
    resumed = subprocess.run([sys.executable, "-m", "harness.cli", *command[1:]],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "1 at a time on local" in resumed.stderr
    assert "adaptive" in resumed.stderr or "seeds" in resumed.stderr


def test_the_resume_command_leaves_defaults_out_and_quotes_values(tmp_path, monkeypatch):
    """Without options: only -o and --resume; a value with a space is quoted;
    a flag given at its default value is still repeated."""
    from harness.sweeps import sweeping

    def interrupted(grid, out, *args, **kwargs):
        out.mkdir(parents=True, exist_ok=True)
        (out / "sweep.json").write_text("{}")
        raise KeyboardInterrupt

    grid = tmp_path / "my grid.toml"
    grid.write_text('name = "g"\nscenario = "default"\n[set]\n"run.duration" = 0.25\n'
                    '[axes]\n"background.load" = [0.05]\n')
    monkeypatch.setattr(sweeping, "run_sweep", interrupted)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for argv, tail in ((["-o", "a b"], ""),
                       (["-o", "c", "--executor", "local", "--progress"],
                        " --executor local --progress")):
        result = runner.invoke(cli.main, ["sweep", str(grid), *argv], prog_name="harness")
        assert result.exit_code == 130, result.output
        expected = (f"continue with: harness sweep {shlex.quote(str(grid))} -o "
                    f"{shlex.quote(str(tmp_path / argv[1]))} --resume{tail}")
        assert result.stderr.rstrip().endswith(expected), result.stderr


# --------------------------------------------------------------------------
# one compile per machine: the cache keys name no environment's path


def test_the_wheel_identity_is_its_content_not_its_place(monkeypatch):
    import importlib.metadata

    from harness.engine import pch_key

    record = ("ns3/include/ns3/nstime.h,sha256=abc,10\nns3/__pycache__/x.pyc,,\n"
              "ns3-3.44.post0.dist-info/INSTALLER,sha256=def,4\n")

    class Dist:
        def __init__(self, where, text):
            self.where, self.text, self.version = where, text, "3.44.post0"

        def read_text(self, name):
            return self.text if name == "RECORD" else None

    def identity(dist):
        monkeypatch.setattr(importlib.metadata, "distribution", lambda name: dist)
        pch_key.wheel_identity.cache_clear()
        return pch_key.wheel_identity()

    try:
        a = identity(Dist("/venv-a", record))
        assert a == identity(Dist("/elsewhere/venv-b", record))
        # pip's own records (INSTALLER, compiled .pyc without hash) do not count
        assert a == identity(Dist("/c", record.replace("sha256=def", "sha256=xyz")))
        assert a != identity(Dist("/d", record.replace("sha256=abc", "sha256=abd")))
    finally:
        pch_key.wheel_identity.cache_clear()


def test_the_pch_key_holds_no_path_of_the_environment_or_checkout(tmp_path):
    import json
    import shutil

    from harness.engine import engines, ns3, pch_key

    wheel = engines.wheel()
    headers = [*pch_key.NS3_HEADERS, *ns3.loaded_headers()]
    info = pch_key.key_info(wheel.include_dir, headers, ns3.module_include_dirs())
    text = json.dumps(info)
    assert str(wheel.include_dir) not in text and str(ns3.MODULES_DIR) not in text
    assert info["ns3_wheel"] == pch_key.wheel_identity()
    # our headers by content: two copies of the same folders, one key
    copies = []
    for name in ("one", "two"):
        shutil.copytree(ns3.MODULES_DIR, tmp_path / name / "ns3-modules")
        copies.append(pch_key.pch_file(tmp_path, pch_key.key_info(
            wheel.include_dir, headers,
            ns3.module_include_dirs(tmp_path / name / "ns3-modules"))))
    assert copies[0] == copies[1] == pch_key.pch_file(tmp_path, info)


def test_a_second_environment_links_the_shared_objects_and_compiles_nothing(tmp_path,
                                                                            monkeypatch):
    """The objects are compiled once per key; another environment (another
    run path to its wheel) links them into its own library, no compiler run."""
    from harness.engine import ns3

    src = tmp_path / "src"
    src.mkdir()
    (src / "tiny.cc").write_text('#include "ns3/nstime.h"\nint tiny() { return 1; }\n')
    out = tmp_path / "out"
    key = ns3.modules_key(src)
    first = ns3.build_modules(src, out, quiet=True)
    assert first.name == f"libddnn-{key}-{ns3._environment_tag()}.so"
    assert (out / f"libddnn-{key}.objects" / "tiny.o").is_file()

    def no_compiler(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(ns3, "_compile", no_compiler)
    monkeypatch.setattr(ns3, "_environment_tag", lambda: "0therenv")
    assert ns3.modules_key(src) == key          # the key names no environment
    second = ns3.build_modules(src, out, quiet=True)
    assert second.name == f"libddnn-{key}-0therenv.so" and second.is_file() and first.is_file()


# --------------------------------------------------------------------------
# small courtesies


def test_the_console_summary_names_every_job_with_its_iterations(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "two-jobs", "--set",
                           "run.duration=0.5", "-o", str(tmp_path / "r"), "--no-progress"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    jobs = json.loads((tmp_path / "r" / "summary.json").read_text())["jobs"]
    lines = [x for x in proc.stdout.splitlines() if x.startswith("training")]
    assert len(lines) == len(jobs) == 2, proc.stdout
    for line, job in zip(lines, jobs):
        assert line.startswith(f"training {job['name']} (ring, fifo): "
                               f"{job['distinct_iterations']} iterations "
                               f"({job['iterations']} worker-iterations) in the window"), line
        # two workers a job: each iteration one row per worker that measured it
        assert job["distinct_iterations"] <= job["iterations"] <= 2 * job["distinct_iterations"]
        assert f"{job['slowdown_vs_ideal']:.2f}x its no-contention iteration" in line


def test_list_long_and_list_name_print_whole_descriptions():
    from harness.catalog import _first_sentence
    from harness.config.paths import SCENARIOS_DIR

    runner = CliRunner()
    short = runner.invoke(cli.main, ["list"], prog_name="harness").stdout
    whole = _first_sentence(SCENARIOS_DIR / "thesis.toml", whole=True)
    assert len(whole) > 110 and whole not in short
    named = runner.invoke(cli.main, ["list", "thesis"], prog_name="harness")
    assert named.exit_code == 0 and "scenarios (" in named.stdout and "sweeps (" in named.stdout
    assert " ".join(named.stdout.split()).count("Arms: this file (both)") == 1
    assert "default" not in named.stdout.split()
    long = runner.invoke(cli.main, ["list", "--long"], prog_name="harness").stdout
    assert "Arms: this file (both), thesis-training-alone" in " ".join(long.split())
    unknown = runner.invoke(cli.main, ["list", "thesys"], prog_name="harness")
    assert unknown.exit_code == 2 and "did you mean 'thesis'?" in unknown.stderr


def test_an_unknown_key_is_told_the_nearest_one():
    runner = CliRunner()
    for argv, says in ((["check", "--set", "run.duraton=1"], "did you mean 'duration'?"),
                       (["check", "--set", "bakground.load=0.1"], "did you mean 'background'?"),
                       (["check", "--set", "topology.hostz=3"], "did you mean 'hosts'?")):
        result = runner.invoke(cli.main, argv, prog_name="harness")
        assert result.exit_code == 2 and says in result.stderr, result.stderr
    far = runner.invoke(cli.main, ["check", "--set", "zzz=1"], prog_name="harness")
    assert far.exit_code == 2 and "did you mean" not in far.stderr


def test_a_file_with_several_errors_reports_each_on_a_line(tmp_path):
    import harness

    bad = tmp_path / "s.toml"
    bad.write_text('[run]\nduraton = 1\nwarmup = "x"\n[background]\nload = -3\n')
    result = CliRunner().invoke(cli.main, ["run", str(bad)], prog_name="harness")
    assert result.exit_code == 2 and result.stdout == ""
    from harness.config.schema.run import RunConfig

    allowed = ", ".join(sorted(RunConfig.model_fields))   # the schema's keys, whatever they are
    assert "duration" in allowed and "warmup" in allowed
    assert result.stderr.splitlines() == [
        f"error: run.duraton: unknown key (did you mean 'duration'?); allowed: {allowed}",
        "error: run.warmup: cannot read 'x'; use e.g. \"10us\", \"2ms\", \"1s\", \"5min\", "
        "\"2h\" or a number in seconds (units: s, ms, us, ns, min, h)",
        "error: background.load: must be > 0 (got -3)"]
    with pytest.raises(harness.ConfigError) as err:
        harness.check(str(bad))
    assert str(err.value).startswith("run.duraton") and len(err.value.more) == 2


# --------------------------------------------------------------------------
# the README's install block, the docs in the install


def test_the_readme_install_block_makes_a_venv_and_ci_runs_it():
    from pathlib import Path

    root = Path(cli.__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8").splitlines()
    at = [i for i, line in enumerate(readme) if "<!-- install-command:" in line]
    assert len(at) == 1 and readme[at[0] + 1] == "```sh"
    block = readme[at[0] + 2:readme.index("```", at[0] + 2)]
    assert block == ['python3 -m venv .venv && . .venv/bin/activate && '
                     'python -m pip install -e ".[test]"', "harness run"]
    ci = (root / ".ci" / "run").read_text()
    assert "bash .ci/readme-install" in ci and "env -i" in (root / ".ci" / "readme-install") \
        .read_text()
    assert {"/dist/", "/.venv/"} <= set((root / ".gitignore").read_text().split())


def test_every_docs_page_the_code_names_exists_and_is_shipped():
    """Messages and descriptions name docs/... pages: each exists, and
    pyproject ships its folder in the wheel (harness docs finds it there)."""
    import re
    import tomllib
    from pathlib import Path

    root = Path(cli.__file__).resolve().parents[1]
    named = set()
    for folder in ("harness", "workloads", "topologies"):
        for path in (root / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".toml", ".j2"):
                named |= set(re.findall(r"docs/([\w./-]+\.(?:md|json|png))",
                                        path.read_text(encoding="utf-8", errors="replace")))
    assert named
    missing = sorted(n for n in named if not (root / "docs" / n).is_file())
    assert not missing, missing
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert data["package-dir"]["harness.docs"] == "docs"
    shipped = {p.removeprefix("harness.docs.") for p in data["packages"]
               if p.startswith("harness.docs.")} | {"user-guide"}
    for page in named:
        folder = page.split("/")[0] if "/" in page else ""
        assert folder in shipped or not folder, page
    runner = CliRunner()
    found = runner.invoke(cli.main, ["docs", "performance/sweep-cost"], prog_name="harness")
    assert found.exit_code == 0 and Path(found.stdout.strip()).is_file()
    assert runner.invoke(cli.main, ["docs", "docs/performance/sweep-cost.md"],
                         prog_name="harness").stdout == found.stdout
    wrong = runner.invoke(cli.main, ["docs", "sweep-cots"], prog_name="harness")
    assert wrong.exit_code == 2 and "did you mean 'sweep-cost'?" in wrong.stderr
    # a name two pages have: both named, not the name itself suggested back
    both = runner.invoke(cli.main, ["docs", "services"], prog_name="harness")
    assert both.exit_code == 2 and "did you mean" not in both.stderr
    assert "give one of findings/services, user-guide/services" in both.stderr


def test_prune_never_deletes_a_recent_pch(tmp_path):
    """A PCH built in the last hours may be a running sweep's: kept, however many."""
    from harness.engine import pch

    paths = []
    for i in range(5):
        p = tmp_path / f"ns3-{i:016x}.pch"
        p.write_bytes(b"x")
        pch._stamp_path(p).write_text("{}")
        paths.append(p)
    os.utime(paths[0], (1000, 1000))          # one old one: pruned
    pch._prune(tmp_path, paths[-1])
    assert [p.exists() for p in paths] == [False, True, True, True, True]


def test_sigterm_stops_a_sweep_as_ctrl_c_and_resume_counts_what_is_done(tmp_path):
    """SIGTERM (as `timeout` and batch systems stop a job) to the sweep's
    process group: the finished cells' tables are written and the resume
    command printed (exit 130, as Ctrl-C); the resumed sweep says how many
    cells are done and how many it runs, and its log has no bar."""
    from harness.traffic import profiles

    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), tmp_path / "m.csv")
    grid = tmp_path / "g.toml"
    grid.write_text(ADAPTIVE_GRID.format(model=tmp_path / "m.csv"))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", str(grid), "-o",
                             str(out), "-j", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and not list((out / "cells").glob("*/summary.json")):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "tables of the finished cells written" in err
    done = len(list((out / "cells").glob("*/summary.json")))
    assert done >= 1 and (out / "summary.parquet").exists()
    line = next(x for x in err.splitlines() if "continue with: " in x)
    command = shlex.split(line.split("continue with: ", 1)[1])
    resumed = subprocess.run([sys.executable, "-m", "harness.cli", *command[1:]],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"; {done} done, {4 - done} to run; " in resumed.stderr
    assert "\r" not in resumed.stderr   # no terminal: no progress bar in the log


def test_progress_lines_count_and_estimate():
    """The log's line: counts, what failed, elapsed and an ETA from the rate so far."""
    import io

    from harness.io.progress import ProgressLines

    log = io.StringIO()
    lines = ProgressLines("sweep g", 4, "cells done", every=0.0, file=log,
                          postfix=lambda: "0 failed")
    lines.tick()
    lines.update(1)
    lines.tick()
    first, second = log.getvalue().splitlines()
    assert first.startswith("sweep g: 0/4 cells done, 0 failed [") and "ETA unknown" in first
    assert second.startswith("sweep g: 1/4 cells done, 0 failed [") and "ETA unknown" not in second


def test_list_long_keeps_a_comment_s_list_lines_and_no_issue_numbers():
    """A file comment's indented lines (a table of arms) stay lines of their
    own under --long, where they ran together; no description points at the
    project's issues."""
    runner = CliRunner()
    long = runner.invoke(cli.main, ["list", "--long"], prog_name="harness").stdout
    lines = long.splitlines()
    assert any(line.split() == ["fairshare-drr", "training", "low", "under", "weighted", "DRR,",
                                "high", "3", ":", "low", "1"] for line in lines)
    assert not re.search(r"\bissue \d+", long)
