"""Which ns-3 the harness runs on: the `ns3` wheel (the default) or a user's
own ns-3.44 build, optimized or release profile (DDNN_HARNESS_NS3_BUILD=DIR,
or the choice `harness engine use DIR` kept in the harness's settings file).

An engine is found and checked here (version, profile, the libraries and
headers the harness loads) and described (kind, path, version, profile) for
runs' manifests, `harness --version` and sweep.json. Pure file-system work:
nothing here loads ns-3 (harness.engine.ns3 does, from the engine found
here)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.config.errors import ConfigError, Ns3LoadError, shorten, shown_path
from harness.engine.pch_key import NS3_HEADERS, NS3_LIBRARIES

BUILD_ENV = "DDNN_HARNESS_NS3_BUILD"
WHEEL = "wheel"   # DDNN_HARNESS_NS3_BUILD=wheel, `harness engine use wheel`: the default
#: The ns-3 release the harness's C++ (and its TCP fast path) is written against.
VERSION = "3.44"
#: A build's library-name suffix -> its profile; ns-3's other profiles
#: (debug, default: asserts and logging on, slower than the wheel) are refused.
PROFILES = {"-optimized": "optimized", "": "release"}
_CORE = re.compile(r"^libns(\d+\.\d+(?:\.\d+)?)-core(-[a-z]+)?\.so$")
#: The headers whose classes the TCP fast path replaces members of: a build
#: runs the fast path only where they are ns-3.44's, byte for byte (sha256).
FASTPATH_HEADERS = {
    "ns3/tcp-tx-buffer.h": "591f6465440eee20c7cd4d17fdb2f95f6027e193cc78477db4aa81228442c291",
    "ns3/tcp-rx-buffer.h": "b4aa8d82875709b544425f8eabaa448235f38375016d053b5e49e344c150508b",
}
#: ns-3's build folder holds one-line stubs that include the source tree's header.
_STUB = re.compile(r'^#include "(/[^"]+)"\s*$')


@dataclass(frozen=True)
class Engine:
    """An ns-3 the harness can load: where its headers and libraries are."""

    kind: str           # "wheel" or "build"
    root: Path          # the wheel's package folder, or the build folder as given
    version: str        # ns-3's, from the library names: "3.44"
    profile: str        # "release" (the wheel's library names) or "optimized"
    include_dir: Path   # holds ns3/<header>.h
    lib_dir: Path
    suffix: str = ""    # of the library names: "-optimized" or ""

    def library(self, module: str) -> Path:
        return self.lib_dir / f"libns{self.version}-{module}{self.suffix}.so"

    def libraries(self, modules=NS3_LIBRARIES) -> list[Path]:
        return [self.library(m) for m in modules]

    @property
    def is_wheel(self) -> bool:
        return self.kind == "wheel"

    def describe(self) -> dict:
        """For manifests and sweep.json."""
        return {"kind": self.kind, "path": str(self.root), "version": self.version,
                "profile": self.profile}

    def label(self) -> str:
        """One line for people (`harness --version`, `harness engine show`)."""
        what = f"the ns3 wheel {_wheel_version()}" if self.is_wheel else f"an ns-{self.version} build"
        return f"{what}, {self.profile} profile, at {self.root}"


def _wheel_version() -> str:
    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


@functools.cache
def wheel() -> Engine:
    """The installed `ns3` wheel (Ns3LoadError where it is missing)."""
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
    return Engine("wheel", root, version, "release", root / "include", lib_dir)


# --------------------------------------------------------------------------
# a build


def _layout(root: Path) -> tuple[Path, Path] | None:
    """(include dir, library dir) of a build: DIR itself (ns-3's output
    folder, NS3_OUTPUT_DIRECTORY) or DIR/build (a source tree built in place)."""
    for base in (root, root / "build"):
        if (base / "include" / "ns3").is_dir():
            for lib in ("lib", "lib64"):
                if (base / lib).is_dir():
                    return base / "include", base / lib
    return None


def find_build(directory: str | Path, where: str = BUILD_ENV) -> Engine:
    """The ns-3 build in `directory`, checked: ns-3.44, the optimized or
    release profile, every library and module header the harness loads. A
    ConfigError naming `where` (the setting that gave it) and what is missing."""
    root = Path(os.path.expanduser(str(directory)))
    shown = shorten(str(directory))
    if not root.is_dir():
        raise ConfigError(where, f"{shown} is not a directory; give an ns-{VERSION} build folder "
                       "(its include/ns3 and lib/; make one with `harness engine build SRC`)")
    root = root.resolve()
    layout = _layout(root)
    if layout is None:
        raise ConfigError(where, f"{shown} is not an ns-3 build: no include/ns3 and lib/ in it "
                       "(nor in its build/); give the folder ns-3 built into (make one with "
                       "`harness engine build SRC`)")
    include_dir, lib_dir = layout
    found = sorted((m.group(1), m.group(2) or "") for p in lib_dir.glob("libns*-core*.so")
                   if (m := _CORE.match(p.name)))
    if not found:
        raise ConfigError(where, f"{shown} has no ns-3 core library (libns{VERSION}-core*.so in "
                       f"{shown_path(lib_dir)}); build ns-{VERSION} into it first")
    versions = sorted({v for v, _ in found})
    if VERSION not in versions:
        raise ConfigError(where, f"{shown} is ns-{', '.join(versions)}; the harness needs "
                       f"ns-{VERSION} (its C++ and TCP fast path are written against it)")
    suffixes = [s for v, s in found if v == VERSION]
    usable = [s for s in PROFILES if s in suffixes]   # optimized first, where both are there
    if not usable:
        profiles = ", ".join(s.lstrip("-") or "release" for s in suffixes)
        raise ConfigError(where, f"{shown} holds a {profiles} build of ns-{VERSION}; the harness "
                       "runs on the optimized or release profile (the others check and log "
                       "every event: slower than the wheel)")
    engine = Engine("build", root, VERSION, PROFILES[usable[0]], include_dir, lib_dir,
                    usable[0])
    missing = [m for m in NS3_LIBRARIES if not engine.library(m).is_file()]
    missing += [h.split("/")[1][:-len("-module.h")] for h in NS3_HEADERS
                if not (include_dir / h).is_file()
                and h.split("/")[1][:-len("-module.h")] not in missing]
    if missing:
        raise ConfigError(where, f"{shown} lacks the ns-3 modules {', '.join(missing)} (their "
                       f"libns{VERSION}-<module>{engine.suffix}.so or ns3/<module>-module.h); "
                       f"the harness needs {', '.join(NS3_LIBRARIES)}: build them "
                       "(`harness engine build SRC` enables exactly these)")
    for lib in engine.libraries():
        wrong = _not_a_library(lib)
        if wrong:
            raise ConfigError(where, f"{shown}: {lib.name} {wrong}; it is not a build ns-3 made: "
                              "build it again (`harness engine build SRC`)")
    return engine


# an ELF file's identification: magic, class (2: 64-bit), then e_type (3: a
# shared object) and e_machine at bytes 16-19, little-endian (ELF data 1)
_ELF_MAGIC = b"\x7fELF"
_ET_DYN = 3


def _elf_header(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(20)
    except OSError:
        return None


def _not_a_library(path: Path) -> str | None:
    """Why `path` is not a shared library this process could load (not
    ELF, not a shared object, for another machine), or None: read from its
    header, so that a folder of look-alike files is refused here and not as
    a link error after compiling."""
    head = _elf_header(path)
    if head is None:
        return "cannot be read"
    if len(head) < 20 or not head.startswith(_ELF_MAGIC):
        return "is not a shared library (no ELF header)"
    if int.from_bytes(head[16:18], "little" if head[5] == 1 else "big") != _ET_DYN:
        return "is an ELF file but not a shared library"
    own = _elf_header(Path(sys.executable).resolve())
    if own and own.startswith(_ELF_MAGIC) and (head[4], head[18:20]) != (own[4], own[18:20]):
        return "is built for another machine than this one"
    return None


def header_bytes(engine: Engine, header: str) -> bytes:
    """A header's content: through ns-3's one-line stub to the source tree's
    file where the build folder holds a stub."""
    data = (engine.include_dir / header).read_bytes()
    stub = _STUB.match(data.decode(errors="replace").strip())
    return Path(stub.group(1)).read_bytes() if stub else data


def fastpath_mismatch(engine: Engine) -> str | None:
    """None where the TCP fast path mirrors this build's TCP buffers (the
    headers ns-3.44 ships, byte for byte); otherwise the first that differs."""
    for header, digest in FASTPATH_HEADERS.items():
        try:
            if hashlib.sha256(header_bytes(engine, header)).hexdigest() != digest:
                return header
        except OSError:
            return header
    return None


def identity(engine: Engine) -> str:
    """What a cache key needs of a build: its path, profile and every library
    it loads by size and modification time (a rebuild changes them). The
    wheel's identity is its content (pch_key.wheel_identity), kept apart."""
    h = hashlib.sha256(f"{engine.root}\0{engine.profile}\0".encode())
    for lib in engine.libraries():
        st = lib.stat()
        h.update(f"{lib.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:12]


# --------------------------------------------------------------------------
# the choice: the variable, else `harness engine use`'s settings file, else the wheel


def settings_file() -> Path:
    """Where `harness engine use` keeps the choice: the harness's own file
    under $XDG_CONFIG_HOME (~/.config), never a file the user wrote."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ddnn-harness" / "engine.json"


def chosen() -> tuple[str, str] | None:
    """(where, directory) of the chosen build, or None for the wheel."""
    value = os.environ.get(BUILD_ENV, "").strip()
    if value == WHEEL:   # the wheel, whatever `harness engine use` kept
        return None
    if value:
        return BUILD_ENV, value
    path = settings_file()
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        build = record["build"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(str(path), "not the file `harness engine use` writes (JSON with a "
                          "\"build\" folder); run `harness engine use DIR` or `harness "
                          "engine use wheel` to write it again") from None
    return (str(path), build) if build else None


def find_engine() -> Engine:
    """The engine this process runs on (ConfigError for a bad choice). Found
    afresh each time (a few file checks): a test or a rebuild that changes
    the folder is seen."""
    choice = chosen()
    if choice is None:
        return wheel()
    return find_build(choice[1], where=choice[0])


def same(recorded: dict | None, engine: Engine) -> bool:
    """Whether a sweep's recorded engine (sweep.json; none: a sweep from
    before engines were recorded, which ran on the wheel) is `engine`."""
    recorded = recorded or {"kind": "wheel"}
    if recorded.get("kind") != engine.kind:
        return False
    if engine.is_wheel:   # any environment's wheel of the same version
        return recorded.get("version", engine.version) == engine.version
    return all(recorded.get(k) == v for k, v in engine.describe().items())
