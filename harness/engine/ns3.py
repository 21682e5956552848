"""Loading ns-3 and our own C++ code (ns3-modules/) into this process.

`from ns import ns` would include every ns-3 module header (wifi, lte, ...):
20+ s and ~600 MiB per process. A wired data-center run needs only the
modules below, loaded through cppyy directly. Our C++ sources are compiled
once per machine into objects, cached under a key made of the sources, the
compiler, its flags and the ns3 wheel by content (not where it is
installed), linked once per virtual environment into a shared library (a
second or so: its run path is that environment's wheel) and loaded with
`cppyy.load_library`. The engine is the wheel or a user's own ns-3.44 build
(harness.engine.engines): a build has a cache folder of its own.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.engine import engines, pch, pch_key
from harness.io import outdir
from harness.config import environment
from harness.config.errors import ConfigError, Ns3LoadError
from harness.engine.pch_key import NS3_HEADERS, NS3_LIBRARIES  # one list for the PCH and the load
from harness.config.paths import MODULES_DIR

UMBRELLA_HEADER = "ddnn-modules.h"
CXXFLAGS = ("-std=c++20", "-O2", "-fPIC", "-DNDEBUG")


find_engine = engines.find_engine  # the wheel, or the build DDNN_HARNESS_NS3_BUILD names


CACHE_ENV = "DDNN_HARNESS_CACHE"


def cache_root() -> Path:
    """Per-user cache (override with DDNN_HARNESS_CACHE), checked as every
    directory variable is (harness.config.environment: a file, a read-only
    place or an unknown ~user is one error naming the variable)."""
    own = environment.directory(CACHE_ENV)
    if own is not None:
        return own
    base = environment.directory("XDG_CACHE_HOME") or Path.home() / ".cache"
    return base / "ddnn-harness"


def check_environment() -> None:
    """What a simulation needs of the environment, before anything runs: the
    switches, a cache it can write in, and the compiler (ConfigError naming
    the variable; the `harness` command and harness.run / harness.sweep
    call this first, so that it is not found inside a cell)."""
    environment.check()
    root = cache_root()
    if not os.environ.get(CACHE_ENV) and not os.environ.get("XDG_CACHE_HOME"):
        environment.check_directory("HOME", root)   # ~/.cache/ddnn-harness
    _compiler()
    engine = find_engine()   # a bad or incomplete build: refused here, naming the setting
    if not engine.is_wheel and tcp_fastpath_wanted():
        header = engines.fastpath_mismatch(engine)
        if header is not None:
            where = (engines.chosen() or (engines.BUILD_ENV,))[0]
            raise ConfigError(where, f"{engine.root}'s {header} is not ns-{engines.VERSION}'s, "
                              "which the TCP fast path mirrors; give an unmodified ns-"
                              f"{engines.VERSION} build, or set {STOCK_TCP_ENV}=1 to run its "
                              "own TcpTxBuffer")


def cache_dir() -> Path:
    """Cache directory of this engine (PCH, compiled modules): the wheel's
    by its ns-3 version; a build's by version, profile and identity."""
    engine = find_engine()
    if engine.is_wheel:
        return cache_root() / f"ns3-{engine.version}"
    return cache_root() / f"ns3-{engine.version}-{engine.profile}-{engines.identity(engine)}"


def _engine_identity(engine: engines.Engine) -> str:
    """The engine in a cache key: the wheel by content, a build by its files."""
    return pch_key.wheel_identity() if engine.is_wheel else f"build-{engines.identity(engine)}"


# --------------------------------------------------------------------------
# ns3-modules/: compiled once, cached by content


class ModuleBuildError(Ns3LoadError):
    """A compiler error in ns3-modules/, with the compiler's own message."""


#: Folders of ns3-modules/ that are libraries of their own, not part of libddnn.
SEPARATE_LIBRARIES = ("tcp-fastpath",)


