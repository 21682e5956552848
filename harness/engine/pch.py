"""Cling precompiled header (PCH) for the ns-3 module headers the harness uses.

Including ``ns3/<module>-module.h`` with ``cppyy.include`` makes Cling parse
tens of thousands of header lines in every new process (~1.1 s here).  A
Cling PCH that holds cppyy's standard headers *plus* those ns-3 headers,
pointed to by ``CLING_STANDARD_PCH`` before ``import cppyy``, makes the later
``cppyy.include`` calls no-ops (a few ms).

The PCH is built the way cppyy builds its own standard PCH
(``cppyy_backend/etc/dictpch/makepch.py``: ``rootcling -generate-pch`` over
``allHeaders.h``), with the ns-3 module headers appended.  It is built once per
cache directory and per combination of ns3 / cppyy-backend / cppyy-cling /
cppyy / Python versions, Cling flags (``EXTRA_CLING_ARGS``, and the CPU when
they contain ``-march=native``), the ns3 wheel's content
(:func:`wheel_identity`), the header list and our headers' content: never a
path, so every virtual environment with the same wheel, and every checkout
with the same sources, shares it.  The PCH records the include paths it was
built from; Cling takes the declarations from the PCH and does not read
those files again, so it serves an environment whose paths differ (and
still does with the first environment's ``include/`` removed: checked).

Usage (the PCH must be activated before the first ``import cppyy``)::

    from harness.engine import pch
    p = pch.ensure_pch(cache_dir, pch.default_include_dir(), pch.NS3_HEADERS)
    if p is not None:
        pch.activate(p)
    import cppyy
    ...  # load the libraries, then cppyy.include the same headers as usual

Nothing here imports cppyy: building and validating run in subprocesses.
A PCH is only moved into place after a subprocess imported cppyy with it,
loaded the libraries, included the headers and created ns-3 objects without
error output; a sidecar ``.stamp`` file records its size and a checksum of
its head and tail, and ``ensure_pch``/``activate`` reject a file that does
not match (a truncated or corrupt PCH crashes Cling at ``import cppyy``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Iterator, Sequence

from harness.engine.pch_child import OK_MARKER
from harness.engine.pch_key import (NS3_LIBRARIES, cling_args, default_library_paths, key_info,
                                    modules_of, pch_file)

__all__ = [
    "ensure_pch",
    "activate",
    "is_valid",
]

_BAD_OUTPUT = ("failed to materialize", "error:", "segmentation", "*** break ***")
_DIGEST_CHUNK = 1 << 20
_CHILD_BOOT = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('_harness_pch_child', sys.argv[1])\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(mod)\n"
    "sys.exit(mod.main(sys.argv[2:]))\n"
)
_FAILURE_TTL_S = 3600.0  # after a failed build, don't retry for this long
_PRUNE_MIN_AGE_S = 3 * 3600.0  # a PCH younger than this is never pruned
_BUILD_TIMEOUT_S = 600.0
_VALIDATE_TIMEOUT_S = 300.0


# --------------------------------------------------------------------------
# integrity stamp


def _stamp_path(pch: Path) -> Path:
    return pch.with_name(pch.name + ".stamp")


def _failed_path(pch: Path) -> Path:
    return pch.with_name(pch.name + ".failed")


def _digest(path: Path) -> tuple[int, str]:
    """(size, sha256 of size + first and last MiB): cheap, catches truncation."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        h = hashlib.sha256(str(size).encode())
        h.update(f.read(_DIGEST_CHUNK))
        if size > _DIGEST_CHUNK:
            f.seek(max(_DIGEST_CHUNK, size - _DIGEST_CHUNK))
            h.update(f.read(_DIGEST_CHUNK))
    return size, h.hexdigest()


