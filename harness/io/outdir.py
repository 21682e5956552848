"""Where results go, and the one way they are written.

- Default places: under ``$DDNN_HARNESS_RESULTS`` if set, else ``./results``
  (the current directory's), as ``runs/<name>-<digest>`` and
  ``sweeps/<name>``, with the scenario's or grid's name reduced to a safe
  file name (no ``..``, no ``/``).
- Checks made before any simulation: an output path must be creatable and
  writable, and an existing directory is replaced only when it is empty or
  one of our own run directories: nothing a user wrote is ever deleted. A
  figure directory is written into only when it holds nothing but our own
  figures, a file replaced only when we wrote it. Names must fit the file
  system with the writer's temporary name (NAME_MAX), and the file system
  must have room for a rough estimate of the output.
- Symbolic links: a link to an existing file or directory is followed, the
  target is what is checked and written (the link stays, pointing at the
  new output); a dangling link is refused. Checks and writers resolve the
  same way (resolve()), so they agree.
- Writers: a file or a whole directory is written under a temporary name
  (``.<name>.tmp-<pid>``) in the same directory and renamed into place, so a
  reader never sees half of it; a replaced directory is first renamed aside
  (``.<name>.old-<pid>``). remove_leftovers() clears what a killed writer
  left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from harness.config.errors import OutputError, shorten, shown_path
from harness.io import lock
from harness.io.lock import LOCK_NAME, DirectoryLock, is_lock_file, temporary_name

RESULTS_ENV = "DDNN_HARNESS_RESULTS"

# What a run directory holds (harness.engine.simulation.write_run_dir; cell.json in sweeps;
# plots/ from `harness plot`). Only a directory of these may be replaced.
RUN_FILES = frozenset({
    "config.json", "summary.json", "manifest.json", "cell.json", "flows.parquet",
    "queues.parquet", "utilization.parquet", "iterations.parquet", "transfers.parquet",
    "compute.parquet", "scheduler.parquet", "services.parquet", "streams.parquet",
    "queue_samples.parquet", "pfc.parquet", "rdma.parquet"})
# `harness plot RUN`'s figures (plots/<stem>.<fmt>), part of what a run
# directory holds, so that every writer of one tells it from a user's. Every
# other figure name is harness.outputs.plots.registry's, above this layer:
# the figure-directory checks take the names from their caller (`names`).
RUN_FIGURES = frozenset({"training-timeline", "job-phases", "fct-cdf", "service-latency",
                         "utilization"})
FIGURE_FORMATS = frozenset({".png", ".pdf", ".svg"})
#: `harness plot SWEEP --metric NAME`'s map of one deltas metric: map-<NAME>
#: (a name pattern, not one figure: it is accepted wherever figures are)
METRIC_MAP = re.compile(r"map-[a-z0-9_]{1,40}")
#: a rough size of one figure file (measured 15-130 kB: PDFs smallest, a
#: timeline's SVG largest), for the free-space check
FIGURE_BYTES = 128 * 1024
#: digits of the largest pid (pid_max is at most 2**22): the writers' temporary
#: names .<name>.tmp-<pid> are checked at their longest
_PID_DIGITS = 7

_LEFTOVER = re.compile(r"\..+\.(?:tmp|old)-(\d+)")


# --------------------------------------------------------------------------
# default places


def results_root() -> Path:
    """$DDNN_HARNESS_RESULTS, else ./results. The variable is checked as every
    directory variable is (harness.config.environment: a file, a read-only
    place or an unknown ~user is one error naming it, before anything runs)."""
    from harness.config import environment

    return environment.directory(RESULTS_ENV) or Path.cwd() / "results"


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


def resolve(path: Path, field: str = "-o") -> Path:
    """The path a writer writes for `path`: absolute, ~ expanded, every
    symbolic link followed. A link to an existing file or directory stands
    for its target (checked, written or replaced there; the link stays and
    points at the new output). A dangling link or a loop, here or in a
    parent, is refused: what it would create is not clear. Every check and
    every writer goes through here, so they agree."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    for part in (path, *path.parents):
        if os.path.islink(part) and not os.path.exists(part):
            try:
                target = f" to {shown_path(os.readlink(part))!r}"   # a path: its end matters
            except OSError:
                target = ""
            raise OutputError(field, f"{shown_path(part)} is a symbolic link{target}, which does not "
                              "exist (or loops); give an existing target or a new name")
    return Path(os.path.realpath(path))


def _existing_ancestor(path: Path) -> Path:
    existing = Path(path)
    while not os.path.exists(existing) and existing != existing.parent:
        existing = existing.parent
    return existing


