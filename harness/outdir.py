"""Where results go, and the one way they are written.

- Default places: under ``$DDNN_HARNESS_RESULTS`` if set, else ``./results``
  (the current directory's), as ``runs/<name>-<digest>`` and
  ``sweeps/<name>``, with the scenario's or grid's name reduced to a safe
  file name (no ``..``, no ``/``).
- Checks made before any simulation: an output path must be creatable and
  writable, and an existing directory is replaced only when it is empty or
  one of our own run directories: nothing a user wrote is ever deleted.
- Writers: a file or a whole directory is written under a temporary name
  (``.<name>.tmp-<pid>``) in the same directory and renamed into place, so a
  reader never sees half of it; a replaced directory is first renamed aside
  (``.<name>.old-<pid>``). remove_leftovers() clears what a killed writer
  left behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from harness.errors import ConfigError

RESULTS_ENV = "DDNN_HARNESS_RESULTS"

# What a run directory holds (harness.run.write_run_dir; cell.json in sweeps;
# plots/ from `harness plot`). Only a directory of these may be replaced.
RUN_FILES = frozenset({
    "config.json", "summary.json", "manifest.json", "cell.json", "flows.parquet",
    "queues.parquet", "utilization.parquet", "iterations.parquet", "transfers.parquet",
    "compute.parquet", "scheduler.parquet"})
RUN_FIGURES = frozenset({"training-timeline", "fct-cdf", "utilization"})  # plots/<stem>.<fmt>
FIGURE_FORMATS = frozenset({".png", ".pdf", ".svg"})

_LEFTOVER = re.compile(r"\..+\.(?:tmp|old)-(\d+)")


class OutputError(ConfigError):
    """An output path that cannot be used; raised before anything runs."""


# --------------------------------------------------------------------------
# default places


def results_root() -> Path:
    """$DDNN_HARNESS_RESULTS, else ./results."""
    env = os.environ.get(RESULTS_ENV)
    return Path(env).expanduser() if env else Path.cwd() / "results"


def safe_name(name: str) -> str:
    """A scenario or grid name as one safe path component: letters, digits,
    '.', '_' and '-' kept, anything else (/, .., spaces) becomes '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name)).strip(".-")
    return cleaned[:80] or "unnamed"


def default_run_dir(name: str, digest: str) -> Path:
    return results_root() / "runs" / f"{safe_name(name)}-{digest}"


def default_sweep_dir(name: str) -> Path:
    return results_root() / "sweeps" / safe_name(name)


# --------------------------------------------------------------------------
# checks, before anything runs


def is_run_dir(path: Path) -> bool:
    """A directory written by write_run_dir (and perhaps plotted), nothing else."""
    try:
        entries = list(Path(path).iterdir())
    except OSError:
        return False
    names = {e.name for e in entries}
    if not {"config.json", "manifest.json"} <= names:
        return False
    for entry in entries:
        if entry.name == "plots" and entry.is_dir():
            if not all(f.is_file() and f.stem in RUN_FIGURES and f.suffix in FIGURE_FORMATS
                       for f in entry.iterdir()):
                return False
        elif entry.name not in RUN_FILES or not entry.is_file():
            return False
    return True


def check_writable(directory: Path, field: str) -> None:
    """`directory` (created later if missing) can take new files: its nearest
    existing ancestor is a directory we can create entries in."""
    directory = Path(os.path.abspath(directory))
    existing = directory
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(field, f"{existing} is a file, not a directory")
    try:  # os.access misleads for root and for special file systems (/proc)
        os.rmdir(tempfile.mkdtemp(prefix=".ddnn-harness-probe-", dir=existing))
    except OSError as e:
        raise OutputError(field, f"cannot write in {existing}: {e.strerror or e}") from None


def check_run_dir(path: Path, field: str = "-o") -> Path:
    """An output run directory, checked before the simulation: absolute path
    returned. It may not exist yet, be empty, or be one of our run directories
    (replaced whole); anything else is refused."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    cwd = Path.cwd().resolve()
    real = path.resolve()
    if real == cwd or real in cwd.parents:
        raise OutputError(field, f"{path} is the current directory or holds it; a run "
                          "directory is written whole and renamed into place: give a new "
                          "name, e.g. -o my-run")
    if real.exists() or real.is_symlink():
        if not real.is_dir():
            raise OutputError(field, f"{path} exists and is not a directory")
        if any(real.iterdir()) and not is_run_dir(real):
            raise OutputError(field, f"{path} is not empty and is not a run directory; "
                              "nothing in it is replaced: choose a new or empty directory")
    check_writable(path.parent, field)
    return path


def check_sweep_dir(path: Path, field: str = "-o") -> Path:
    """An output sweep directory, checked before anything runs: new, empty, or
    holding a sweep (which --resume continues); absolute path returned."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    if path.exists():
        if not path.is_dir():
            raise OutputError(field, f"{path} exists and is not a directory")
        if any(path.iterdir()) and not (path / "sweep.json").is_file():
            raise OutputError(field, f"{path} is not empty and is not a sweep directory; "
                              "choose a new or empty directory")
        check_writable(path, field)
    else:
        check_writable(path.parent, field)
    return path


def check_new_file(path: Path, field: str, ours: Callable[[Path], bool]) -> Path:
    """An output file: new, or one of ours (`ours(path)`), which is replaced."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    if path.exists() and (not path.is_file() or not ours(path)):
        raise OutputError(field, f"{path} exists and was not written by the harness; "
                          "choose another file")
    check_writable(path.parent, field)
    return path


# --------------------------------------------------------------------------
# writers


def _temporary(path: Path) -> Path:
    return path.parent / f".{path.name}.tmp-{os.getpid()}"


def write_from(path: Path, produce: Callable[[Path], None]) -> Path:
    """Create a file whole: produce(tmp) writes it under a temporary name in
    the same directory (a figure, a compiler's output), which is then renamed
    into place, so a reader (or a racing writer) sees all of it or nothing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    try:
        produce(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_file(path: Path, data: bytes | str) -> None:
    """Write `data` (str: UTF-8) to `path` whole (write_from)."""
    write_from(path, lambda tmp: tmp.write_bytes(data.encode() if isinstance(data, str) else data))


def write_dir(out_dir: Path, fill: Callable[[Path], None], existing: str = "replace") -> Path:
    """Create a directory whole: fill(tmp) writes the files into a temporary
    directory beside it, which is then renamed into place.
    existing: what to do if out_dir is there by then: "replace" it if it is
    empty or one of our run directories (else OutputError: never deleted),
    or "keep" it and drop the new one (it holds the same results)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(out_dir)
    if tmp.exists():  # this process's own leftover
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        fill(tmp)
        if not out_dir.exists():
            os.replace(tmp, out_dir)
        elif existing == "keep":
            shutil.rmtree(tmp)
        elif out_dir.is_dir() and not any(out_dir.iterdir()):
            os.replace(tmp, out_dir)  # over an empty directory: one atomic rename
        elif out_dir.is_dir() and is_run_dir(out_dir):
            old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old)
        else:
            raise OutputError("-o", f"{out_dir} is not empty and is not a run directory; "
                              "nothing in it is replaced")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out_dir


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # ours, and not being written now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(directory: Path) -> list[Path]:
    """Remove `.<name>.tmp-<pid>` and `.<name>.old-<pid>` entries of writers
    that are gone (killed mid-write); returns what was removed."""
    removed = []
    directory = Path(directory)
    if not directory.is_dir():
        return removed
    for entry in directory.iterdir():
        m = _LEFTOVER.fullmatch(entry.name)
        if not m or _alive(int(m.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
