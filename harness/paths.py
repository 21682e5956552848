"""Where the repository keeps its data files, and finding one by name or path.

Its own module (errors only below it) so that every layer can find a data
file without importing the scenario schema (harness.config re-exports it).
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import ConfigError

REPO_DIR = Path(__file__).resolve().parent.parent
TOPOLOGIES_DIR = REPO_DIR / "topologies"
WORKLOADS_DIR = REPO_DIR / "workloads"
SCENARIOS_DIR = WORKLOADS_DIR / "scenarios"
SWEEPS_DIR = WORKLOADS_DIR / "sweeps"
CDF_DIR = WORKLOADS_DIR / "cdf"
PROFILES_DIR = WORKLOADS_DIR / "profiles"


def builtin_names(directory: Path, suffix: str) -> list[str]:
    """The names of the built-in files of one kind (scenarios, CDFs, ...)."""
    return sorted(p.name[:-len(suffix)] for p in directory.glob(f"*{suffix}"))


def resolve_data_file(name: str, directory: Path, suffix: str, what: str) -> Path:
    """A data file by name (in `directory`) or by path."""
    known = ", ".join(builtin_names(directory, suffix))
    if not isinstance(name, (str, Path)) or not str(name):
        raise ConfigError(what, f"expected a name or path, got {name!r}; built-in: {known}")
    candidates = [Path(name), directory / name, directory / f"{name}{suffix}"]
    for c in candidates:
        if c.is_file():
            return c
    raise ConfigError(what, f"no file {name!r}; give a path or one of: {known}")
