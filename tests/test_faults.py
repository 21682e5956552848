"""Output faults: no command changes a file it did not write, and a path
that cannot take the output is refused before anything is simulated or
drawn (exit code 2, one line `error: ...`), never found after it.

Every case hashes every file (and link) under its temporary directory before
and after: a refused command leaves all of it exactly as it was. Read-only
and full file systems are small tmpfs mounts (the tests run as root, where
chmod does not stop a write); where `mount` is not allowed they are skipped
with the reason. ns-3 is replaced by a failure in every refused case: one
that reached the simulator would fail the test. Two cases need real runs,
kept tiny (1 Gbit/s, 0.3 s simulated).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness
from harness import cli
from harness.engine import ns3
from harness.io import outdir
from harness.traffic import profiles
from harness.config.errors import ConfigError, shorten

TINY = ["--set", "run.duration=0.3", "--set", "background.load=0.1"]
LONG = "r" * 250   # fits NAME_MAX (255), its temporary name .NAME.tmp-PID does not

GRID = """name = "g"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
[axes]
"background.load" = [0.05, 0.1]
"""


def _tree(root: Path) -> dict[str, str]:
    """Every entry under root: a file by its hash, a link by its target."""
    out = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(top) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                out[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[key] = "<dir>"
            else:
                out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """`harness ARGS` in-process in tmp_path; returns (result, tree before, tree after)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(outdir.RESULTS_ENV, raising=False)
    runner = CliRunner()
    load = ns3.load

    def no_ns3(*args, **kwargs):
        pytest.fail("ns-3 was started")

    def run(*argv: str, simulate: bool = False):
        monkeypatch.setattr(ns3, "load", load if simulate else no_ns3)
        before = _tree(tmp_path)
        result = runner.invoke(cli.main, list(argv), prog_name="harness")
        return result, before, _tree(tmp_path)

    return run


def refused(invoke, *argv: str, says: tuple[str, ...] = ()) -> str:
    """argv exits 2 with one line `error: ...` containing `says`, and nothing
    under the temporary directory changed (nothing made, nothing touched)."""
    result, before, after = invoke(*argv)
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for text in says:
        assert text in lines[0], (text, lines[0])
    assert result.stdout == "" and "Traceback" not in result.output
    assert after == before
    return lines[0]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """One tiny real run directory (the plots' input)."""
    out = tmp_path_factory.mktemp("run") / "r"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the shortened run's scaled warm-up
        harness.run("default", {"run.duration": 0.3, "background.load": 0.1}, out=out)
    return out


def _fake_run(path: Path) -> Path:
    """What outdir.is_run_dir takes for one of ours (no simulation)."""
    path.mkdir(parents=True)
    for name in ("config.json", "summary.json", "manifest.json", "flows.parquet"):
        (path / name).write_text("old")
    return path


def _mount(where: Path, *options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(["size=1m", *options]),
                               "tmpfs", str(where)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot mount a tmpfs here ({e}): needs root and mount")
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}")


@pytest.fixture
def mounts():
    """mount(dir, read_only=False, fill=False): a 1 MiB tmpfs at dir holding a
    user's file (mine.txt) and a directory of earlier figures (figs/); fill:
    another user's file takes all its space; read_only: remounted read-only.
    Unmounted afterwards."""
    made: list[Path] = []

    def mount(where: Path, read_only: bool = False, fill: bool = False) -> Path:
        _mount(where)
        made.append(where)
        (where / "mine.txt").write_text("the user's\n")
        (where / "figs").mkdir()
        (where / "figs" / "fct-cdf.png").write_bytes(b"an earlier figure")
        if fill:
            fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:  # ENOSPC: full
                pass
            finally:
                os.close(fd)
            assert os.statvfs(where).f_bavail == 0
        if read_only:
            proc = subprocess.run(["mount", "-o", "remount,ro", str(where)],
                                  capture_output=True, text=True, timeout=30)
            if proc.returncode != 0:
                pytest.skip(f"cannot remount a tmpfs read-only: {proc.stderr.strip()}")
        return where

    yield mount
    for where in reversed(made):
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


