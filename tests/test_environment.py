"""The environment variables: one table (harness.config.environment
.VARIABLES), one rule per kind, one page of documentation (issue 48). The
CLI's cases (one line, exit 2, before anything runs):
tests/test_bad_inputs.py (ENV_CASES)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.config import environment
from harness.config.errors import ConfigError
from harness.engine import memory, ns3

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "user-guide" / "environment.md"
#: set by the harness for its own processes, never by a user: the bench's phase
#: marker, and the launcher's start mark (harness.engine.memory.STARTED_ENV)
INTERNAL = {"BENCH_PHASE_MARKER", "DDNN_HARNESS_STARTED"}


@pytest.mark.parametrize("name", list(environment.FLAGS))
def test_every_switch_takes_the_same_words(name):
    default = environment.FLAGS[name]
    assert environment.flag(name, {}) is default
    assert environment.flag(name, {name: ""}) is default
    for word in ("1", "true", "YES", " on "):
        assert environment.flag(name, {name: word}) is True
    for word in ("0", "false", "No", "OFF "):
        assert environment.flag(name, {name: word}) is False
    for word in ("maybe", "2", "of", "-1", "enabled"):
        with pytest.raises(ConfigError, match=rf"^{name}: expected 1 or 0 .*got '{word}'"):
            environment.flag(name, {name: word})


def test_the_readers_use_the_rule(monkeypatch):
    """The switches as their readers see them: 0 is off (it was on for the
    precompiled header's switch), an unknown word refused (it was on for
    the stock-TCP switch)."""
    monkeypatch.setenv(ns3.STOCK_TCP_ENV, "off")
    assert ns3.tcp_fastpath_wanted()
    monkeypatch.setenv(ns3.STOCK_TCP_ENV, "maybe")
    with pytest.raises(ConfigError, match=ns3.STOCK_TCP_ENV):
        ns3.tcp_fastpath_wanted()
    assert memory.huge_pages_wanted({memory.HUGE_PAGES_ENV: "off"}) is False
    with pytest.raises(ConfigError, match=memory.HUGE_PAGES_ENV):
        memory.huge_pages_wanted({memory.HUGE_PAGES_ENV: "of"})
    assert environment.flag(ns3.NO_PCH_ENV, {ns3.NO_PCH_ENV: "0"}) is False


def test_a_directory_variable(tmp_path):
    name = "DDNN_HARNESS_RESULTS"
    assert environment.directory(name, {}) is None
    assert environment.directory(name, {name: str(tmp_path / "new" / "dir")}) == \
        tmp_path / "new" / "dir"
    assert not (tmp_path / "new").exists()   # checked, not made
    (tmp_path / "file").write_text("mine")
    for value, says in ((str(tmp_path / "file"), "a file, not a directory"),
                        (str(tmp_path / "file" / "under"), "which is a file"),
                        ("~no-such-user-48/x", "not a user here"),
                        ("/proc/results", "cannot write in")):
        with pytest.raises(ConfigError, match=f"^{name}: .*{says}"):
            environment.directory(name, {name: value})
    assert (tmp_path / "file").read_text() == "mine"


def test_the_compiler_variable(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-48")
    with pytest.raises(ConfigError, match="^CXX: compiler 'no-such-compiler-48' not found"):
        ns3.check_environment()
    monkeypatch.setenv("CXX", " ")   # blank: the default, g++ (found on this machine)
    assert environment.program("CXX", "g++") == "g++"


def _read_in_code() -> set[str]:
    """Every variable name the harness and the bench read from the environment."""
    names = set()
    pattern = re.compile(r"""(?:environ(?:\.get)?[\[(]|getenv\(|\bflag\(|directory\(|"""
                         r"""program\()\s*["']([A-Z][A-Z0-9_]+)["']""")
    constants = re.compile(r"""^[A-Z_]+_ENV\s*=\s*["']([A-Z][A-Z0-9_]+)["']""", re.M)
    for path in [*(ROOT / "harness").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        text = path.read_text()
        names |= set(pattern.findall(text)) | set(constants.findall(text))
    return names


def test_every_variable_read_is_in_the_table_and_documented():
    table = {v.name for v in environment.VARIABLES}
    read = _read_in_code() - INTERNAL
    assert read <= table, read - table
    assert {"DDNN_HARNESS_RESULTS", "DDNN_HARNESS_CACHE", "DDNN_HARNESS_HUGE_PAGES",
            "DDNN_HARNESS_STOCK_TCP", "DDNN_HARNESS_NO_PCH", "CXX"} <= read
    doc = DOC.read_text()
    for variable in environment.VARIABLES:
        assert f"`{variable.name}`" in doc, variable.name