def module_sources(src_dir: Path = MODULES_DIR) -> list[Path]:
    """The .h/.cc files of libddnn: those at the top of `src_dir` and in its
    role folders (apps/, core/, jobs/, schedulers/, network/, scenario/, tcp/, trackers/, bindings/;
    any depth), not those of SEPARATE_LIBRARIES. Sources include each other
    by file name (`#include "comm-scheduler.h"`, as within an ns-3 module),
    so a file name must be unique across the folders."""
    sources = sorted(
        (p for p in src_dir.rglob("*") if p.suffix in (".h", ".cc") and p.is_file()
         and p.relative_to(src_dir).parts[0] not in SEPARATE_LIBRARIES),
        key=lambda p: p.relative_to(src_dir).as_posix())
    seen: dict[str, Path] = {}
    for path in sources:
        if path.name in seen:
            raise ModuleBuildError(
                f"two ns3-modules sources are named {path.name} ({seen[path.name]} and {path}): "
                "sources include each other by file name, so names must be unique")
        seen[path.name] = path
    return sources


def module_include_dirs(src_dir: Path = MODULES_DIR) -> list[Path]:
    """`src_dir` and every folder holding its sources: the include path that
    lets `#include "foo.h"` find foo.h in whichever role folder it lives."""
    return [src_dir, *sorted({p.parent for p in module_sources(src_dir)} - {src_dir})]


def loaded_headers(src_dir: Path = MODULES_DIR) -> list[str]:
    """What Python includes of our code: the umbrella header, and every
    header of jobs/ and services/ (any depth). cppyy casts the job
    ScenarioRecipe::GetJob returns, or the application GetServiceApp does,
    to its own class (a ring's BuffersCsv, a stream receiver's ToCsv) only
    when that class's header is included; found here, so a new
    architecture's job or a new service kind's application needs no line in
    the umbrella header."""
    found = sorted(p.name for folder in ("jobs", "services")
                   for p in (src_dir / folder).rglob("*.h"))
    return [UMBRELLA_HEADER, *dict.fromkeys(found)]


def _compiler() -> str:
    """$CXX or g++, found on PATH: a missing compiler is the environment's
    fault, a ConfigError naming CXX (exit code 2), not a build error."""
    return environment.program("CXX", "g++")