# --------------------------------------------------------------------------
# a user's files are never overwritten


def test_profile_o_never_replaces_a_users_file(invoke, tmp_path):
    (tmp_path / "mine.csv").write_text("layer,bytes,fp_ms,bp_ms\n0,10,1,1\n")  # valid, but theirs
    refused(invoke, "profile", "--compute-ms", "10", "-o", "mine.csv",
            says=("-o:", "mine.csv", "not written by the harness"))
    (tmp_path / "link.csv").symlink_to("mine.csv")   # through a link: the same file
    refused(invoke, "profile", "--compute-ms", "10", "-o", "link.csv",
            says=("-o:", "mine.csv", "not written by the harness"))


def test_profile_o_replaces_its_own_profile_through_a_link_too(invoke, tmp_path):
    (tmp_path / "mine.txt").write_text("the user's\n")
    result, _, _ = invoke("profile", "--compute-ms", "10", "-o", "p.csv")
    assert result.exit_code == 0, result.output
    assert profiles.is_generated(tmp_path / "p.csv")
    (tmp_path / "link.csv").symlink_to("p.csv")
    result, before, after = invoke("profile", "--compute-ms", "20", "-o", "link.csv")
    assert result.exit_code == 0, result.output
    assert profiles.load_profile(tmp_path / "p.csv").compute_ms == pytest.approx(20, rel=1e-3)
    assert after == {**before, "p.csv": after["p.csv"]}   # the link stays a link
    assert after["p.csv"] != before["p.csv"]


def test_plot_o_never_writes_into_a_users_directory(invoke, tmp_path, run_dir):
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "fct-cdf.png").write_bytes(b"my own figure")   # a name plot writes
    (figs / "notes.tex").write_text("mine")
    says = ("-o:", "did not write", "notes.tex")
    refused(invoke, "plot", str(run_dir), "-o", "figs", says=says)
    (figs / "notes.tex").unlink()
    (figs / "fct-cdf.png").unlink()
    (figs / "fct-cdf.png").symlink_to(tmp_path / "elsewhere.png")   # a link, not a figure
    (tmp_path / "elsewhere.png").write_bytes(b"mine")
    refused(invoke, "plot", str(run_dir), "-o", "figs", says=("-o:", "fct-cdf.png"))


def test_plot_into_run_plots_holding_a_users_file_is_refused(invoke, tmp_path, run_dir):
    import shutil

    mine = shutil.copytree(run_dir, tmp_path / "run")
    (mine / "plots").mkdir()
    (mine / "plots" / "draft.svg").write_text("<svg/>")
    refused(invoke, "plot", "run", says=("DIRECTORY:", "draft.svg"))


def test_plot_replaces_its_own_figures_and_a_two_job_run_stays_ours(invoke, tmp_path, run_dir):
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "job-phases.png").write_bytes(b"old")   # figures of ours, any of them
    (figs / "operating-boundary.pdf").write_bytes(b"old")
    result, before, after = invoke("plot", str(run_dir), "-o", "figs", "--format", "png",
                                   simulate=True)
    assert result.exit_code == 0, result.output
    assert "figs/fct-cdf.png" in after and "figs/fct-cdf.png" not in before
    assert after["figs/job-phases.png"] == before["figs/job-phases.png"]  # not drawn: kept
    # a plotted two-job run directory (job-phases.*) is one of ours: replaced by a new run
    two = _fake_run(tmp_path / "two")
    (two / "plots").mkdir()
    for name in ("job-phases.png", "job-phases.pdf", "training-timeline.png"):
        (two / "plots" / name).write_bytes(b"png")
    assert outdir.is_run_dir(two)
    assert outdir.check_run_dir(two) == two
    (two / "plots" / "notes.txt").write_text("mine")
    assert not outdir.is_run_dir(two)