def _pathconf(path: Path, name: str, default: int) -> int:
    try:
        value = os.pathconf(path, name)
    except (OSError, ValueError):
        return default
    return value if value and value > 0 else default


def _is_figure(entry: Path, names: frozenset[str] = RUN_FIGURES) -> bool:
    """One of our figure files (<stem>.<fmt>, stem one of `names` or a metric
    map), or a killed writer's leftover of one."""
    name = entry.name
    if _LEFTOVER.fullmatch(name):
        name = name[1:].rsplit(".", 1)[0]
    stem, dot, fmt = name.rpartition(".")
    ours = stem in names or bool(METRIC_MAP.fullmatch(stem))
    return (bool(dot) and ours and f".{fmt}" in FIGURE_FORMATS
            and not entry.is_symlink() and entry.is_file())


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
        if entry.name == "plots" and entry.is_dir() and not entry.is_symlink():
            if not is_figure_dir(entry):
                return False
        elif entry.name not in RUN_FILES or not entry.is_file():
            return False
    return True


def is_figure_dir(path: Path, names: frozenset[str] = RUN_FIGURES) -> bool:
    """A directory holding nothing but the harness's figures (or nothing):
    `harness plot` may write into it. names: the figure stems that are ours
    (default a run's, as in a run directory's plots/)."""
    try:
        return all(_is_figure(entry, names) for entry in Path(path).iterdir())
    except OSError:
        return False


def check_names(path: Path, field: str, temporary: bool = True) -> None:
    """The names `path` will create fit its file system: each new component,
    and (temporary) the writer's temporary name .<name>.tmp-<pid> beside it,
    at most NAME_MAX bytes, the whole path less than PATH_MAX."""
    path = Path(path)
    existing = _existing_ancestor(path)
    name_max = _pathconf(existing, "PC_NAME_MAX", 255)
    path_max = _pathconf(existing, "PC_PATH_MAX", 4096)
    names = [(name, name) for name in path.relative_to(existing).parts]
    longest = path
    if temporary and path.name:
        tmp = f".{path.name}.tmp-{'0' * _PID_DIGITS}"
        names.append((tmp, path.name))
        longest = path.parent / tmp
    for name, given in names:
        size = len(os.fsencode(name))
        if size > name_max:
            room = name_max - (size - len(os.fsencode(given)))
            how = (f"it is written under the temporary name .NAME.tmp-PID first, so NAME may "
                   f"have at most {room} bytes" if name != given else
                   f"a name there has at most {name_max} bytes")
            raise OutputError(field, f"the name {shorten(given, 60)} is too long for the file "
                              f"system of {shown_path(existing)} ({len(os.fsencode(given))} bytes; "
                              f"{how}); choose a shorter name")
    if len(os.fsencode(str(longest))) >= path_max:
        raise OutputError(field, f"{shown_path(path)} is too long a path for the file system of "
                          f"{shown_path(existing)} (at most {path_max - 1} bytes, with the "
                          "temporary name the harness writes first); choose a shorter one")


def _size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def check_space(path: Path, size: float, field: str, what: str = "the output") -> None:
    """The file system that will hold `path` has room for `size` bytes (a
    rough estimate of what will be written) and a free inode; checked
    before anything runs, so that a full disk is not found after it."""
    existing = _existing_ancestor(Path(path))
    try:
        st = os.statvfs(existing)
    except OSError:
        return  # nothing to measure: the writer reports what goes wrong
    free = st.f_bavail * st.f_frsize
    size = max(size, st.f_frsize or 4096)  # any new file takes a block
    if free < size:
        raise OutputError(field, f"{shown_path(path)}: {what} would take about {_size(size)} (a "
                          f"rough estimate) but the file system of {shown_path(existing)} has "
                          f"{_size(free)} free; free some space or choose another place")
    if st.f_files and not st.f_favail:
        raise OutputError(field, f"{shown_path(path)}: the file system of {shown_path(existing)} has no "
                          "free inodes (no new file can be made); free some or choose another "
                          "place")


def check_writable(directory: Path, field: str) -> None:
    """`directory` (created later if missing) can take new files: its nearest
    existing ancestor is a directory we can create entries in (a read-only
    file system or mount is refused, for root too)."""
    existing = _existing_ancestor(Path(os.path.abspath(directory)))
    if not existing.is_dir():
        raise OutputError(field, f"{shown_path(existing)} is a file, not a directory")
    try:  # os.access misleads for root and for special file systems (/proc)
        os.rmdir(tempfile.mkdtemp(prefix=".ddnn-harness-probe-", dir=existing))
    except OSError as e:
        raise OutputError(field, f"cannot write in {shown_path(existing)}: {e.strerror or e}") from None


