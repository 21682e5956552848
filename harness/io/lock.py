"""A directory's owner: one sweep at a time (the lock file, `.lock`, that
names its owner's pid, host and start; a stale lock of a dead process is
taken over, a user's own `.lock` file never touched)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from harness.config.errors import OutputError, shown_path


def temporary_name(path: Path) -> Path:
    """Where a writer of this process writes `path` before renaming it into
    place (outdir's writers and the lock file; remove_leftovers knows it)."""
    return path.parent / f".{path.name}.tmp-{os.getpid()}"


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # ours, and not being written now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


LOCK_NAME = ".lock"


#: what the harness's lock file holds (besides its owner: pid, host, since):
#: how its own lock is told from a user's file named .lock
LOCK_MARK = {"lock": "ddnn-harness sweep"}
OUTPUT_MARK = "ddnn-harness output"    # an OutputLock's
_LOCK_OWNER = ("pid", "host", "since")


def _lock_owner(text: str) -> dict | None:
    """The owner a lock file's text names, if it is the harness's lock (with
    its mark, or an older harness's: exactly pid, host and since)."""
    import json

    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or not all(k in record for k in _LOCK_OWNER):
        return None
    if set(record) - set(_LOCK_OWNER) and record.get("lock") not in (LOCK_MARK["lock"],
                                                                     OUTPUT_MARK):
        return None
    return record


def _held_by(owner: dict | None) -> str:
    """Who holds a lock, in a refusal's words: "pid 123 on host, since
    08:00:00" from its file (_lock_owner), else "another process"."""
    import time

    try:
        return (f"pid {owner['pid']} on {owner['host']}, since "
                f"{time.strftime('%H:%M:%S', time.localtime(owner['since']))}")
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        return "another process"


def is_lock_file(path: Path) -> bool:
    """`path` is the harness's own lock file: a plain file (not a link) that
    names its owner as DirectoryLock writes it."""
    try:
        if not os.path.isfile(path) or os.path.islink(path):
            return False
        with open(path, encoding="utf-8", errors="replace") as f:
            return _lock_owner(f.read(4096)) is not None
    except OSError:
        return False


class DirectoryLock:
    """Held while a sweep writes its directory: `<dir>/.lock`, locked with
    flock(2) and holding the owner's pid, host and start time. The kernel
    drops the lock when its process dies, however it dies, so a stale lock
    (a killed sweep) is simply taken over; a live one is refused at once
    with its owner named. The file stays (a lock file that is removed can be
    held by two processes at once).

    The file is the harness's own: made whole under a temporary name and
    linked into place (never over anything), opened without following a
    link, and rewritten only when it is the harness's lock. A link, a
    directory, or a user's file named .lock is refused by name, untouched."""

    def __init__(self, directory: Path, field: str = "-o") -> None:
        self.directory, self.field = Path(directory), field
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        return self.directory / LOCK_NAME

    def _owner_record(self) -> bytes:
        import json
        import socket
        import time

        return json.dumps({**LOCK_MARK, "pid": os.getpid(), "host": socket.gethostname(),
                           "since": time.time()}).encode()

    def _create(self) -> int | None:
        """Make the lock file, whole, where none is (None: one is there)."""
        tmp = temporary_name(self.path)
        try:
            if os.path.lexists(tmp):   # a leftover of a writer with this pid (remove_leftovers)
                os.unlink(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except OSError as e:
            raise OutputError(self.field, f"cannot write in {shown_path(self.directory)}: "
                              f"{e.strerror or e}") from None
        try:
            os.write(fd, self._owner_record())
        finally:
            os.close(fd)
        try:
            os.link(tmp, self.path, follow_symlinks=False)   # never over an existing name
        except FileExistsError:
            return None
        except OSError:   # a file system without hard links: create it exclusively
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
            except FileExistsError:
                return None
            os.write(fd, self._owner_record())
            return fd
        finally:
            tmp.unlink(missing_ok=True)
        return self._open_existing()

    def _refuse(self, what: str) -> "OutputError":
        return OutputError(self.field, f"{shown_path(self.path)} {what}; the harness locks a sweep "
                           f"directory with a {LOCK_NAME} file of its own and touches no "
                           "other: move it away, or choose another directory")

    def _open_existing(self) -> int:
        """The lock file there, opened without following a link; refused
        unless it is a plain file."""
        import stat

        try:   # O_NONBLOCK: a FIFO named .lock does not hang the open
            fd = os.open(self.path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            if os.path.islink(self.path):
                raise self._refuse("is a symbolic link") from None
            if os.path.isdir(self.path):
                raise self._refuse("is a directory") from None
            raise OutputError(self.field, f"cannot open {shown_path(self.path)} to lock the sweep "
                              f"directory ({e.strerror or e})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self._refuse("is not a plain file")
        return fd

    def acquire(self, write: bool = True) -> "DirectoryLock":
        import fcntl

        fd = None if os.path.lexists(self.path) else self._create()
        created = fd is not None
        if fd is None:
            fd = self._open_existing()
        try:
            owner = _lock_owner(os.pread(fd, 4096, 0).decode(errors="replace"))
            if owner is None and not created:
                raise self._refuse("is not the harness's lock file (a file of yours?)")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise OutputError(self.field, f"{self.directory} is in use by a running "
                                  f"sweep ({_held_by(owner)}); wait for it to end (or stop "
                                  "it), then --resume")
        except BaseException:
            os.close(fd)
            raise
        if write:   # the harness's own file (checked above): now naming this process
            record = self._owner_record()
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))
        self._fd = fd
        return self

    @classmethod
    def check_free(cls, directory: Path, field: str = "-o") -> None:
        """OutputError now if a running sweep holds `directory`'s lock (a
        check before anything is printed or planned; the sweep takes the lock
        itself when it starts)."""
        if os.path.lexists(Path(directory) / LOCK_NAME):   # a link or a directory too
            cls(directory, field).acquire(write=False).release()

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> "DirectoryLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


# --------------------------------------------------------------------------
# an output's writer: one harness command at a time


def lock_name(name: str) -> str:
    """The lock file's name beside an output called `name`: .<name>.lock, or
    where that would not fit a file name (255 bytes) one made of its digest."""
    import hashlib

    plain = f".{name}.lock"
    if len(plain.encode()) <= 255:
        return plain
    return f".ddnn-harness-{hashlib.sha256(name.encode()).hexdigest()[:24]}.lock"


class OutputLock:
    """Held from the checks of an output (a run directory, an export, a
    table, figures, a sweep directory) until it is written: the file
    `.<name>.lock` beside the output, locked with flock(2), naming its
    owner. Every command that writes an output takes it (outdir's checks),
    so two commands given the same -o are never both past their checks:
    the second is refused at once, its owner named, and nothing it would
    write replaces what the first makes. The kernel drops the lock when its
    process dies; the file is removed by its holder when it lets go (a
    taker checks it holds the file that is there, not one since removed)."""

    def __init__(self, output: Path, field: str = "-o") -> None:
        self.output, self.field = Path(output), field
        self.path = self.output.parent / lock_name(self.output.name)
        self._fd: int | None = None
        self._made: list[Path] = []   # the folders acquire made for it, innermost first

    def acquire(self) -> "OutputLock":
        # the folders the output goes in: made now for the lock file beside
        # it, removed again on release where nothing was written in them
        self._made = [p for p in (self.output.parent, *self.output.parent.parents)
                      if not os.path.lexists(p)]
        try:
            self.output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self._made = []
            raise OutputError(self.field, f"cannot create {shown_path(self.output.parent)}: "
                              f"{e.strerror or e}") from None
        try:
            return self._take()
        except BaseException:
            self._remove_made()
            raise

    def _remove_made(self) -> None:
        for folder in self._made:
            try:
                folder.rmdir()
            except OSError:
                break   # something was written in it (or in one below): kept

    def _take(self) -> "OutputLock":
        import fcntl
        import stat
        import time

        for _ in range(10):   # the file was removed by a holder between our open and flock
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
                             0o644)
            except OSError as e:
                raise OutputError(self.field, f"cannot lock {shown_path(self.output)} for "
                                  f"writing ({shown_path(self.path)}: {e.strerror or e})") from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise OutputError(self.field, f"{shown_path(self.path)} is not a plain file; "
                                  "the harness locks an output with a file of that name: move it "
                                  "away")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner = _lock_owner(os.pread(fd, 4096, 0).decode(errors="replace"))
                os.close(fd)
                raise OutputError(self.field, f"{shown_path(self.output)} is being written by "
                                  f"another harness command ({_held_by(owner)}); wait for it "
                                  "to end, or choose another output") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino
            except OSError:
                same = False
            if same:
                break
            os.close(fd)
        else:
            raise OutputError(self.field, f"cannot lock {shown_path(self.output)} for writing: "
                              f"{shown_path(self.path)} keeps being replaced")
        import json
        import socket

        record = json.dumps({"lock": OUTPUT_MARK, "pid": os.getpid(),
                             "host": socket.gethostname(), "since": time.time()}).encode()
        try:   # who holds it, for the refusal's words: on a full disk, unsaid
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))
        except OSError:
            pass
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.unlink(self.path)   # still ours: we hold the lock on it
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None
            self._remove_made()


#: the outputs this process holds, by resolved path: a check made twice (a
#: command's and its writer's) takes the lock once
_HELD: dict[Path, OutputLock] = {}


def hold_output(output: Path, field: str = "-o") -> None:
    """Take `output`'s OutputLock for this process (again: a no-op) until
    release_output or the process's end."""
    output = Path(output)
    if output in _HELD:
        return
    if not _HELD:
        import atexit

        atexit.register(release_all)
    _HELD[output] = OutputLock(output, field).acquire()


def release_output(output: Path) -> None:
    """Let `output` go (written, or given up); a no-op where not held."""
    held = _HELD.pop(Path(output), None)
    if held is not None:
        held.release()


def release_all() -> None:
    for output in list(_HELD):
        release_output(output)


@contextlib.contextmanager
def writing():
    """Every output taken inside is let go at the end, written or not (a
    command's or an API call's whole span: a check that passed before a
    later one failed leaves no lock behind)."""
    before = set(_HELD)
    try:
        yield
    finally:
        for output in [o for o in _HELD if o not in before]:
            release_output(output)
