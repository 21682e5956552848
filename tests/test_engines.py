"""The ns-3 engine (issue 51): the wheel by default, or a user's ns-3.44 build
(DDNN_HARNESS_NS3_BUILD, `harness engine use`): found, checked, keyed and
recorded. The detection tests use empty files laid out as ns-3 lays out a
build; the real-engine tests (marker ns3_build) run on the build that
DDNN_HARNESS_NS3_BUILD names and are skipped where none is set."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.config.errors import ConfigError
from harness.engine import engines, ns3
from harness.engine.pch_key import NS3_LIBRARIES, NS3_MODULES

BUILD = engines.BUILD_ENV
REAL_BUILD = os.environ.get(BUILD, "")


@pytest.fixture(autouse=True)
def _no_choice(tmp_path, monkeypatch):
    """No kept choice and no variable, unless a test sets one."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(BUILD, raising=False)


def fake_library() -> bytes:
    """The header of a shared library for this machine (this Python's own
    ELF identification, e_type 3), and nothing more: what find_build reads."""
    import sys

    own = Path(sys.executable).resolve().read_bytes()[:20]
    return own[:16] + (3).to_bytes(2, "little") + own[18:20] + bytes(44)


def fake_build(root: Path, suffix: str = "-optimized", version: str = "3.44",
               base: str = "", lib: str = "lib") -> Path:
    """Files where ns-3 puts a build's libraries (a library's header only:
    fake_library) and module headers (empty)."""
    out = root / base if base else root
    for m in NS3_LIBRARIES:
        path = out / lib / f"libns{version}-{m}{suffix}.so"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fake_library())
    for m in NS3_MODULES:
        path = out / "include" / "ns3" / f"{m}-module.h"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


# --------------------------------------------------------------------------
# detection


@pytest.mark.parametrize("suffix, profile", [("-optimized", "optimized"), ("", "release")])
def test_a_build_is_found_with_its_profile(tmp_path, suffix, profile):
    engine = engines.find_build(fake_build(tmp_path, suffix))
    assert (engine.kind, engine.version, engine.profile) == ("build", "3.44", profile)
    assert engine.library("internet").name == f"libns3.44-internet{suffix}.so"
    assert engine.describe() == {"kind": "build", "path": str(tmp_path.resolve()),
                                 "version": "3.44", "profile": profile}


def test_optimized_is_chosen_where_both_profiles_are_built(tmp_path):
    fake_build(tmp_path, "")
    fake_build(tmp_path, "-optimized")
    assert engines.find_build(tmp_path).profile == "optimized"


@pytest.mark.parametrize("base, lib", [("build", "lib"), ("", "lib64")])
def test_a_source_tree_built_in_place_and_lib64_are_found(tmp_path, base, lib):
    engine = engines.find_build(fake_build(tmp_path, base=base, lib=lib))
    assert engine.lib_dir == (tmp_path / base / lib).resolve()


def test_the_variable_chooses_the_engine(tmp_path, monkeypatch):
    assert engines.find_engine().is_wheel
    monkeypatch.setenv(BUILD, str(fake_build(tmp_path)))
    assert engines.find_engine().kind == "build"


def test_the_wheel_is_described_as_before(tmp_path):
    wheel = engines.find_engine()
    assert wheel.is_wheel and wheel == engines.wheel()
    assert wheel.describe()["kind"] == "wheel" and wheel.describe()["version"] == "3.44"
    assert engines.fastpath_mismatch(wheel) is None   # the fast path mirrors its headers


# --------------------------------------------------------------------------
# the TCP fast path's gate: ns-3.44's TCP buffer headers, byte for byte


def _with_headers(root: Path, change: bool) -> Path:
    wheel = engines.wheel()
    src = root / "src"
    for header in engines.FASTPATH_HEADERS:
        text = (wheel.include_dir / header).read_bytes()
        source = src / Path(header).name
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(text + (b"// patched\n" if change else b""))
        # ns-3's build folder holds a one-line stub including the source's file
        (root / "include" / header).write_text(f'#include "{source}"\n')
    return root


def test_the_fast_path_accepts_ns3_44s_headers_on_a_build(tmp_path):
    engine = engines.find_build(_with_headers(fake_build(tmp_path), change=False))
    assert engines.fastpath_mismatch(engine) is None


