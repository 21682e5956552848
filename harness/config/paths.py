"""Where the package finds its data files, and finding one by name or path.

The data (C++ sources of ns3-modules/, topologies/, workloads/) lives at the
top of the repository; pyproject.toml maps each folder into the wheel as a
data-only package inside `harness` (harness/ns3_modules, harness/topologies,
harness/workloads). An installed wheel finds them there; an editable install
or a plain checkout has no such folders inside the package and reads the
repository's own. Nothing else in the code knows where the data lives.

Its own module (errors only below it) so that every layer can find a data
file without importing the scenario schema (harness.config.scenario re-exports it).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.config.errors import ConfigError, shorten

PACKAGE_DIR = Path(__file__).resolve().parents[1]   # harness/ (this is harness/config/paths.py)


def _data_dir(folder: str, package: str) -> Path:
    """`folder` of the repository, as shipped in the wheel (harness/<package>)
    or, in a checkout or editable install, at the repository's top."""
    shipped = PACKAGE_DIR / package
    return shipped if shipped.is_dir() else PACKAGE_DIR.parent / folder


MODULES_DIR = _data_dir("ns3-modules", "ns3_modules")
TOPOLOGIES_DIR = _data_dir("topologies", "topologies")
WORKLOADS_DIR = _data_dir("workloads", "workloads")
SCENARIOS_DIR = WORKLOADS_DIR / "scenarios"
SWEEPS_DIR = WORKLOADS_DIR / "sweeps"
CDF_DIR = WORKLOADS_DIR / "cdf"
PROFILES_DIR = WORKLOADS_DIR / "profiles"
MODELS_DIR = WORKLOADS_DIR / "models"               # model architectures (harness profile --model)
ACCELERATORS_DIR = WORKLOADS_DIR / "accelerators"   # and what computes them (--accelerator)
#: cached cells kept in the repository (harness.sweeps.cell_cache), one folder each
REFERENCE_DIR = WORKLOADS_DIR / "reference"
#: the documentation's pages (docs/; in the wheel harness/docs: `harness docs`)
DOCS_DIR = _data_dir("docs", "docs")


def builtin_names(directory: Path, suffix: str) -> list[str]:
    """The names of the built-in files of one kind (scenarios, CDFs, ...)."""
    return sorted(p.name[:-len(suffix)] for p in directory.glob(f"*{suffix}"))


def resolve_data_file(name: str, directory: Path, suffix: str, what: str) -> Path:
    """A data file by name (in `directory`) or by path."""
    known = ", ".join(builtin_names(directory, suffix))
    if not isinstance(name, (str, Path)) or not str(name):
        raise ConfigError(what, f"expected a name or path, got {shorten(name)}; built-in: {known}")
    candidates = [Path(name), directory / name, directory / f"{name}{suffix}"]
    for c in candidates:
        if os.path.isfile(c):  # False (no OSError) for a name too long for the file system
            return c
    raise ConfigError(what, f"no file {shorten(name)}; give a path or one of: {known}")