# --------------------------------------------------------------------------
# symbolic links: followed to an existing target (checked and written
# there, the link kept), refused when dangling


def test_run_o_a_dangling_link_or_loop_is_refused_before_the_run(invoke, tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    refused(invoke, "run", *TINY, "-o", "dangling", says=("-o:", "symbolic link", "nowhere"))
    refused(invoke, "run", *TINY, "-o", "dangling/run", says=("-o:", "symbolic link"))
    (tmp_path / "loop").symlink_to("loop")
    refused(invoke, "run", *TINY, "-o", "loop", says=("-o:", "loops"))
    refused(invoke, "profile", "--compute-ms", "10", "-o", "dangling",
            says=("-o:", "symbolic link"))


def test_run_o_a_link_to_a_user_directory_is_refused(invoke, tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.tex").write_text("mine")
    (tmp_path / "link").symlink_to("theirs")
    refused(invoke, "run", *TINY, "-o", "link", says=("-o:", "theirs", "not a run directory"))


def test_run_o_a_link_to_an_earlier_run_replaces_the_target_and_keeps_the_link(invoke,
                                                                             tmp_path):
    """Was: the link was renamed aside (.NAME.old-PID), a directory put in its
    place, and removing the 'old' link failed after the run (a traceback)."""
    _fake_run(tmp_path / "earlier")
    (tmp_path / "link").symlink_to("earlier")
    (tmp_path / "mine.txt").write_text("the user's\n")
    result, before, after = invoke("run", *TINY, "-o", "link", simulate=True)
    assert result.exit_code == 0, result.output
    assert os.readlink(tmp_path / "link") == "earlier"
    assert outdir.is_run_dir(tmp_path / "earlier")
    assert (tmp_path / "earlier" / "config.json").read_text() != "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier", "link", "mine.txt"]
    assert after["mine.txt"] == before["mine.txt"]


def test_save_to_a_link_to_an_empty_directory_writes_into_it(run_dir, tmp_path):
    """Was: the check passed (an empty directory), the rename onto the link
    failed after the run. Run.save goes through the same check and writer."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to("empty")
    r = harness.load_run(run_dir)
    assert r.save(tmp_path / "link") == (tmp_path / "empty").resolve()
    assert os.readlink(tmp_path / "link") == "empty"
    assert outdir.is_run_dir(tmp_path / "empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "link"]


def test_writers_follow_links_as_the_checks_do(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("x")
    (tmp_path / "l.csv").symlink_to("t.csv")
    assert outdir.check_new_file(tmp_path / "l.csv", "-o", lambda p: True) == target.resolve()
    outdir.write_file(tmp_path / "l.csv", "new")
    assert target.read_text() == "new" and (tmp_path / "l.csv").is_symlink()
    (tmp_path / "d").symlink_to("gone")
    before = _tree(tmp_path)
    with pytest.raises(ConfigError, match="symbolic link"):
        outdir.write_file(tmp_path / "d", "new")
    with pytest.raises(ConfigError, match="symbolic link"):
        outdir.write_dir(tmp_path / "d", lambda tmp: None)
    assert _tree(tmp_path) == before


# --------------------------------------------------------------------------
# names too long for the file system (with the writer's temporary name)


def test_a_name_whose_temporary_name_is_too_long_is_refused_before_the_run(invoke):
    line = refused(invoke, "run", *TINY, "-o", LONG, says=("-o:", "too long", "at most"))
    assert LONG not in line   # the name is shortened in the message
    refused(invoke, "profile", "--compute-ms", "10", "-o", LONG, says=("-o:", "too long"))
    refused(invoke, "run", *TINY, "-o", f"{'d' * 300}/run", says=("-o:", "too long"))


def test_a_long_directory_name_for_figures_is_fine_only_within_name_max(tmp_path):
    outdir.check_figure_dir(tmp_path / LONG)   # no temporary name for the directory itself
    with pytest.raises(ConfigError, match="too long"):
        outdir.check_figure_dir(tmp_path / ("d" * 256))


# --------------------------------------------------------------------------
# read-only and full file systems


def test_a_read_only_file_system_is_refused_before_anything_runs(invoke, tmp_path, mounts,
                                                                 run_dir):
    mounts(tmp_path / "ro", read_only=True)
    says = ("-o:", "Read-only file system")
    refused(invoke, "plot", str(run_dir), "-o", "ro/figs", says=says)   # ours, existing
    refused(invoke, "plot", str(run_dir), "-o", "ro/new", says=says)
    refused(invoke, "run", *TINY, "-o", "ro/run", says=says)
    refused(invoke, "profile", "--compute-ms", "10", "-o", "ro/p.csv", says=says)


def test_a_full_file_system_is_refused_before_anything_runs(invoke, tmp_path, mounts, run_dir):
    mounts(tmp_path / "full", fill=True)
    says = ("-o:", "0 B free", "would take about")
    refused(invoke, "run", *TINY, "-o", "full/run", says=says)
    refused(invoke, "plot", str(run_dir), "-o", "full/figs", says=says)
    refused(invoke, "profile", "--compute-ms", "10", "-o", "full/p.csv", says=says)
    (tmp_path / "g.toml").write_text(GRID)
    refused(invoke, "sweep", "g.toml", "-o", "full/s", says=says)


def test_an_output_larger_than_the_free_space_is_refused(invoke, tmp_path, mounts):
    """An empty 1 MiB file system, and a run whose estimate is larger (the
    thesis scenario: thousands of flows, 10 Gbit/s)."""
    mounts(tmp_path / "small")
    line = refused(invoke, "run", "thesis", "-o", "small/run",
                   says=("-o:", "the run directory would take about", "MB", "free"))
    assert "MB free" in line or "kB free" in line


def test_the_api_checks_before_the_run(tmp_path, monkeypatch, mounts, run_dir):
    """harness.run(out=...) and Run.save go through the same checks."""
    loaded = harness.load_run(run_dir)
    monkeypatch.setattr(ns3, "load", lambda *a, **k: pytest.fail("ns-3 was started"))
    (tmp_path / "dangling").symlink_to("nowhere")
    mounts(tmp_path / "full", fill=True)
    before = _tree(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the shortened run's scaled warm-up
        with pytest.raises(ConfigError, match="^out: .*symbolic link"):
            harness.run("default", {"run.duration": 0.3}, out=tmp_path / "dangling")
        with pytest.raises(ConfigError, match="^out: .*free"):
            harness.run("default", {"run.duration": 0.3}, out=tmp_path / "full" / "r")
    with pytest.raises(ConfigError, match="^out: .*free"):
        loaded.save(tmp_path / "full" / "saved")
    with pytest.raises(ConfigError, match="^out: .*too long"):
        loaded.save(tmp_path / LONG)
    assert _tree(tmp_path) == before


# --------------------------------------------------------------------------
# long values in messages


def test_a_huge_value_is_shortened_in_messages(invoke, tmp_path):
    huge = "x" * 5_000_000
    (tmp_path / "s.toml").write_text(f'base = "default"\nname = ["{huge}"]\n')
    line = refused(invoke, "run", "s.toml", says=("name", "expected a string", "characters"))
    assert len(line) < 300
    (tmp_path / "w.toml").write_text(f'base = "default"\n[background]\nworkload = "{huge}"\n')
    line = refused(invoke, "run", "w.toml", says=("background.workload", "no file"))
    assert len(line) < 400


def test_a_huge_valid_name_is_shortened_where_it_is_echoed(invoke, tmp_path):
    (tmp_path / "s.toml").write_text(f'base = "default"\nname = "{"n" * 1_000_000}"\n'
                                     "[run]\nduration = 0.3\nwarmup = 0.05\ncooldown = 0.05\n")
    result, _, _ = invoke("check", "s.toml")
    assert result.exit_code == 0, result.output
    assert len(result.output) < 3000 and "1,000,000 characters" in result.output


def test_shorten():
    assert shorten("abc") == "'abc'" and shorten(3.5) == "3.5"
    assert shorten("y" * 1000) == "'" + "y" * 79 + "... (1,000 characters)"


# --------------------------------------------------------------------------
# issue 48: every writer through the same checks, auxiliary tables and stdout too


def _frontier_sweep(d: Path) -> Path:
    """A finished sweep with a reference arm, as `harness frontier` reads it."""
    import pandas as pd

    d.mkdir(parents=True, exist_ok=True)
    (d / "sweep.json").write_text('{"grid": "g", "axes": ["seed"], "arms": ["same", "low"], '
                                  '"reference": "same", "cells": []}')
    pd.DataFrame({"cell": ["a", "b"], "arm": ["same", "low"], "status": ["ok", "ok"]}) \
        .to_parquet(d / "summary.parquet", index=False)
    pd.DataFrame({"arm": ["low"] * 3,
                  "metric": ["iteration_time", "fct_small_mean", "fct_large_mean"],
                  "change": [0.0, -0.2, -0.1], "change_low": [-0.01, -0.3, -0.2],
                  "change_high": [0.01, -0.1, 0.0]}).to_parquet(d / "deltas_mean.parquet",
                                                               index=False)
    return d


def test_frontier_never_writes_its_table_through_a_link_to_a_users_file(invoke, tmp_path):
    _frontier_sweep(tmp_path / "s")
    (tmp_path / "mine.parquet").write_bytes(b"the user's")
    (tmp_path / "s" / "frontier.parquet").symlink_to(tmp_path / "mine.parquet")
    refused(invoke, "frontier", "s", "-o", "figs",
            says=("SWEEP_DIR", "frontier.parquet", "not written by the harness"))


def test_frontier_replaces_its_own_table_and_figure(invoke, tmp_path):
    _frontier_sweep(tmp_path / "s")
    for _ in range(2):   # the second time over its own outputs
        result, _, _ = invoke("frontier", "s")
        assert result.exit_code == 0, result.output
    import pandas as pd

    assert "best" in pd.read_parquet(tmp_path / "s" / "frontier.parquet")
    assert (tmp_path / "s" / "plots" / "frontier.png").is_file()


def test_frontier_into_a_read_only_or_full_sweep_directory_is_refused(invoke, tmp_path,
                                                                      mounts):
    for name in ("ro", "full"):
        where = mounts(tmp_path / name)
        _frontier_sweep(where / "s")   # then the file system made read-only, or filled
        if name == "ro":
            proc = subprocess.run(["mount", "-o", "remount,ro", str(where)],
                                  capture_output=True, text=True, timeout=30)
            if proc.returncode != 0:
                pytest.skip(f"cannot remount a tmpfs read-only: {proc.stderr.strip()}")
        else:
            fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:   # ENOSPC: full
                pass
            finally:
                os.close(fd)
        says = ("SWEEP_DIR", "frontier.parquet",
                "Read-only file system" if name == "ro" else "free")
        # -o elsewhere: the table still goes into the sweep directory, checked first
        refused(invoke, "frontier", f"{name}/s", "-o", "figs", says=says)


@pytest.mark.parametrize("argv", [["schema"], ["schema", "--grid"], ["check", "--json"],
                                  ["profile", "--compute-ms", "10"], ["list"]],
                         ids=lambda argv: "-".join(argv))
def test_printing_to_a_full_device_is_one_line(argv, tmp_path):
    """stdout on /dev/full: one line naming stdout, no traceback."""
    import sys

    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "harness.cli", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=120,
                              env={**os.environ,
                                   "PYTHONPATH": str(Path(cli.__file__).parents[1])})
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 2, proc.stderr
    assert len(errors) == 1 and errors[0].startswith("error: stdout: ") \
        and "No space left on device" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------
# issue 65: the engine's outputs (class 6), writes that fail midway (8), two
# writers of one output and what a kill leaves (12)

_SOURCE = {"CMakeLists.txt": "", "VERSION": "3.44\n"}


def _source(root: Path) -> Path:
    src = root / "src"
    src.mkdir()
    for name, text in _SOURCE.items():
        (src / name).write_text(text)
    return src


def test_engine_build_checks_its_output_before_cmake(invoke, tmp_path, mounts, monkeypatch):
    """A read-only or full file system, or a dangling link, for `harness
    engine build -o` is one line naming --output; cmake never starts."""
    from harness.engine import ns3_build

    monkeypatch.setattr(ns3_build, "configure_command",
                        lambda *a, **k: pytest.fail("cmake was started"))
    _source(tmp_path)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "out")
    refused(invoke, "engine", "build", "src", "-o", "dangling", says=("--output", "dangling"))
    mounts(tmp_path / "ro", read_only=True)
    refused(invoke, "engine", "build", "src", "-o", "ro/out",
            says=("--output", "Read-only file system"))
    mounts(tmp_path / "full", fill=True)
    refused(invoke, "engine", "build", "src", "-o", "full/out", says=("--output", "free"))


def test_engine_use_with_a_read_only_settings_folder_is_one_line(invoke, tmp_path, mounts,
                                                                monkeypatch):
    from test_engines import fake_build

    fake_build(tmp_path / "b")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(mounts(tmp_path / "ro", read_only=True)))
    refused(invoke, "engine", "use", "b", says=("XDG_CONFIG_HOME", "Read-only file system"))


def test_an_export_that_fills_the_disk_midway_is_one_line_and_leaves_nothing(
        invoke, tmp_path, mounts, monkeypatch, run_dir):
    """Past its checks (the estimate said it fits), the disk fills while the
    CSVs are written: one line naming the reason, exit 1, and nothing
    half-written beside the user's files."""
    full = mounts(tmp_path / "small")
    monkeypatch.setattr(outdir, "check_space", lambda *a, **k: None)   # an estimate too low
    before = _tree(full)
    filler = full / "filler"
    with open(filler, "wb") as f:   # all but a few kB taken
        try:
            while os.statvfs(full).f_bavail * os.statvfs(full).f_frsize > 8192:
                f.write(b"\0" * 4096)
                f.flush()
        except OSError:
            pass
    result, _, _ = invoke("export", str(run_dir), "-o", "small/out")
    assert result.exit_code == 1, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], result.stderr
    assert "Traceback" not in result.output
    filler.unlink()
    assert _tree(full) == before          # no export, no temporary folder, no lock