def _library_key(sources: list[Path], cxxflags: tuple[str, ...], extra: tuple[str, ...] = ()) -> str:
    """The compiled code's key: the engine (the ns3 wheel by content,
    pch_key.wheel_identity, not its path, so every virtual environment with
    the same wheel shares the objects; a build by engines.identity), the
    harness's version, the compiler, the flags and the sources (their paths
    under ns3-modules/ and their content)."""
    engine = find_engine()
    h = hashlib.sha256()
    # the harness's own version too: a new release never loads an old build
    harness_version = importlib.metadata.version("ddnn-harness")
    for part in (engine.version, _engine_identity(engine), harness_version, _compiler(), *cxxflags,
                 *extra):
        h.update(part.encode() + b"\0")
    for path in sources:  # the path under ns3-modules/: moving a file changes the key
        h.update(_source_label(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _source_label(path: Path) -> str:
    try:
        return path.resolve().relative_to(MODULES_DIR).as_posix()
    except ValueError:  # a source outside ns3-modules/ (tests build their own)
        return path.name


def modules_key(src_dir: Path = MODULES_DIR) -> str:
    return _library_key(module_sources(src_dir), CXXFLAGS)


def _compile(cxx: str, source: Path, obj: Path, include_dirs: list[Path],
             cxxflags: tuple[str, ...] = CXXFLAGS) -> str | None:
    includes = [flag for d in include_dirs for flag in ("-I", str(d))]
    proc = subprocess.run(
        [cxx, *cxxflags, *includes, "-I", str(source.parent),
         "-c", str(source), "-o", str(obj)],
        capture_output=True, text=True,
    )
    return None if proc.returncode == 0 else proc.stderr


def _environment_tag() -> str:
    """The one part of a library that is this environment's: the run path
    to the engine's libraries (the TCP fast path is loaded before them, so
    the dynamic linker finds them through it)."""
    return hashlib.sha256(str(find_engine().lib_dir.resolve()).encode()).hexdigest()[:8]


def _library_path(out_dir: Path, name: str) -> Path:
    """`out_dir/<name>-<environment>.so`; its objects are `out_dir/<name>.objects/`,
    shared by every environment."""
    return out_dir / f"{name}-{_environment_tag()}.so"


def _build_library(target: Path, sources: list[Path], cxxflags: tuple[str, ...],
                   libraries: tuple[str, ...], link_flags: tuple[str, ...] = (),
                   what: str = "ns3-modules", quiet: bool = False,
                   include_dirs: list[Path] = (), objects_dir: Path | None = None) -> Path:
    """Compile `sources` into `objects_dir` (once per machine: its name is the
    content key, shared by every environment; racing processes compile once)
    and link them into `target` (once per environment; atomically)."""
    if target.exists():
        return target
    engine = find_engine()
    target.parent.mkdir(parents=True, exist_ok=True)
    cxx = _compiler()
    if objects_dir is None:
        objects_dir = target.with_suffix(".objects")
    names = [s.stem + ".o" for s in sources]
    with pch._build_lock(objects_dir.with_name(objects_dir.name + ".lock"), _COMPILE_WAIT_S):
        if target.exists():  # linked by another process while we waited
            return target
        if not all((objects_dir / n).is_file() for n in names):
            _compile_objects(cxx, sources, names, objects_dir, engine, include_dirs, cxxflags,
                             what, quiet)
        objects = [objects_dir / n for n in names]
        libs = [str(engine.library(m)) for m in libraries]

        def link_to(tmp_so: Path) -> None:
            link = subprocess.run(
                [cxx, "-shared", "-o", str(tmp_so), *map(str, objects), *link_flags, *libs,
                 f"-Wl,-rpath,{engine.lib_dir}"],
                capture_output=True, text=True)
            if link.returncode != 0:
                raise ModuleBuildError(f"{what} failed to link:\n{link.stderr}")

        outdir.write_from(target, link_to)  # a racing process sees all or nothing
    return target


#: how long a process waits for another one compiling the same sources
_COMPILE_WAIT_S = 900.0


def _compile_all(cxx: str, sources: list[Path], objects: list[Path], include_dirs: list[Path],
                 cxxflags: tuple[str, ...], what: str, quiet: bool) -> list[str | None]:
    """Each source's compiler errors (None: compiled), on every core; a line
    per source as it ends (a first build takes minutes: it says how far it is)."""
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {pool.submit(_compile, cxx, src, obj, include_dirs, cxxflags): i
                   for i, (src, obj) in enumerate(zip(sources, objects))}
        errors: list[str | None] = [None] * len(sources)
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[future]
            errors[i] = future.result()
            if not quiet:
                print(f"harness: {what} {n}/{len(sources)} compiled ({sources[i].name}"
                      f"{', failed' if errors[i] is not None else ''}; "
                      f"{time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    return errors


def _compile_objects(cxx: str, sources: list[Path], names: list[str], objects_dir: Path,
                     engine: engines.Engine, include_dirs, cxxflags: tuple[str, ...], what: str,
                     quiet: bool) -> None:
    """Compile `sources` in a temporary folder beside `objects_dir`, then
    rename it into place (a reader sees every object or none)."""
    if not quiet:
        print(f"harness: compiling {len(sources)} {what} sources (one-off per machine)...",
              file=sys.stderr, flush=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{objects_dir.name}.tmp-", dir=objects_dir.parent))
    try:
        objects = [tmp / n for n in names]
        errors = _compile_all(cxx, sources, objects, [engine.include_dir, *include_dirs],
                              cxxflags, what, quiet)
        failed = [(s, e) for s, e in zip(sources, errors) if e is not None]
        if failed:
            raise ModuleBuildError(
                f"{what} failed to compile:\n"
                + "\n".join(f"--- {s.name}\n{_errors_only(e)}" for s, e in failed))
        if objects_dir.is_dir():  # an incomplete one (a removed object): set aside, then gone
            old = objects_dir.with_name(f".{objects_dir.name}.old-{os.getpid()}")
            os.rename(objects_dir, old)
            shutil.rmtree(old, ignore_errors=True)
        os.chmod(tmp, 0o755)  # (mkdtemp's 0700) as any other folder of the cache
        os.rename(tmp, objects_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_modules(src_dir: Path = MODULES_DIR, out_dir: Path | None = None,
                  quiet: bool = False) -> Path:
    """Compile ns3-modules/ into one shared library (cached); return its path."""
    out_dir = out_dir or cache_dir() / "modules"
    sources = [p for p in module_sources(src_dir) if p.suffix == ".cc"]
    key = modules_key(src_dir)
    return _build_library(_library_path(out_dir, f"libddnn-{key}"), sources, CXXFLAGS,
                          NS3_LIBRARIES, quiet=quiet, include_dirs=module_include_dirs(src_dir),
                          objects_dir=out_dir / f"libddnn-{key}.objects")


# --------------------------------------------------------------------------
# the TCP fast path (ns3-modules/tcp-fastpath/): faster TcpTxBuffer members
# that take the wheel's place when their library is loaded first

TCP_FASTPATH_DIR = MODULES_DIR / "tcp-fastpath"
TCP_FASTPATH_LIBRARIES = ("core", "network", "internet")
#: The ns3 release whose TcpTxBuffer the fast path mirrors (pyproject pins it).
TCP_FASTPATH_NS3 = "3.44.post0"
STOCK_TCP_ENV = "DDNN_HARNESS_STOCK_TCP"        # 1: run the wheel's slow TcpTxBuffer
NO_PCH_ENV = "DDNN_HARNESS_NO_PCH"              # 1: no precompiled header
CROSSCHECK_TCP_ENV = "DDNN_HARNESS_TCP_CROSSCHECK"  # 1: check every call against it


def tcp_fastpath_wanted() -> bool:
    return not environment.flag(STOCK_TCP_ENV)


def build_tcp_fastpath(crosscheck: bool | None = None, quiet: bool = False) -> Path:
    """libddnn-tcp: the TcpTxBuffer replacement (cached by content and flags).
    crosscheck: the debug build that runs the wheel's member beside each call
    (default: the DDNN_HARNESS_TCP_CROSSCHECK environment variable)."""
    if crosscheck is None:
        crosscheck = environment.flag(CROSSCHECK_TCP_ENV)
    sources = sorted(TCP_FASTPATH_DIR.glob("*.cc"))
    exports = TCP_FASTPATH_DIR / "exports.map"
    flags = CXXFLAGS + (("-DDDNN_TCP_CROSSCHECK",) if crosscheck else ())
    key = _library_key([*sorted(TCP_FASTPATH_DIR.glob("*.h")), *sources, exports], flags)
    name = f"libddnn-tcp{'-crosscheck' if crosscheck else ''}-{key}"
    out_dir = cache_dir() / "modules"
    return _build_library(_library_path(out_dir, name), sources, flags,
                          TCP_FASTPATH_LIBRARIES, (f"-Wl,--version-script={exports}",),
                          what="tcp-fastpath", quiet=quiet, objects_dir=out_dir / f"{name}.objects")


@dataclass(frozen=True)
class TcpFastPath:
    """Which TcpTxBuffer the process runs."""

    library: Path | None    # None: the wheel's (stock) TcpTxBuffer
    in_force: int = 0       # replaced members that resolve into `library`
    total: int = 0
    crosscheck: bool = False

    @property
    def stock(self) -> bool:
        return self.library is None

    def describe(self) -> str:
        if self.stock:
            return "stock (the wheel's TcpTxBuffer)"
        return f"fast path ({self.in_force}/{self.total} members" + (
            ", cross-checked against the wheel's on every call)" if self.crosscheck else ")")

    def report(self) -> dict:
        """For a run's manifest: which path ran (and, cross-checking, how many
        calls were compared with the wheel's so far in this process, and how
        many scoreboard walks started after the buffers' hints)."""
        out = {"mode": "stock" if self.stock else "fast", "in_force": self.in_force,
               "members": self.total, "crosscheck": self.crosscheck}
        if self.crosscheck:
            import ctypes

            lib = ctypes.CDLL(str(self.library))
            lib.ddnn_tcp_fastpath_checked_calls.restype = ctypes.c_ulonglong
            out["checked_calls"] = int(lib.ddnn_tcp_fastpath_checked_calls())
            uses = (ctypes.c_ulonglong * 3)()
            lib.ddnn_tcp_fastpath_hint_uses(uses)
            out["hint_uses"] = dict(zip(("settled_prefix", "marked_prefix", "sacked_block"),
                                        map(int, uses)))
        return out


def _check_tcp_fastpath(library: Path) -> TcpFastPath:
    import ctypes

    lib = ctypes.CDLL(str(library))
    total = ctypes.c_int(0)
    here = lib.ddnn_tcp_fastpath_in_force(ctypes.byref(total))
    state = TcpFastPath(library, here, total.value, bool(lib.ddnn_tcp_fastpath_crosscheck()))
    if here != total.value:
        raise Ns3LoadError(
            f"the TCP fast path is not in force ({here} of {total.value} TcpTxBuffer members "
            f"resolve to {library.name}): ns-3's libraries were loaded before it. Load ns-3 "
            f"only through harness.engine.ns3.load(), or set {STOCK_TCP_ENV}=1 to run the wheel's "
            "(3-4x slower) TcpTxBuffer")
    return state


def tcp_fastpath() -> TcpFastPath:
    """What ns3.load() put in place (load() first)."""
    return _tcp_state


_tcp_state = TcpFastPath(None)


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


_namespace = None  # once loaded, whatever `quiet` a later call passes


def load(quiet: bool = False):
    """Load ns-3 and ns3-modules/ once per process; return the `ns3` namespace.

    The TCP fast path (libddnn-tcp) is loaded before any ns-3 library, so that
    its TcpTxBuffer members take the wheel's place; load() checks that they
    did. DDNN_HARNESS_STOCK_TCP=1 leaves it out (and says so)."""
    global _tcp_state, _namespace
    if _namespace is not None:  # (a cache keyed on `quiet` loaded twice: an error)
        return _namespace
    engine = find_engine()
    fast = tcp_fastpath_wanted()
    if fast:
        installed = importlib.metadata.version("ns3") if engine.is_wheel else TCP_FASTPATH_NS3
        if not engine.is_wheel and engines.fastpath_mismatch(engine) is not None:
            raise Ns3LoadError(
                f"{engine.root}'s {engines.fastpath_mismatch(engine)} is not the one the TCP fast "
                f"path mirrors: give an unmodified ns-{engines.VERSION} build (or set "
                f"{STOCK_TCP_ENV}=1 to run its own TcpTxBuffer)")
        if installed != TCP_FASTPATH_NS3:
            raise Ns3LoadError(
                f"ns3 {installed} is installed, but the TCP fast path mirrors ns3 "
                f"{TCP_FASTPATH_NS3}'s TcpTxBuffer: pip install 'ns3=={TCP_FASTPATH_NS3}' "
                f"(or set {STOCK_TCP_ENV}=1 to run the wheel's own, slower)")
        if any(name.startswith("libns3") for name in _loaded_libraries()):
            raise Ns3LoadError("ns-3 libraries are already loaded in this process: the TCP "
                               f"fast path cannot come first (set {STOCK_TCP_ENV}=1 to "
                               "run without it)")
        tcp_library = build_tcp_fastpath(quiet=quiet)
    library = build_modules(quiet=quiet)
    _activate_pch(engine, quiet)
    import cppyy
    import libcppyy

    libcppyy.AddSmartPtrType("Ptr")
    if fast:
        cppyy.load_library(str(tcp_library))  # first: its members precede the wheel's
        _tcp_state = _check_tcp_fastpath(tcp_library)
    else:
        print(f"harness: {STOCK_TCP_ENV} is set: this run uses the wheel's own TcpTxBuffer, "
              "3-4x slower on runs with many retransmissions (same results)",
              file=sys.stderr, flush=True)
    for module in NS3_LIBRARIES:
        cppyy.load_library(str(engine.library(module)))
    cppyy.add_include_path(str(engine.include_dir))
    for header in NS3_HEADERS:
        cppyy.include(header)
    cppyy.load_library(str(library))
    for folder in module_include_dirs():
        cppyy.add_include_path(str(folder))
    for header in loaded_headers():
        cppyy.include(header)
    _namespace = cppyy.gbl.ns3
    return _namespace


def _loaded_libraries() -> list[str]:
    """File names of the shared objects mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            fields = (line.split(maxsplit=5) for line in f)
            return sorted({Path(x[5].strip()).name for x in fields if len(x) == 6})
    except OSError:
        return []


def _activate_pch(engine: engines.Engine, quiet: bool) -> None:
    """Use a precompiled header of the ns-3 modules when one can be had."""
    if "cppyy" in sys.modules or environment.flag(NO_PCH_ENV):
        return  # too late (cppyy reads CLING_STANDARD_PCH at import) or disabled
    # Our umbrella header too: parsing it costs ~0.3 s per process otherwise,
    # and its extern templates (binding-instantiations.h) spare Cling the
    # code generation of CreateObject<T>/Ptr<T>.
    path = pch.ensure_pch(cache_dir(), engine.include_dir, [*NS3_HEADERS, *loaded_headers()],
                          quiet=quiet, extra_include_dirs=module_include_dirs(),
                          libraries=engine.libraries())  # the engine's own, whatever its layout
    if path is not None:
        pch.activate(path)
