"""Tests for harness.engine.pch: building, reusing and using the ns-3 Cling PCH.

Building a PCH takes ~5-10 s (rootcling) and is done once per module here.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.engine import pch, pch_key

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy_backend") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(cache_dir, pch path, seconds to build) for the default header list."""
    cache = tmp_path_factory.mktemp("pch-cache")
    had_cppyy = "cppyy" in sys.modules
    t0 = time.monotonic()
    path = pch.ensure_pch(cache, pch_key.default_include_dir(), pch_key.NS3_HEADERS)
    elapsed = time.monotonic() - t0
    assert path is not None, _failure_log(cache)
    # building happens in subprocesses: this process must not have imported cppyy
    assert ("cppyy" in sys.modules) == had_cppyy
    return cache, path, elapsed


def _pch_path(cache: Path, headers=pch_key.NS3_HEADERS, extra_include_dirs=()) -> Path:
    """Where ensure_pch keeps the PCH of the wheel's headers (by default
    NS3_HEADERS): pch_key.pch_file of their key_info."""
    info = pch_key.key_info(pch_key.default_include_dir(), list(headers), extra_include_dirs)
    return pch_key.pch_file(cache, info)


def _failure_log(cache: Path) -> str:
    logs = [p.read_text()[-3000:] for p in cache.glob("*.failed")]
    return "\n".join(logs) or "no .failed log"


