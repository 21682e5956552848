"""The sweep directory's lock (harness.io.lock.DirectoryLock) on real
files: made by the harness without following links and never over anything,
rewritten only when it is the harness's own, a user's `.lock` (a file, a
link, a directory, a FIFO) refused by name and left as it was; a directory
holding only a `.lock` is a half-made sweep only when the lock is ours.
(Two sweeps at once and a dead sweep's lock, with real sweeps:
tests/test_sweep_recovery.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli
from harness.io import outdir
from harness.config.errors import OutputError
from harness.io import lock as sweep_lock
from harness.io.lock import LOCK_NAME, DirectoryLock

DEAD_PID = 4_194_305  # above Linux's largest pid: no such process

GRID = """name = "g"
scenario = "default"
[set]
"run.duration" = 0.25
[axes]
"background.load" = [0.05]
"""


def _refused(directory: Path, says: str) -> str:
    with pytest.raises(OutputError) as err:
        DirectoryLock(directory).acquire()
    assert says in str(err.value) and str(directory / LOCK_NAME) in str(err.value)
    return str(err.value)


def test_the_lock_is_made_whole_and_names_its_owner(tmp_path):
    with DirectoryLock(tmp_path):
        owner = json.loads((tmp_path / LOCK_NAME).read_text())
        assert owner["pid"] == os.getpid() and owner["lock"] == sweep_lock.LOCK_MARK["lock"]
        assert sweep_lock.is_lock_file(tmp_path / LOCK_NAME)
        with pytest.raises(OutputError, match=f"in use by a running sweep .pid {os.getpid()}"):
            DirectoryLock(tmp_path).acquire()
    # no temporary name left beside it; the file stays (see DirectoryLock)
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOCK_NAME]


def test_a_dead_sweeps_lock_is_taken_over_an_older_harness_one_too(tmp_path):
    for record in ({"pid": DEAD_PID, "host": "gone", "since": 0},   # before the mark
                   {**sweep_lock.LOCK_MARK, "pid": DEAD_PID, "host": "gone", "since": 0}):
        (tmp_path / LOCK_NAME).write_text(json.dumps(record))
        with DirectoryLock(tmp_path):
            assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("content", [b"mine", b"", b'{"pid": 1}', b"[1, 2]",
                                     b'{"pid": 1, "host": "h", "since": 0, "mine": true}'])
def test_a_users_lock_file_is_refused_and_untouched(tmp_path, content):
    (tmp_path / LOCK_NAME).write_bytes(content)
    _refused(tmp_path, "is not the harness's lock file")
    with pytest.raises(OutputError):
        DirectoryLock.check_free(tmp_path)
    assert (tmp_path / LOCK_NAME).read_bytes() == content
    assert not outdir.is_half_made_sweep(tmp_path)


def test_a_link_named_lock_is_never_followed(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's\n")
    d = tmp_path / "s"
    d.mkdir()
    (d / LOCK_NAME).symlink_to(precious)
    _refused(d, "is a symbolic link")
    assert precious.read_text() == "the user's\n"
    # an earlier lock of ours behind the link: still not followed
    precious.write_text(json.dumps({"pid": DEAD_PID, "host": "gone", "since": 0}))
    _refused(d, "is a symbolic link")
    assert json.loads(precious.read_text())["pid"] == DEAD_PID
    # a dangling one: nothing made where it points
    (d / LOCK_NAME).unlink()
    (d / LOCK_NAME).symlink_to(tmp_path / "nowhere")
    _refused(d, "is a symbolic link")
    assert not (tmp_path / "nowhere").exists()
    assert not outdir.is_half_made_sweep(d)


def test_a_directory_or_fifo_named_lock_is_refused(tmp_path):
    (tmp_path / "d" / LOCK_NAME).mkdir(parents=True)
    _refused(tmp_path / "d", "is a directory")
    assert not outdir.is_half_made_sweep(tmp_path / "d")
    (tmp_path / "f").mkdir()
    os.mkfifo(tmp_path / "f" / LOCK_NAME)
    _refused(tmp_path / "f", "is not a plain file")   # and the open did not hang


def test_only_our_own_lock_makes_a_half_made_sweep(tmp_path):
    with DirectoryLock(tmp_path):
        pass
    (tmp_path / "cells").mkdir()
    assert outdir.is_half_made_sweep(tmp_path)
    (tmp_path / LOCK_NAME).write_text("mine")
    assert not outdir.is_half_made_sweep(tmp_path)


@pytest.fixture
def sweep_cli(tmp_path, monkeypatch):
    """`harness sweep g.toml -o s` in-process; ns-3 must not start."""
    from harness.engine import ns3

    def no_ns3(*args, **kwargs):
        raise AssertionError("ns-3 was started")

    monkeypatch.setattr(ns3, "load", no_ns3)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text(GRID)
    (tmp_path / "s").mkdir()

    def run(*extra: str):
        result = CliRunner().invoke(cli.main, ["sweep", "g.toml", "-o", "s", *extra],
                                    prog_name="harness")
        lines = result.stderr.splitlines()
        assert result.exit_code == 2 and len(lines) == 1, (result.exit_code, result.output)
        assert "Traceback" not in result.output
        return lines[0]

    return run


def test_the_sweep_command_refuses_a_lock_that_is_not_ours(sweep_cli, tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's\n")
    (tmp_path / "s" / LOCK_NAME).symlink_to(precious)
    assert "is a symbolic link" in sweep_cli()
    assert precious.read_text() == "the user's\n"
    (tmp_path / "s" / LOCK_NAME).unlink()
    (tmp_path / "s" / LOCK_NAME).mkdir()
    assert "is a directory" in sweep_cli("--resume")
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [LOCK_NAME]