def remove_leftovers_of(path: Path) -> list[Path]:
    """What a killed writer of `path` left beside it (its .<name>.tmp-<pid>
    and .<name>.old-<pid>, the pid gone), removed; returns what was."""
    path = Path(path)
    return remove_leftovers(path.parent, path.name)


@contextlib.contextmanager
def _writer_of(path: Path, field: str):
    """The checks of an output made while holding its lock (lock.hold_output:
    two commands with the same -o are never both past them); a check that
    fails lets it go. A killed writer's leftovers of it are removed first."""
    lock.hold_output(path, field)
    try:
        remove_leftovers_of(path)
        yield
    except BaseException:
        lock.release_output(path)
        raise


def check_run_dir(path: Path, field: str = "-o", size: float = 0) -> Path:
    """An output run directory, checked before the simulation: its resolved
    absolute path (resolve()) returned. It may not exist yet, be empty, or be
    one of our run directories (replaced whole); anything else is refused.
    size: a rough estimate of the run's files (run.output_bytes), checked
    against the free space."""
    path = resolve(path, field)
    cwd = Path.cwd().resolve()
    if path == cwd or path in cwd.parents:
        raise OutputError(field, f"{shown_path(path)} is the current directory or holds it; a run "
                          "directory is written whole and renamed into place: give a new "
                          "name, e.g. -o my-run")
    check_names(path, field)
    check_writable(path.parent, field)
    check_space(path, size, field, "the run directory")
    with _writer_of(path, field):
        if os.path.lexists(path):
            if not path.is_dir():
                raise OutputError(field, f"{shown_path(path)} exists and is not a directory")
            if any(path.iterdir()) and not is_run_dir(path):
                raise OutputError(field, f"{shown_path(path)} is not empty and is not a run "
                                  "directory; nothing in it is replaced: choose a new or empty "
                                  "directory")
    return path


#: What a sweep directory holds before its sweep.json is written: a sweep
#: stopped there (a full disk, a kill) left it half-made, with no cell run.
SWEEP_SKELETON = frozenset({"cells", "failed", "logs", "grid.toml", ".lock"})


def is_half_made_sweep(path: Path) -> bool:
    """A sweep directory without sweep.json in which nothing ran: safe to
    start again (its entries are ours and empty)."""
    try:
        entries = list(Path(path).iterdir())
    except OSError:
        return False
    return (bool(entries) and not (Path(path) / "sweep.json").exists()
            and all(is_lock_file(e) if e.name == LOCK_NAME else
                    e.name in SWEEP_SKELETON and not e.is_symlink()
                    and (not e.is_dir() or not any(e.iterdir()))
                    for e in entries))


def clear_half_made_sweep(path: Path) -> None:
    for entry in Path(path).iterdir():
        if entry.name == ".lock":
            continue  # held by the caller
        entry.rmdir() if entry.is_dir() else entry.unlink()


def check_sweep_dir(path: Path, field: str = "-o") -> Path:
    """An output sweep directory, checked before anything runs: new, empty,
    half-made (started again), or holding a sweep (which --resume continues,
    unless a running sweep holds its lock); its resolved absolute path
    returned. Its free space is the caller's to check (check_space), with
    the cells it will run."""
    path = resolve(path, field)
    check_names(path, field, temporary=False)
    if os.path.lexists(path):
        if not path.is_dir():
            raise OutputError(field, f"{shown_path(path)} exists and is not a directory")
        DirectoryLock.check_free(path, field)
        if (any(path.iterdir()) and not (path / "sweep.json").is_file()
                and not is_half_made_sweep(path)):
            raise OutputError(field, f"{shown_path(path)} is not empty and is not a sweep directory; "
                              "choose a new or empty directory")
        check_writable(path, field)
    else:
        check_writable(path.parent, field)
        # a new one: no other command may make it meanwhile (an existing
        # sweep's own lock, DirectoryLock, holds it against a second sweep)
        with _writer_of(path, field):
            pass
    return path


def check_new_dir(path: Path, field: str, what: str = "the directory") -> Path:
    """A directory that must not exist yet (cached cells: never
    replaced); its resolved absolute path returned. Its name is checked
    first (a name too long for the file system is that, whether or not
    something of that name could exist), then that it is new and that its
    parent can take it. Its free space is the caller's (check_space)."""
    path = resolve(path, field)
    check_names(path, field)
    check_writable(path.parent, field)
    with _writer_of(path, field):
        if os.path.lexists(path):
            raise OutputError(field, f"{shown_path(path)} exists; give a new directory ({what} "
                              "is never overwritten)")
    return path