def _clean_env() -> dict:
    env = os.environ.copy()
    for var in ("CLING_STANDARD_PCH", "CLING_REBUILD_PCH"):
        env.pop(var, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_build_creates_validated_pch(built):
    cache, path, _ = built
    assert path == _pch_path(cache)
    assert path.parent == cache and path.name.startswith("ns3-") and path.suffix == ".pch"
    assert path.is_file() and path.stat().st_size > 10_000_000
    assert pch.is_valid(path)
    # no temporary build directories left behind
    assert not [p for p in cache.iterdir() if ".build-" in p.name]
    assert not list(cache.glob("*.failed"))


def test_second_call_reuses_without_rebuilding(built):
    cache, path, _ = built
    mtime = path.stat().st_mtime_ns
    t0 = time.monotonic()
    again = pch.ensure_pch(cache, pch_key.default_include_dir(), pch_key.NS3_HEADERS, quiet=False)
    assert again == path
    assert path.stat().st_mtime_ns == mtime
    assert time.monotonic() - t0 < 2.0


def test_subprocess_with_pch_loads_modules(built):
    _, path, _ = built
    script = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from harness.engine import pch, pch_key
        pch.activate(Path(sys.argv[1]))
        import cppyy, libcppyy
        libcppyy.AddSmartPtrType("Ptr")
        for lib in pch_key.default_library_paths():
            cppyy.load_library(str(lib))
        # declared by the PCH before any include: proves it is in use
        assert hasattr(cppyy.gbl, "ns3")
        cppyy.add_include_path(str(pch_key.default_include_dir()))
        t = time.monotonic()
        for h in pch_key.NS3_HEADERS:
            cppyy.include(h)
        inc = time.monotonic() - t
        ns3 = cppyy.gbl.ns3
        nodes = ns3.NodeContainer()
        nodes.Create(2)
        assert nodes.GetN() == 2
        ns3.Simulator.Stop(ns3.Seconds(1.0))
        ns3.Simulator.Run()
        ns3.Simulator.Destroy()
        print("LOADED", inc)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        env=_clean_env(),
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LOADED" in proc.stdout
    assert "materialize" not in (proc.stdout + proc.stderr).lower()
    include_seconds = float(proc.stdout.split("LOADED")[1].split()[0])
    assert include_seconds < 0.5  # ~1.1 s without the PCH, ~0.01 s with it


def test_truncated_pch_is_rejected_and_rebuilt(built, tmp_path):
    cache, path, _ = built
    other = tmp_path / "cache"
    other.mkdir()
    copy = other / path.name
    shutil.copy(path, copy)
    shutil.copy(path.with_name(path.name + ".stamp"), other / (path.name + ".stamp"))
    assert pch.is_valid(copy)
    with open(copy, "r+b") as f:
        f.truncate(copy.stat().st_size // 2)
    assert not pch.is_valid(copy)
    with pytest.raises(ValueError):
        pch.activate(copy)
    rebuilt = pch.ensure_pch(other, pch_key.default_include_dir(), pch_key.NS3_HEADERS)
    assert rebuilt == copy and pch.is_valid(copy)


def test_activate_sets_env(built, monkeypatch):
    _, path, _ = built
    monkeypatch.delenv("CLING_STANDARD_PCH", raising=False)
    monkeypatch.delenv("CLING_REBUILD_PCH", raising=False)
    if "cppyy" in sys.modules:
        pytest.skip("cppyy already imported in this process")
    pch.activate(path)
    assert os.environ["CLING_STANDARD_PCH"] == str(path.resolve())
    assert os.environ["CLING_REBUILD_PCH"] == "0"


def test_activate_missing_raises(tmp_path):
    with pytest.raises(ValueError):
        pch.activate(tmp_path / "nope.pch")


def test_build_failure_returns_none(tmp_path, capfd):
    headers = pch_key.NS3_HEADERS[:1] + ["ns3/no-such-header-for-test.h"]
    got = pch.ensure_pch(tmp_path, pch_key.default_include_dir(), headers, quiet=False)
    assert got is None
    err = capfd.readouterr().err
    assert "building ns-3 precompiled header" in err
    assert "failed" in err
    assert not list(tmp_path.glob("*.pch"))
    assert list(tmp_path.glob("*.failed"))
    # the failure is remembered: no second attempt (and no output) right away
    t0 = time.monotonic()
    assert pch.ensure_pch(tmp_path, pch_key.default_include_dir(), headers, quiet=False) is None
    assert time.monotonic() - t0 < 1.0
    assert capfd.readouterr().err == ""


def test_unusable_cache_dir_returns_none(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert pch.ensure_pch(blocker / "cache", pch_key.default_include_dir(), pch_key.NS3_HEADERS) is None


def test_key_depends_on_headers_and_flags(tmp_path, monkeypatch):
    monkeypatch.delenv("EXTRA_CLING_ARGS", raising=False)
    base = _pch_path(tmp_path)
    assert base == _pch_path(tmp_path)
    assert _pch_path(tmp_path, headers=pch_key.NS3_HEADERS[:2]) != base
    monkeypatch.setenv("EXTRA_CLING_ARGS", "-O1")
    assert _pch_path(tmp_path) != base


def test_default_library_paths_match_module_names():
    libs = pch_key.default_library_paths()
    names = [p.name for p in libs]
    assert len(libs) == len(pch_key.NS3_LIBRARIES)
    for m, name in zip(pch_key.NS3_LIBRARIES, names):
        assert name.endswith(f"-{m}.so")
    assert all(p.is_file() for p in libs)


def test_key_follows_the_content_of_extra_include_dirs(tmp_path):
    ours = tmp_path / "ours"
    ours.mkdir()
    header = ours / "mine.h"
    header.write_text("int f();\n")
    cache = tmp_path / "cache"
    first = _pch_path(cache, extra_include_dirs=[ours])
    assert first != _pch_path(cache)
    os.utime(header, ns=(1, 1))          # a fresh clone: same content, new mtime
    assert _pch_path(cache, extra_include_dirs=[ours]) == first
    header.write_text("int f();\nint g();\n")
    assert _pch_path(cache, extra_include_dirs=[ours]) != first


def test_prune_keeps_the_newest_pchs(tmp_path):
    paths = []
    for i in range(5):
        p = tmp_path / f"ns3-{i:016x}.pch"
        p.write_bytes(b"x")
        pch._stamp_path(p).write_text("{}")
        os.utime(p, (1000 + i, 1000 + i))
        paths.append(p)
    current = paths[0]                   # just validated, whatever its mtime
    pch._prune(tmp_path, current, keep=3)
    left = sorted(p.name for p in tmp_path.glob("ns3-*.pch"))
    assert left == sorted(p.name for p in (paths[0], paths[3], paths[4]))
    assert not pch._stamp_path(paths[1]).exists()