def is_valid(pch: Path) -> bool:
    """True if *pch* exists and matches the stamp written when it was validated."""
    pch = Path(pch)
    try:
        stamp = json.loads(_stamp_path(pch).read_text())
        size, digest = _digest(pch)
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict)
        and size > 0
        and stamp.get("size") == size
        and stamp.get("digest") == digest
    )


# --------------------------------------------------------------------------
# building


@contextlib.contextmanager
def _build_lock(lock_file: Path, timeout: float) -> Iterator[None]:
    """Exclusive lock so that racing processes build once; best effort.

    Correctness never depends on it (the PCH is moved into place atomically):
    if locking is unsupported or the wait exceeds *timeout*, go ahead anyway.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux
        yield
        return
    try:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    locked = False
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            except OSError:
                break
        yield
    finally:
        if locked:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _run(cmd: list[str], env: dict, cwd: str | None, timeout: float) -> tuple[bool, str]:
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if e.output else ""
        return False, f"{out}\n[timed out after {timeout:.0f} s: {cmd[:3]}...]"
    except OSError as e:
        return False, f"[could not run {cmd[:2]}: {e}]"
    out = proc.stdout.decode(errors="replace")
    if proc.returncode != 0:
        return False, f"{out}\n[exit code {proc.returncode}: {cmd[:3]}...]"
    return True, out


def _child_env() -> dict:
    env = os.environ.copy()
    # Build and validate with exactly the flags cppyy will use at import.
    env["EXTRA_CLING_ARGS"] = cling_args()
    for var in ("CLING_STANDARD_PCH", "CLING_REBUILD_PCH"):
        env.pop(var, None)
    return env


def _makepch() -> Path | str:
    """cppyy_backend's etc/dictpch/makepch.py, or why there is none (a str)."""
    spec = importlib.util.find_spec("cppyy_backend")
    if spec is None or not spec.submodule_search_locations:
        return "cppyy_backend is not installed"
    backend = Path(list(spec.submodule_search_locations)[0])
    makepch = backend / "etc" / "dictpch" / "makepch.py"
    if not makepch.is_file():
        return f"{makepch} not found"
    return makepch


def _generate(makepch: Path, tmp_pch: Path, include_dir: Path, headers: list[str],
              extra_include_dirs: Sequence[Path], timeout: float) -> tuple[bool, str]:
    """Run makepch.py into `tmp_pch` (in its build folder): (True, its log), or
    (False, what failed and the log)."""
    env = _child_env()
    env["TMPDIR"] = str(tmp_pch.parent)  # makepch's scratch: same filesystem
    # makepch.py must run from the cppyy_backend directory (it finds
    # etc/dictpch/allHeaders.h relative to "."); argv: out, cxxflags,
    # extra headers (it passes argv[2:], i.e. the -I flags too, to rootcling).
    extra_flags = [f"-I{Path(d).resolve()}" for d in extra_include_dirs]
    ok, log = _run(
        [sys.executable, str(makepch), str(tmp_pch), f"-I{include_dir}", *extra_flags,
         *headers],
        env,
        str(makepch.parents[2]),
        timeout,
    )
    if not ok:
        return False, "makepch failed:\n" + log
    if not tmp_pch.is_file() or tmp_pch.stat().st_size == 0:
        return False, "makepch produced no PCH:\n" + log
    return True, log


def _validate(tmp_pch: Path, include_dir: Path, headers: list[str], libraries: list[Path],
              extra_include_dirs: Sequence[Path], timeout: float) -> tuple[bool, str]:
    """Import cppyy with `tmp_pch` in a child (pch_child.py), load `libraries`,
    include `headers` and create ns-3 objects: (whether all went without
    error output, the child's log)."""
    venv = _child_env()
    venv["CLING_STANDARD_PCH"] = str(tmp_pch)
    venv["CLING_REBUILD_PCH"] = "0"
    request = json.dumps(
        {
            "include_dirs": [str(include_dir),
                             *(str(Path(d).resolve()) for d in extra_include_dirs)],
            "headers": headers,
            "libraries": [str(p) for p in libraries],
        }
    )
    # Load this file by path (not "python harness/engine/pch.py", which would put
    # harness/ first on sys.path where a module could shadow the stdlib).
    ok, vlog = _run(
        [sys.executable, "-c", _CHILD_BOOT, str(Path(__file__).resolve().with_name("pch_child.py")), "_validate", request],
        venv,
        str(tmp_pch.parent),
        min(timeout, _VALIDATE_TIMEOUT_S),
    )
    low = vlog.lower()
    return ok and OK_MARKER in vlog and not any(b in low for b in _BAD_OUTPUT), vlog