def test_two_writers_of_one_output_the_second_is_refused(invoke, tmp_path, run_dir):
    """While a command holds an output (past its checks, writing), a second
    command given the same -o is refused at once, its owner named, and
    nothing of the first's is replaced."""
    from harness.io.lock import OutputLock

    first = OutputLock(tmp_path / "out").acquire()   # another command's
    try:
        refused(invoke, "export", str(run_dir), "-o", "out",
                says=("-o", "being written by another harness command", f"pid {os.getpid()}"))
        refused(invoke, "run", *TINY, "-o", "out", says=("being written by another",))
    finally:
        first.release()
    assert not (tmp_path / ".out.lock").exists()      # its holder removed it


def test_a_killed_export_s_leftover_is_removed_by_the_next_writer(invoke, tmp_path, run_dir):
    leftover = tmp_path / ".out.tmp-4194304"          # a pid above pid_max: gone
    leftover.mkdir()
    (leftover / "flows.csv").write_text("x" * 10_000)
    (tmp_path / ".mine.tmp-4194304").write_text("another output's: not this one's")
    result, _, _ = invoke("export", str(run_dir), "-o", "out")
    assert result.exit_code == 0, result.output
    assert not leftover.exists() and (tmp_path / "out" / "data-dictionary.csv").is_file()
    assert (tmp_path / ".mine.tmp-4194304").exists()
    assert not (tmp_path / ".out.lock").exists()
