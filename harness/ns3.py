"""Loading ns-3 and our own C++ code (ns3-modules/) into this process.

`from ns import ns` would include every ns-3 module header (wifi, lte, ...):
20+ s and ~600 MiB per process. A wired data-center run needs only the
modules below, loaded through cppyy directly. Our C++ sources are compiled
once into a shared library, cached under a key made of the sources, the
compiler flags and the ns-3 version, and loaded with `cppyy.load_library`.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness import pch
from harness.pch import NS3_HEADERS, NS3_LIBRARIES  # one list for the PCH and the load

MODULES_DIR = Path(__file__).resolve().parent.parent / "ns3-modules"
UMBRELLA_HEADER = "ddnn-modules.h"
CXXFLAGS = ("-std=c++20", "-O2", "-fPIC", "-DNDEBUG")


class Ns3LoadError(RuntimeError):
    """ns-3 or our C++ modules could not be found, built or loaded."""


@dataclass(frozen=True)
class Wheel:
    """Where the `ns3` wheel keeps its headers and libraries."""

    version: str        # e.g. "3.44"
    include_dir: Path
    lib_dir: Path

    def library(self, module: str) -> Path:
        return self.lib_dir / f"libns{self.version}-{module}.so"


@functools.cache
def find_wheel() -> Wheel:
    try:
        dist = importlib.metadata.distribution("ns3")
    except importlib.metadata.PackageNotFoundError:
        raise Ns3LoadError("the 'ns3' package is not installed: pip install 'ns3>=3.44,<3.45'")
    root = Path(dist.locate_file("ns3"))
    lib_dir = root / "lib64" if (root / "lib64").is_dir() else root / "lib"
    cores = sorted(lib_dir.glob("libns*-core.so"))
    if not cores:
        raise Ns3LoadError(f"no libns*-core.so under {lib_dir}: is the ns3 wheel complete?")
    version = re.match(r"libns(.+)-core\.so", cores[0].name).group(1)
    return Wheel(version=version, include_dir=root / "include", lib_dir=lib_dir)


def cache_root() -> Path:
    """Per-user cache (override with DDNN_HARNESS_CACHE)."""
    env = os.environ.get("DDNN_HARNESS_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ddnn-harness"


def cache_dir() -> Path:
    """Cache directory of this ns-3 version (PCH, compiled modules)."""
    return cache_root() / f"ns3-{find_wheel().version}"


# --------------------------------------------------------------------------
# ns3-modules/: compiled once, cached by content


class ModuleBuildError(Ns3LoadError):
    """A compiler error in ns3-modules/, with the compiler's own message."""


def module_sources(src_dir: Path = MODULES_DIR) -> list[Path]:
    return sorted(p for p in src_dir.iterdir() if p.suffix in (".h", ".cc"))


def _compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    if shutil.which(cxx) is None:
        raise ModuleBuildError(f"C++ compiler '{cxx}' not found: install g++ (or set CXX)")
    return cxx


def modules_key(src_dir: Path = MODULES_DIR) -> str:
    wheel = find_wheel()
    h = hashlib.sha256()
    for part in (wheel.version, str(wheel.include_dir), _compiler(), *CXXFLAGS):
        h.update(part.encode() + b"\0")
    for path in module_sources(src_dir):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _compile(cxx: str, source: Path, obj: Path, include_dir: Path) -> str | None:
    proc = subprocess.run(
        [cxx, *CXXFLAGS, "-I", str(include_dir), "-I", str(source.parent),
         "-c", str(source), "-o", str(obj)],
        capture_output=True, text=True,
    )
    return None if proc.returncode == 0 else proc.stderr


def build_modules(src_dir: Path = MODULES_DIR, out_dir: Path | None = None,
                  quiet: bool = False) -> Path:
    """Compile ns3-modules/ into one shared library (cached); return its path."""
    wheel = find_wheel()
    out_dir = out_dir or cache_dir() / "modules"
    target = out_dir / f"libddnn-{modules_key(src_dir)}.so"
    if target.exists():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    cxx = _compiler()
    sources = [p for p in module_sources(src_dir) if p.suffix == ".cc"]
    if not quiet:
        print(f"harness: compiling {len(sources)} ns3-modules sources (one-off)...",
              file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        objects = [Path(tmp) / (s.stem + ".o") for s in sources]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            errors = list(pool.map(lambda so: _compile(cxx, so[0], so[1], wheel.include_dir),
                                   zip(sources, objects)))
        failed = [(s, e) for s, e in zip(sources, errors) if e is not None]
        if failed:
            raise ModuleBuildError(
                "ns3-modules failed to compile:\n"
                + "\n".join(f"--- {s.name}\n{_errors_only(e)}" for s, e in failed))
        libs = [str(wheel.library(m)) for m in NS3_LIBRARIES]
        tmp_so = Path(tmp) / target.name
        link = subprocess.run(
            [cxx, "-shared", "-o", str(tmp_so), *map(str, objects), *libs,
             f"-Wl,-rpath,{wheel.lib_dir}"],
            capture_output=True, text=True)
        if link.returncode != 0:
            raise ModuleBuildError(f"ns3-modules failed to link:\n{link.stderr}")
        os.replace(tmp_so, target)  # atomic: a racing process sees all or nothing
    return target


def _errors_only(stderr: str, limit: int = 40) -> str:
    """The compiler's error lines (file:line: error: ...) and their context."""
    lines = stderr.splitlines()
    keep = [i for i, line in enumerate(lines) if ": error:" in line or ": fatal error:" in line]
    if not keep:
        return "\n".join(lines[:limit])
    out: list[str] = []
    for i in keep:
        out.extend(lines[i:i + 3])
    return "\n".join(out[:limit])


# --------------------------------------------------------------------------
# the process-wide load


@functools.cache
def load(quiet: bool = False):
    """Load ns-3 and ns3-modules/ once per process; return the `ns3` namespace."""
    wheel = find_wheel()
    library = build_modules(quiet=quiet)
    _activate_pch(wheel, quiet)
    import cppyy
    import libcppyy

    libcppyy.AddSmartPtrType("Ptr")
    for module in NS3_LIBRARIES:
        cppyy.load_library(str(wheel.library(module)))
    cppyy.add_include_path(str(wheel.include_dir))
    for header in NS3_HEADERS:
        cppyy.include(header)
    cppyy.load_library(str(library))
    cppyy.add_include_path(str(MODULES_DIR))
    cppyy.include(UMBRELLA_HEADER)
    return cppyy.gbl.ns3


def _activate_pch(wheel: Wheel, quiet: bool) -> None:
    """Use a precompiled header of the ns-3 modules when one can be had."""
    if "cppyy" in sys.modules or os.environ.get("DDNN_HARNESS_NO_PCH"):
        return  # too late (cppyy reads CLING_STANDARD_PCH at import) or disabled
    # Our umbrella header too: parsing it costs ~0.3 s per process otherwise,
    # and its extern templates (binding-instantiations.h) spare Cling the
    # code generation of CreateObject<T>/Ptr<T>.
    path = pch.ensure_pch(cache_dir(), wheel.include_dir, [*NS3_HEADERS, UMBRELLA_HEADER],
                          quiet=quiet, extra_include_dirs=[MODULES_DIR])
    if path is not None:
        pch.activate(path)
