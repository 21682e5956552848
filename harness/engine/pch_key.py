"""Where the PCH's inputs are and the key it is cached under: the ns-3
headers and libraries the harness uses, the wheel's include and library
folders, and a key from everything that decides a PCH's content (the
versions of ns3 and cppyy, Cling's flags, the wheel's content, the headers'
content), never a path (harness.engine.pch builds and validates it)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
from pathlib import Path
from typing import Sequence

_FORMAT = 2  # bump to invalidate every existing PCH after a change in here
_DISTS = ("ns3", "cppyy-backend", "cppyy-cling", "cppyy", "CPyCppyy")

#: Modules whose ``<module>-module.h`` the harness includes, in include order.
NS3_MODULES: tuple[str, ...] = (
    "core",
    "network",
    "internet",
    "point-to-point",
    "traffic-control",
    "applications",
)
#: The headers compiled into the PCH (relative to the wheel's include dir).
NS3_HEADERS: list[str] = [f"ns3/{m}-module.h" for m in NS3_MODULES]
#: Libraries the harness loads (dependencies first), ``libns3.<ver>-<m>.so``.
NS3_LIBRARIES: tuple[str, ...] = (
    "core",
    "stats",
    "network",
    "bridge",
    "traffic-control",
    "internet",
    "point-to-point",
    "applications",
)




def _ns3_dir() -> Path:
    spec = importlib.util.find_spec("ns3")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            if (Path(loc) / "include").is_dir():
                return Path(loc)
    return Path(importlib.metadata.distribution("ns3").locate_file("ns3")).resolve()


def default_include_dir() -> Path:
    """``site-packages/ns3/include`` of the installed ns3 wheel."""
    return _ns3_dir() / "include"


def default_library_paths(
    include_dir: Path | None = None, modules: Sequence[str] = NS3_LIBRARIES
) -> list[Path]:
    """Absolute paths of ``libns3*-<m>.so`` for *modules*, next to *include_dir*.

    Modules without a library file are skipped.
    """
    root = Path(include_dir).parent if include_dir is not None else _ns3_dir()
    found: list[Path] = []
    for m in modules:
        for libdir in ("lib64", "lib"):
            suffix = f"-{m}.so"
            hits = sorted(
                h
                for h in (root / libdir).glob(f"libns3*{suffix}")
                if "-" not in h.name[: -len(suffix)]  # not "...-point-to-point.so" for "point"
            )
            if hits:
                found.append(hits[0])
                break
    return found


def modules_of(headers: Sequence[str]) -> list[str]:
    out = []
    for h in headers:
        name = Path(h).name
        if name.endswith("-module.h"):
            out.append(name[: -len("-module.h")])
    return out


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def cling_args() -> str:
    """EXTRA_CLING_ARGS as cppyy will see it at import time.

    Mirrors ``cppyy_backend.loader.set_cling_compile_options`` (which sets a
    default when the variable is unset) without importing it.
    """
    if "EXTRA_CLING_ARGS" in os.environ:
        return os.environ["EXTRA_CLING_ARGS"]
    if "arm64" in platform.machine():
        return " -O2"
    return " -O2 -march=native"


def _cpu_digest() -> str:
    """Fingerprint of the CPU features (relevant with ``-march=native``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    feats = " ".join(sorted(line.split(":", 1)[1].split()))
                    return hashlib.sha256(feats.encode()).hexdigest()[:12]
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _dir_digest(directory: Path) -> str:
    """Content hash of every header in *directory* (an extra include dir)."""
    h = hashlib.sha256()
    for path in sorted(Path(directory).glob("*.h")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@functools.cache
def wheel_identity() -> str:
    """The installed ns3 wheel, by content: a hash of its version and of its
    RECORD's lines that carry a file hash (every header and library, by path
    inside site-packages and sha256), so two virtual environments with the
    same wheel, wherever they are, have the same identity. Without a RECORD
    (not installed by pip): the path, name, size and mtime of every file of it."""
    dist = importlib.metadata.distribution("ns3")
    h = hashlib.sha256(f"ns3 {dist.version}\0".encode())
    record = dist.read_text("RECORD")
    lines = sorted(line for line in (record or "").splitlines()
                   if ",sha256=" in line and ".dist-info/" not in line.split(",")[0])
    if lines:
        h.update("\n".join(lines).encode())
        return "record-" + h.hexdigest()[:16]
    root = _ns3_dir()
    h.update(str(root.resolve()).encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        st = path.stat()
        h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return "files-" + h.hexdigest()[:16]


def _include_identity(include_dir: Path, headers: Sequence[str]) -> dict:
    """What the headers under `include_dir` are: the installed wheel's by its
    content (wheel_identity, not its path: every virtual environment with
    the same wheel shares one PCH), any other directory by its path and the
    headers' sizes and mtimes."""
    try:
        if include_dir == default_include_dir().resolve():
            return {"ns3_wheel": wheel_identity()}
    except (importlib.metadata.PackageNotFoundError, OSError, ValueError):
        pass
    hdrs = []
    for h in headers:
        try:
            st = (include_dir / h).stat()
            hdrs.append([h, st.st_size, st.st_mtime_ns])
        except OSError:
            hdrs.append([h, None, None])
    return {"include_dir": str(include_dir), "header_stats": hdrs}


def key_info(include_dir: Path, headers: Sequence[str],
              extra_include_dirs: Sequence[Path] = ()) -> dict:
    include_dir = Path(include_dir).resolve()
    args = " ".join(cling_args().split())
    info = {
        "format": _FORMAT,
        "versions": {d: _dist_version(d) for d in _DISTS},
        "python": f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}",
        "machine": platform.machine(),
        "cling_args": args,
        "stdcxx": os.environ.get("STDCXX", ""),
        "cuda": os.environ.get("CLING_ENABLE_CUDA", ""),
        "cpu": _cpu_digest() if "native" in args else "",
        **_include_identity(include_dir, headers),
        "headers": list(headers),
    }
    if extra_include_dirs:
        # Our own headers change during development: key on their content,
        # by their folders' names below the first (not the checkout's path).
        top = Path(extra_include_dirs[0]).resolve()
        info["extra_include_dirs"] = [[_label(Path(d).resolve(), top), _dir_digest(d)]
                                      for d in extra_include_dirs]
    return info


def _label(directory: Path, top: Path) -> str:
    try:
        return directory.relative_to(top).as_posix()
    except ValueError:
        return directory.name


def cache_key(info: dict) -> str:
    blob = json.dumps(info, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def pch_file(cache_dir: Path, info: dict) -> Path:
    """Where the PCH of `info` (key_info: the ns3, cppyy-backend, cppyy-cling,
    cppyy and Python versions, the Cling flags, the include directory and the
    headers) lives: ``cache_dir / "ns3-<key>.pch"``, *key* a short hash of
    `info` (cache_key)."""
    return Path(cache_dir) / f"ns3-{cache_key(info)}.pch"
