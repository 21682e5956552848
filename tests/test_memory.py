"""The heap on huge pages (harness.engine.memory): the tunable glibc is
given, and a real `harness run` with and without it writes the same tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.config.errors import ConfigError
from harness.engine import memory

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tunable")


@linux_only
def test_the_tunable_is_added_to_what_the_user_set():
    assert memory.environment({})["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    env = memory.environment({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2", "HOME": "/h"})
    assert env == {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1",
                   "HOME": "/h"}


@pytest.mark.parametrize("env", [{"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=2:x=1"},
                                 {"DDNN_HARNESS_HUGE_PAGES": "0"},
                                 {"DDNN_HARNESS_HUGE_PAGES": " Off "}])
def test_a_users_choice_is_left_as_it_is(env):
    assert memory.environment(env) == env


def test_a_bad_switch_names_the_variable_and_the_values():
    with pytest.raises(ConfigError, match=r"DDNN_HARNESS_HUGE_PAGES: expected 1 or 0 .*'maybe'"):
        memory.environment({"DDNN_HARNESS_HUGE_PAGES": "maybe"})


def _run(out: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """`harness run` in a fresh process (python -m harness.cli: the entry that
    re-executes itself), a short default scenario."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("GLIBC_TUNABLES", memory.HUGE_PAGES_ENV)}
    return subprocess.run([sys.executable, "-m", "harness.cli", "run", "--set", "run.duration=0.05",
                           "--no-progress", "-o", str(out)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600,
                          env={**clean, "PYTHONPATH": str(Path(cli.__file__).parents[1]), **env})


@linux_only
def test_harness_runs_on_huge_pages_and_writes_the_same_tables(tmp_path):
    on, off = tmp_path / "on", tmp_path / "off"
    for out, env in ((on, {}), (off, {memory.HUGE_PAGES_ENV: "0"})):
        proc = _run(out, tmp_path, **env)
        assert proc.returncode == 0, proc.stderr
    assert json.loads((on / "manifest.json").read_text())["heap_huge_pages"] is True
    assert json.loads((off / "manifest.json").read_text())["heap_huge_pages"] is False
    for table in ("flows.parquet", "queues.parquet", "utilization.parquet", "summary.json"):
        assert (on / table).read_bytes() == (off / table).read_bytes(), table

