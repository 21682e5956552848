"""Build and run bench/native/main.cc: the harness's scenario as a plain C++
ns-3 program, linked against the wheel's libraries and the harness's
compiled ns3-modules library (harness.engine.ns3.build_modules), with the TCP fast
path (harness.engine.ns3.build_tcp_fastpath) linked first, as the harness loads it."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from harness.config import environment
from harness.engine import ns3
from harness.io import outdir

SOURCE = Path(__file__).resolve().parent / "native" / "main.cc"
MARKER_SOURCE = SOURCE.parent / "marker.c"


def _command(output: Path, modules_library: Path, tcp_library: Path | None) -> list[str]:
    """g++ with the flags and include directories build_modules compiles with,
    against the engine in use (the wheel, or DDNN_HARNESS_NS3_BUILD's build).
    The TCP fast path comes first among the libraries, so that it is first in
    the program's symbol scope, and with --no-as-needed: the program calls
    none of its replaced members itself, so --as-needed would drop it. None:
    the engine's own TcpTxBuffer (what an expert's program runs)."""
    wheel = ns3.find_engine()
    fast = [str(tcp_library)] if tcp_library is not None else ["-DDDNN_BENCH_STOCK_TCP"]
    libs = [str(wheel.library(m)) for m in ns3.NS3_LIBRARIES]
    includes = [flag for d in ns3.module_include_dirs() for flag in ("-I", str(d))]
    return [environment.program("CXX", "g++"), *ns3.CXXFLAGS, "-I", str(wheel.include_dir),
            *includes, "-I", str(ns3.TCP_FASTPATH_DIR), str(SOURCE),
            "-o", str(output), "-Wl,--no-as-needed", *fast, str(modules_library),
            *libs, f"-Wl,-rpath,{wheel.lib_dir}", f"-Wl,-rpath,{modules_library.parent}"]


def _cached_build(name: str, key_parts: list[bytes], command) -> Path:
    """Build `name`-<key> in the harness cache unless it is there; command(tmp)
    is the compiler command writing to tmp (renamed into place: atomic)."""
    key = hashlib.sha256(b"\0".join(key_parts)).hexdigest()[:16]
    out_dir = ns3.cache_dir() / "bench"
    target = out_dir / f"{name}-{key}"
    if target.exists():
        return target

    def compile_to(tmp: Path) -> None:
        proc = subprocess.run(command(tmp), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed to build:\n{proc.stderr[-4000:]}")

    return outdir.write_from(target, compile_to)


def build(quiet: bool = True, stock_tcp: bool = False) -> Path:
    """The native binary on the engine in use (compiled once per main.cc and
    libraries); stock_tcp: without the TCP fast path."""
    modules_library = ns3.build_modules(quiet=quiet)
    tcp_library = None if stock_tcp else ns3.build_tcp_fastpath(quiet=quiet)
    return _cached_build("bench-native-stock-tcp" if stock_tcp else "bench-native",
                         [SOURCE.read_bytes(), str(modules_library).encode(),
                          str(tcp_library).encode(), " ".join(ns3.CXXFLAGS).encode()],
                         lambda tmp: _command(tmp, modules_library, tcp_library))


def valgrind_available() -> bool:
    return shutil.which("valgrind") is not None and Path("/usr/include/valgrind/callgrind.h").exists()


def build_marker() -> Path:
    """libbench-marker.so: bench_phase_start/stop for callgrind (marker.c)."""
    cc = environment.program("CC", "gcc")   # the one rule (a missing one: ConfigError)
    return _cached_build("libbench-marker", [MARKER_SOURCE.read_bytes(), cc.encode()],
                         lambda tmp: [cc, "-O2", "-shared", "-fPIC", str(MARKER_SOURCE),
                                      "-o", str(tmp)])


def command(binary: Path, recipe: Path, tables: Path | None = None) -> list[str]:
    cmd = [str(binary), f"--recipe={recipe}"]
    if tables is not None:
        cmd.append(f"--tables={tables}")
    return cmd


def parse_output(stdout: str) -> dict[str, float]:
    """The native program's "key value" lines."""
    out: dict[str, float] = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        if value:
            number = float(value)
            out[key] = int(number) if number.is_integer() else number
    return out