def _install(tmp_pch: Path, pch: Path, info: dict, build_s: float, validate_s: float) -> None:
    """Move the validated `tmp_pch` into place as `pch`, with its stamp."""
    size, digest = _digest(tmp_pch)
    stamp = {
        "size": size,
        "digest": digest,
        "key": info,
        "build_seconds": round(build_s, 2),
        "validate_seconds": round(validate_s, 2),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    tmp_stamp = tmp_pch.parent / "stamp.json"
    tmp_stamp.write_text(json.dumps(stamp, indent=1, sort_keys=True))
    # PCH first, then stamp: a reader that sees the new PCH with an old
    # stamp just finds it invalid and waits on the lock / rebuilds.
    os.replace(tmp_pch, pch)
    os.replace(tmp_stamp, _stamp_path(pch))


def _build(
    pch: Path,
    include_dir: Path,
    headers: list[str],
    libraries: list[Path],
    info: dict,
    timeout: float,
    extra_include_dirs: Sequence[Path] = (),
) -> tuple[bool, str]:
    """Generate the PCH in a build folder beside `pch`, validate it, and only
    then move it into place: (whether it is there, the build's log)."""
    makepch = _makepch()
    if isinstance(makepch, str):
        return False, makepch
    t0 = time.monotonic()
    build_dir = Path(tempfile.mkdtemp(prefix=f".{pch.name}.build-", dir=pch.parent))
    try:
        tmp_pch = build_dir / pch.name
        ok, log = _generate(makepch, tmp_pch, include_dir, headers, extra_include_dirs, timeout)
        if not ok:
            return False, log
        build_s = time.monotonic() - t0
        ok, vlog = _validate(tmp_pch, include_dir, headers, libraries, extra_include_dirs,
                             timeout)
        if not ok:
            return False, "validation of the new PCH failed:\n" + vlog
        _install(tmp_pch, pch, info, build_s, time.monotonic() - t0 - build_s)
        return True, log + vlog
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)


def _prune(cache_dir: Path, current: Path, keep: int = 3,
           min_age_s: float = _PRUNE_MIN_AGE_S) -> None:
    """Delete all but the *keep* newest PCHs (~70 MB each) of *cache_dir*,
    but none built in the last *min_age_s* (a sweep started with it may
    still start processes that look for it: they would build it again).

    A new one is built whenever our own headers change; a process that has an
    older one open keeps reading it (the file lives on until closed)."""
    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:  # pruned by another process meanwhile
            return 0.0

    pchs = sorted(cache_dir.glob("ns3-*.pch"), key=mtime, reverse=True)
    now = time.time()
    for old in [p for p in pchs if p != current][keep - 1:]:
        if now - mtime(old) < min_age_s:
            continue
        for path in (old, _stamp_path(old), _failed_path(old),
                     old.with_name(old.name + ".lock")):
            with contextlib.suppress(OSError):
                path.unlink()


def _recent_failure(pch: Path) -> bool:
    try:
        return time.time() - _failed_path(pch).stat().st_mtime < _FAILURE_TTL_S
    except OSError:
        return False