def test_a_patched_tcp_buffer_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(BUILD, str(_with_headers(fake_build(tmp_path), change=True)))
    with pytest.raises(ConfigError, match=f"^{BUILD}: .*tcp-tx-buffer.h is not ns-3.44's"):
        ns3.check_environment()
    monkeypatch.setenv(ns3.STOCK_TCP_ENV, "1")   # its own TcpTxBuffer: no gate
    ns3.check_environment()


# --------------------------------------------------------------------------
# cache keys: the wheel's unchanged, a build's its own


def test_the_wheels_cache_is_where_it_was(tmp_path):
    assert ns3.cache_dir() == ns3.cache_root() / "ns3-3.44"


def test_a_build_has_its_own_cache_and_keys(tmp_path, monkeypatch):
    wheel_key, wheel_dir = ns3.modules_key(), ns3.cache_dir()
    monkeypatch.setenv(BUILD, str(fake_build(tmp_path / "b")))
    build_key, build_dir = ns3.modules_key(), ns3.cache_dir()
    assert build_key != wheel_key and build_dir != wheel_dir
    assert build_dir.name.startswith("ns3-3.44-optimized-")
    # a rebuild (a library changed) is another engine: another key
    lib = engines.find_engine().library("core")
    lib.write_bytes(fake_library() + b"rebuilt")
    assert ns3.modules_key() != build_key and ns3.cache_dir() != build_dir
    monkeypatch.delenv(BUILD)
    assert ns3.modules_key() == wheel_key


# --------------------------------------------------------------------------
# the kept choice (`harness engine use`)


def test_engine_use_keeps_the_choice_and_the_variable_wins(tmp_path, monkeypatch):
    from harness.usecases import engine_choice

    built = fake_build(tmp_path / "b")
    engine_choice.use(str(built))
    kept = engines.settings_file()
    assert json.loads(kept.read_text()) == {"build": str(built.resolve())}
    assert engine_choice.current()[0].kind == "build"
    assert engine_choice.current()[1] == str(kept)
    other = fake_build(tmp_path / "c", "")
    monkeypatch.setenv(BUILD, str(other))
    assert engine_choice.current()[0].profile == "release"
    monkeypatch.delenv(BUILD)
    engine_choice.use("wheel")
    assert engines.find_engine().is_wheel


def test_engine_use_leaves_a_file_it_did_not_write_alone(tmp_path):
    from harness.usecases import engine_choice

    kept = engines.settings_file()
    kept.parent.mkdir(parents=True)
    kept.write_text("mine")
    with pytest.raises(ConfigError, match="left alone"):
        engine_choice.use(str(fake_build(tmp_path / "b")))
    assert kept.read_text() == "mine"
    with pytest.raises(ConfigError, match="not the file"):
        engines.find_engine()


# --------------------------------------------------------------------------
# a sweep runs on one engine


def test_a_sweep_resumed_on_another_engine_is_refused(tmp_path, monkeypatch):
    from harness.sweeps import sweepdir

    wheel = engines.find_engine().describe()
    sweepdir._check_engine(tmp_path, wheel)
    sweepdir._check_engine(tmp_path, None)   # a sweep.json from before: the wheel's
    monkeypatch.setenv(BUILD, str(fake_build(tmp_path / "b")))
    with pytest.raises(sweepdir.SweepError, match="ran on the ns-3 engine wheel 3.44"):
        sweepdir._check_engine(tmp_path, wheel)
    with pytest.raises(sweepdir.SweepError, match="one engine"):
        sweepdir._check_engine(tmp_path, None)
    sweepdir._check_engine(tmp_path, engines.find_engine().describe())


def test_sweep_json_records_the_engine(tmp_path):
    from harness.sweeps import sweepdir
    from harness.sweeps.grid import load_grid

    grid = load_grid("quick")
    record = sweepdir._cells_record(grid, [], set())
    assert record["engine"] == engines.find_engine().describe()


# --------------------------------------------------------------------------
# on a real build (DDNN_HARNESS_NS3_BUILD)

