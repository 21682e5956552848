"""The environment variables the harness reads: one table, one rule.

Every variable the code reads is listed in VARIABLES (documented from it in
docs/user-guide/environment.md) and read through this module:

- a switch (`flag`) is on for 1/true/yes/on and off for 0/false/no/off (any
  case, spaces around ignored); unset or empty is its default; any other
  value is refused;
- a directory (`directory`) is expanded (`~`, `~user`) and must be, or be
  creatable as, a directory the harness can write in: a file, a read-only
  place or an unknown `~user` is refused;
- a program (`program`) must be found on PATH.

A refusal is a ConfigError naming the variable and what it allows: one line
`error: NAME: ...` and exit code 2 from the `harness` command, which checks
its switches before any command runs (`check`), and the directories and the
compiler a simulation needs before it starts (harness.engine.ns3
.check_environment). This module imports only the errors, so every layer
(the outputs' results directory, the engine's cache and switches, the
launcher's huge pages) reads its variables here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from harness.config.errors import ConfigError

ON = ("1", "true", "yes", "on")
OFF = ("0", "false", "no", "off")
ALLOWED_FLAG = "expected 1 or 0 (also true/false, yes/no, on/off)"


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str        # "flag", "directory", "program", or "passed" (read as another tool reads it)
    default: str     # what unset means, in words
    meaning: str


VARIABLES = (
    Variable("DDNN_HARNESS_RESULTS", "directory", "./results",
             "where runs and sweeps go when no -o is given (runs/, sweeps/ under it)"),
    Variable("DDNN_HARNESS_CACHE", "directory", "$XDG_CACHE_HOME/ddnn-harness",
             "the compiled C++ libraries and the precompiled header (one-off builds)"),
    Variable("XDG_CACHE_HOME", "directory", "~/.cache",
             "the cache's parent when DDNN_HARNESS_CACHE is not set"),
    Variable("DDNN_HARNESS_HUGE_PAGES", "flag", "on",
             "the simulation processes' heap on transparent huge pages (glibc's "
             "glibc.malloc.hugetlb tunable; a tunable set in GLIBC_TUNABLES wins)"),
    Variable("DDNN_HARNESS_STOCK_TCP", "flag", "off",
             "run the ns3 wheel's own TcpTxBuffer instead of the harness's fast path"),
    Variable("DDNN_HARNESS_TCP_CROSSCHECK", "flag", "off",
             "build the fast path's debug variant that checks every call against the "
             "wheel's member (slow)"),
    Variable("DDNN_HARNESS_NO_PCH", "flag", "off",
             "do not build or use the precompiled header of the ns-3 headers (each process "
             "then parses them itself: a slower start)"),
    Variable("DDNN_HARNESS_NS3_BUILD", "ns-3 build", "the ns3 wheel (or `harness engine use`'s "
             "choice)", "run on this ns-3.44 build (optimized or release profile) instead of "
             "the ns3 wheel: checked before anything runs"),
    Variable("XDG_CONFIG_HOME", "directory", "~/.config",
             "where `harness engine use` keeps its choice (ddnn-harness/engine.json)"),
    Variable("CXX", "program", "g++", "the C++ compiler of ns3-modules/ (and of the bench's "
             "native binary)"),
    Variable("CC", "program", "gcc", "the bench's C compiler (python -m bench only)"),
    Variable("GLIBC_TUNABLES", "passed", "unset",
             "read to see whether the huge-page tunable is set already; passed on to glibc"),
    Variable("EXTRA_CLING_ARGS", "passed", "unset",
             "cppyy's own; read as cppyy reads it, so that the precompiled header matches"),
    Variable("STDCXX", "passed", "unset", "cppyy's own, as above"),
    Variable("CLING_ENABLE_CUDA", "passed", "unset", "cppyy's own, as above"),
    Variable("CLING_STANDARD_PCH", "passed", "unset",
             "cppyy's own: set by the harness to its precompiled header"),
    Variable("CLING_REBUILD_PCH", "passed", "unset",
             "cppyy's own: set to 0 by the harness, which builds the header itself"),
    Variable("HOME", "directory", "the user's home",
             "where the cache goes when neither cache variable is set (~/.cache)"),
)
FLAGS = {v.name: v.default == "on" for v in VARIABLES if v.kind == "flag"}


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """A switch of VARIABLES: on/off by the one rule; ConfigError naming it
    for any other value."""
    value = _env(env).get(name, "")
    word = value.strip().lower()
    if word == "":
        return FLAGS[name]
    if word in ON:
        return True
    if word in OFF:
        return False
    raise ConfigError(name, f"{ALLOWED_FLAG}; got {_shown(value)}")


def _shown(value: str) -> str:
    from harness.config.errors import shorten

    return shorten(value)


def directory(name: str, env: Mapping[str, str] | None = None,
              writable: bool = True) -> Path | None:
    """A directory variable's path (None: unset or empty), checked: `~` and
    `~user` expanded (an unknown user refused), and the nearest existing
    part a directory the harness can write in (writable)."""
    value = _env(env).get(name, "")
    if not value:
        return None
    path = Path(os.path.expanduser(value))
    if str(path).startswith("~"):
        user = value[1:].split("/", 1)[0]
        raise ConfigError(name, f"{_shown(value)} names the home of {_shown(user)}, which "
                          "is not a user here; give a path, or ~ for your own home")
    check_directory(name, path, writable)
    return path


def check_directory(name: str, path: Path, writable: bool = True) -> None:
    """`path` is, or can be made as, a directory the harness writes in; a
    ConfigError naming `name` (the variable that gave it) otherwise."""
    existing = Path(os.path.abspath(path))
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is" if existing == Path(os.path.abspath(path)) else f"is under {existing}, which is"
        kind = ("a symbolic link to nothing" if existing.is_symlink() and not existing.exists()
                else "a file")
        raise ConfigError(name, f"{_shown(str(path))} {what} {kind}, not a directory; give a "
                          "directory (it is made if missing)")
    if not writable:
        return
    try:   # os.access misleads for root and on read-only mounts
        os.rmdir(tempfile.mkdtemp(prefix=".ddnn-harness-probe-", dir=existing))
    except OSError as e:
        raise ConfigError(name, f"cannot write in {_shown(str(existing))} "
                          f"({e.strerror or e}); give a directory the harness can write "
                          "in") from None


def program(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    """A program variable (a compiler): its value, or `default`, found on
    PATH; a ConfigError naming the variable otherwise."""
    value = _env(env).get(name, "").strip() or default
    if shutil.which(value) is None:
        given = "" if _env(env).get(name, "").strip() else f" ({name} is not set)"
        raise ConfigError(name, f"compiler {_shown(value)} not found on PATH{given}: install "
                          f"it, or set {name} to one that is (e.g. {name}={default})")
    return value


def check(env: Mapping[str, str] | None = None) -> None:
    """Every switch of VARIABLES, as it is set now (no file system touched):
    the `harness` command calls this before any command runs, so a bad value
    is found before anything is planned, whichever process would read it."""
    for name in FLAGS:
        flag(name, env)