def check_new_file(path: Path, field: str, ours: Callable[[Path], bool],
                   size: float = 0) -> Path:
    """An output file: new, or one of ours (`ours(path)`), which is replaced;
    its resolved absolute path returned. size: a rough estimate of it."""
    path = resolve(path, field)
    check_names(path, field)
    check_writable(path.parent, field)
    check_space(path, size, field, "the file")
    with _writer_of(path, field):
        if os.path.lexists(path) and (not path.is_file() or not ours(path)):
            raise OutputError(field, f"{shown_path(path)} exists and was not written by the "
                              "harness; choose another file")
    return path


def check_figure_dir(path: Path, field: str = "-o", formats: tuple[str, ...] = ("png", "pdf"),
                     figures: int | None = None,
                     names: frozenset[str] = RUN_FIGURES) -> Path:
    """A directory for `harness plot`'s figures, checked before anything is
    drawn: new, empty, or holding nothing but the harness's own figures
    (<stem>.<fmt>, stem one of `names`: the caller's, every figure of ours
    (harness.outputs.plots.registry.FIGURE_NAMES); those of the same name are
    replaced). A user's file in it, or a link, is refused: nothing of theirs
    is overwritten. figures: how many may be drawn, for the space estimate
    (default: one per name)."""
    path = resolve(path, field)
    figures = len(names) if figures is None else figures
    longest = max((f"{stem}.{fmt}" for stem in names for fmt in formats),
                  key=len, default="")
    check_names(path / longest if longest else path, field)
    check_writable(path.parent if not os.path.lexists(path) else path, field)
    check_space(path, figures * len(formats) * FIGURE_BYTES, field, "the figures")
    with _writer_of(path, field):
        if os.path.lexists(path):
            if not path.is_dir():
                raise OutputError(field, f"{shown_path(path)} exists and is not a directory")
            if not is_figure_dir(path, names):
                theirs = sorted(e.name for e in path.iterdir() if not _is_figure(e, names))
                named = ", ".join(shorten(n, 40) for n in theirs[:3]) + \
                    (f" and {len(theirs) - 3} more" if len(theirs) > 3 else "")
                raise OutputError(field, f"{shown_path(path)} holds files the harness did not "
                                  f"write ({named}); figures go only into a new directory or "
                                  "one holding nothing but the harness's figures: choose "
                                  "another")
            check_writable(path, field)
    return path


# --------------------------------------------------------------------------
# writers


def write_from(path: Path, produce: Callable[[Path], None]) -> Path:
    """Create a file whole: produce(tmp) writes it under a temporary name in
    the same directory (a figure, a compiler's output), which is then renamed
    into place, so a reader (or a racing writer) sees all of it or nothing.
    A link at `path` is followed (resolve(), as the checks do): its target
    is replaced, the link stays."""
    path = resolve(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        produce(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        lock.release_output(path)   # written (or given up): another command may now
    return path


def write_file(path: Path, data: bytes | str) -> None:
    """Write `data` (str: UTF-8) to `path` whole (write_from)."""
    write_from(path, lambda tmp: tmp.write_bytes(data.encode() if isinstance(data, str) else data))


def write_dir(out_dir: Path, fill: Callable[[Path], None], existing: str = "replace",
              ours: Callable[[Path], bool] = is_run_dir, what: str = "a run directory") -> Path:
    """Create a directory whole: fill(tmp) writes the files into a temporary
    directory beside it, which is then renamed into place.
    existing: what to do if out_dir is there by then: "replace" it if it is
    empty or ours(out_dir), one of our directories of its kind (`what`; by
    default a run directory; else OutputError: never deleted), or "keep" it
    and drop the new one (it holds the same results).
    A link at out_dir is followed (resolve(), as check_run_dir does): the
    directory it points at is replaced, the link stays."""
    out_dir = resolve(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(out_dir)
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
        elif out_dir.is_dir() and ours(out_dir):
            old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)  # what stays, remove_leftovers clears
        else:
            raise OutputError("-o", f"{shown_path(out_dir)} is not empty and is not {what}; "
                              "nothing in it is replaced")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        lock.release_output(out_dir)
    return out_dir


def remove_leftovers(directory: Path, name: str | None = None) -> list[Path]:
    """Remove `.<name>.tmp-<pid>` and `.<name>.old-<pid>` entries of writers
    that are gone (killed mid-write), of every name or of `name` only;
    returns what was removed."""
    removed = []
    directory = Path(directory)
    pattern = _LEFTOVER if name is None else re.compile(
        rf"\.{re.escape(name)}\.(?:tmp|old)-(\d+)")
    try:
        entries = list(directory.iterdir())
    except OSError:   # not a directory (yet), or unreadable: nothing of ours to clear
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if not m or lock.process_alive(int(m.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