needs_build = pytest.mark.skipif(not REAL_BUILD, reason=f"{BUILD} is not set: no ns-3.44 build "
                                 "to run on (harness engine build SRC makes one)")


@pytest.fixture
def real_build(monkeypatch):
    monkeypatch.setenv(BUILD, REAL_BUILD)
    return engines.find_engine()


@pytest.mark.ns3_build
@needs_build
def test_the_real_build_is_complete_and_takes_the_fast_path(real_build):
    assert real_build.kind == "build" and real_build.version == "3.44"
    assert engines.fastpath_mismatch(real_build) is None
    ns3.check_environment()


@pytest.mark.ns3_build
@needs_build
def test_a_run_on_the_build_gives_the_wheels_tables(tmp_path, real_build):
    from conftest import assert_same_tables, lossy_run

    lossy_run(tmp_path / "build", **{BUILD: REAL_BUILD, "XDG_CONFIG_HOME": str(tmp_path)})
    lossy_run(tmp_path / "wheel", **{BUILD: "", "XDG_CONFIG_HOME": str(tmp_path)})
    assert_same_tables(tmp_path / "wheel", tmp_path / "build")
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text())
    assert manifest["engine"] == real_build.describe()
    assert manifest["tcp_fastpath"]["mode"] == "fast"
    wheel_manifest = json.loads((tmp_path / "wheel" / "manifest.json").read_text())
    assert wheel_manifest["engine"]["kind"] == "wheel"


# --------------------------------------------------------------------------
# the bench's engines table


def test_the_bench_says_why_it_measured_no_build():
    from bench import engines as bench_engines

    assert "DDNN_HARNESS_NS3_BUILD" in bench_engines.engines_table(None, [], 1)["skipped"]


def test_the_native_program_builds_on_the_engine_in_use(tmp_path, monkeypatch):
    from bench import native

    built = fake_build(tmp_path / "b")
    monkeypatch.setenv(BUILD, str(built))
    fast = native._command(tmp_path / "x", tmp_path / "m.so", tmp_path / "tcp.so")
    stock = native._command(tmp_path / "x", tmp_path / "m.so", None)
    lib_dir = engines.find_engine().lib_dir
    assert f"-Wl,-rpath,{lib_dir}" in fast and str(lib_dir / "libns3.44-core-optimized.so") in fast
    assert str(tmp_path / "tcp.so") in fast and "-DDDNN_BENCH_STOCK_TCP" not in fast
    assert str(tmp_path / "tcp.so") not in stock and "-DDDNN_BENCH_STOCK_TCP" in stock


def test_the_python_api_refuses_a_bad_build_before_running(tmp_path, monkeypatch):
    import harness.api as api

    def no_ns3(*args, **kwargs):
        raise AssertionError("ns-3 was started for a bad engine")

    monkeypatch.setattr(ns3, "load", no_ns3)
    monkeypatch.setenv(BUILD, str(fake_build(tmp_path / "b", "-debug")))
    with pytest.raises(ConfigError, match=f"^{BUILD}: .*debug build"):
        api.run(out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------
# harness engine build: what it runs (the build itself: harness engine build SRC)


@pytest.mark.parametrize("profile, native", [("optimized", "ON"), ("release", "OFF")])
def test_the_build_is_configured_with_exactly_the_needed_modules(tmp_path, profile, native):
    from harness.engine import ns3_build

    command = ns3_build.configure_command(tmp_path / "src", tmp_path / "out", profile)
    assert f"-DNS3_NATIVE_OPTIMIZATIONS={native}" in command
    assert "-DNS3_ENABLED_MODULES=" + ";".join(NS3_MODULES) in command
    for off in ("NS3_LOG", "NS3_ASSERT", "NS3_EXAMPLES", "NS3_TESTS", "NS3_PYTHON_BINDINGS"):
        assert f"-D{off}=OFF" in command
    assert f"-DNS3_OUTPUT_DIRECTORY={tmp_path / 'out'}" in command


def test_a_folder_the_build_made_may_be_built_in_again(tmp_path):
    from harness.engine import ns3_build

    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("mine")
    with pytest.raises(ConfigError, match="^--output: .*not empty"):
        ns3_build.check_output(out)
    (out / ns3_build.MARKER).write_text("{}")
    ns3_build.check_output(out)