def ensure_pch(
    cache_dir: Path,
    include_dir: Path,
    headers: list[str],
    quiet: bool = True,
    *,
    libraries: Sequence[Path] | None = None,
    timeout: float = _BUILD_TIMEOUT_S,
    extra_include_dirs: Sequence[Path] = (),
) -> Path | None:
    """Return the path of a validated PCH for *headers*, building it if needed.

    Building (~5-10 s) runs ``makepch.py`` in a subprocess, then validates the
    result in another subprocess (``import cppyy`` with it, load *libraries*
    -- default: the wheel's libraries for the modules in *headers* --, include
    *headers*, create ns-3 objects) and only then moves it into place with
    ``os.replace``; concurrent callers serialise on a lock file and the loser
    reuses the winner's file.  Never raises and never imports cppyy: on any
    failure it returns ``None`` (caller falls back to plain includes) and
    records ``<pch>.failed`` (the build log) so that other processes don't
    retry for an hour.  Unless *quiet*, prints one line to stderr when it
    builds and one when building failed.
    """
    try:
        cache_dir = Path(cache_dir)
        include_dir = Path(include_dir).resolve()
        headers = list(headers)
        info = key_info(include_dir, headers, extra_include_dirs)
        pch = pch_file(cache_dir, info)
        if is_valid(pch):
            return pch
        if _recent_failure(pch):
            return None
        cache_dir.mkdir(parents=True, exist_ok=True)
        if libraries is None:
            mods = list(NS3_LIBRARIES)
            mods += [m for m in modules_of(headers) if m not in mods]
            libraries = default_library_paths(include_dir, mods)
        libs = [Path(p) for p in libraries]
        with _build_lock(pch.with_name(pch.name + ".lock"), timeout):
            if is_valid(pch):  # built by another process while we waited
                return pch
            if not quiet:
                print(
                    "harness: building ns-3 precompiled header (one-off, ~10 s on an idle core)...",
                    file=sys.stderr,
                    flush=True,
                )
            ok, log = _build(pch, include_dir, headers, libs, info, timeout,
                             extra_include_dirs)
            if ok:
                with contextlib.suppress(OSError):
                    _failed_path(pch).unlink()
                _prune(cache_dir, pch)
                return pch
            with contextlib.suppress(OSError):
                _failed_path(pch).write_text(log[-20000:])
            if not quiet:
                print(
                    f"harness: building the ns-3 precompiled header failed "
                    f"(log: {_failed_path(pch)}); using plain includes",
                    file=sys.stderr,
                    flush=True,
                )
            return None
    except Exception as e:  # noqa: BLE001 - must never break the caller
        if not quiet:
            print(
                f"harness: ns-3 precompiled header unavailable ({e!r}); using plain includes",
                file=sys.stderr,
                flush=True,
            )
        return None


def activate(pch: Path) -> None:
    """Point Cling at *pch*.  Must be called before the first ``import cppyy``.

    Sets ``CLING_STANDARD_PCH`` (inherited by child processes) and
    ``CLING_REBUILD_PCH=0``; the latter stops cppyy's own staleness check
    (PCH older than ``cppyy_backend/include``) from rebuilding a *standard*
    PCH over this file in place.  Raises ``ValueError`` if *pch* is missing
    or fails its integrity stamp (Cling would crash on a corrupt file, and
    on a missing one cppyy would build its plain standard PCH at that path).
    Warns, and changes nothing, if cppyy was already imported.
    """
    pch = Path(pch).resolve()
    if not is_valid(pch):
        raise ValueError(f"{pch} is missing or not a validated PCH; use ensure_pch()")
    if "cppyy" in sys.modules:
        if os.environ.get("CLING_STANDARD_PCH") != str(pch):
            warnings.warn(
                "harness.engine.pch.activate() called after 'import cppyy': no effect",
                RuntimeWarning,
                stacklevel=2,
            )
        return
    os.environ["CLING_STANDARD_PCH"] = str(pch)
    os.environ["CLING_REBUILD_PCH"] = "0"
