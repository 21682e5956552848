"""Keeping a finished sweep's results as a finding's kept sweep: its compact
tables, cells, settings and provenance copied into its folder under
workloads/findings/ (replaced whole, atomically), and the checks that the
folder is one this wrote. A kept sweep needs no simulation to be checked
(harness.findings.checking)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
from pathlib import Path

from harness.config.errors import ConfigError
from harness.config.paths import PACKAGE_DIR
from harness.findings.registry import DERIVED_TABLES, PROVENANCE, SETTINGS, KeptSweep
from harness.findings.settings import flat, settings_record
from harness.io import outdir

#: the tables kept of a sweep directory (those it has), whole
KEPT_TABLES = ("summary.parquet", "deltas.parquet", "deltas_mean.parquet",
               "causes.parquet", "training_causes.parquet", "service_causes.parquet",
               "scale_check.parquet",
               "boundary.parquet", "probes.parquet")
KEPT_FILES = ("sweep.json", "grid.toml")


def head_commit() -> str:
    """This checkout's commit (12 digits), "+changes" where tracked files
    differ from it; "unknown" outside a git checkout: a kept result's provenance."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, cwd=PACKAGE_DIR, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=PACKAGE_DIR).stdout.strip()
        return out + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


#: a kept folder's record of the uncommitted changes its cells ran under
CHANGES = "changes.diff"
#: the folders whose changes make a kept result's code (its diff is kept beside it)
CODE_FOLDERS = ("harness", "ns3-modules", "workloads", "topologies", "pyproject.toml")


def uncommitted_changes() -> str:
    """The diff of the code (CODE_FOLDERS' tracked files) against HEAD: what
    a "+changes" commit needs beside it to be reproduced ("" when clean)."""
    try:
        return subprocess.run(["git", "diff", "HEAD", "--", *CODE_FOLDERS],
                              capture_output=True, text=True, cwd=PACKAGE_DIR.parent,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> str:
    """The CPU, its cores and the system, for a kept result's provenance."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}"


def cell_manifest(sweep_dir: Path, cell_id: str) -> dict:
    """A finished cell's manifest.json; {} where it is missing or unreadable."""
    path = sweep_dir / "cells" / cell_id / "manifest.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _values(configs: dict[str, dict], key: str) -> str:
    """A setting's values over the cells, as text: "shared", "2, 10"."""
    values = sorted({json.loads(c[key]) for c in configs.values() if key in c}, key=str)
    return ", ".join(str(v) for v in values)


def describe(grid, summary, configs: dict[str, dict]) -> dict:
    """What a kept sweep ran under, for its pages and figures: buffer model,
    scale, seeds per point."""
    from harness.analysis.tables import SEED_AXIS

    settings = {"buffer_model": _values(configs, "network.buffer.model"),
                "scale": _values(configs, "scale"), "seeds": "1"}
    if SEED_AXIS in summary:
        keys = [k for k in grid.axis_fields if k != SEED_AXIS and k in summary]
        if keys:
            per_point = summary.groupby(keys, dropna=False)[SEED_AXIS].nunique()
            low, high = int(per_point.min()), int(per_point.max())
        else:
            low = high = int(summary[SEED_AXIS].nunique())
        settings["seeds"] = f"{low}" if low == high else f"{low}-{high}"
    return settings


def keep(sweep: KeptSweep, sweep_dir: Path, commit: str | None = None) -> Path:
    """Keep a finished sweep directory's tables, cells, settings and
    provenance in the sweep's kept folder (replacing the folder as a whole,
    atomically). Returns the kept folder. `commit`: the code its cells ran
    under, where that is not this checkout's HEAD (a sweep run from another
    worktree); every cell's digest is checked against today's code anyway."""
    from harness.analysis import claims
    from harness.analysis.tables import load_sweep
    from harness.sweeps.grid import load_grid

    derived = {"claims": claims.claims_table}
    loaded = load_sweep(sweep_dir)
    grid = load_grid(sweep_dir / "grid.toml")
    summary = loaded.summary
    if summary is None or not len(summary):
        raise ConfigError(str(sweep_dir), "holds no summary.parquet: the sweep has not run")
    not_done = summary[~summary["status"].isin(["ok", "stalled"])]
    configs = _cell_settings(sweep_dir, grid)
    cpu_s, wall_s, events = 0.0, 0.0, 0
    for cell_id in summary["cell"]:
        manifest = cell_manifest(sweep_dir, cell_id)
        cpu_s += float(manifest.get("simulation_cpu_s") or 0.0)
        wall_s += float(manifest.get("run_wall_s") or 0.0)
        events += int(manifest.get("events") or 0)
    record = {
        "sweep": sweep.key, "grid": sweep.grid, "grid_name": grid.name,
        "budget": sweep.budget, "cached": sweep.cached, "pinned": sweep.pinned,
        **describe(grid, summary, configs),
        "cells": int(len(summary)), "cells_not_measured": int(len(not_done)),
        "simulation_cpu_s": round(cpu_s, 1), "cell_wall_s": round(wall_s, 1), "events": events,
        "commit": commit or head_commit(), "date": datetime.date.today().isoformat(),
        "machine": machine(),
    }
    versions = cell_manifest(sweep_dir, summary["cell"].iloc[0]).get("versions", {})
    record["versions"] = {k: versions[k] for k in ("ddnn-harness", "ns3") if k in versions}
    # the ns-3 engine the cells ran on (harness engine): the wheel's and a
    # build's tables are byte-identical, its CPU seconds are not
    engine = loaded.grid.get("engine") or {"kind": "wheel"}   # sweep.json; older: the wheel
    record["engine"] = {k: engine[k] for k in ("kind", "version", "profile") if k in engine}

    # a result kept from a tree with changes keeps them: its commit and this
    # diff reproduce it (the commit alone, "<sha>+changes", did not)
    changes = uncommitted_changes() if commit is None and record["commit"].endswith(
        "+changes") else ""
    if changes:
        record["changes"] = CHANGES

    def fill(tmp: Path) -> None:
        if changes:
            (tmp / CHANGES).write_text(changes)
        for name in KEPT_FILES + KEPT_TABLES:
            if (sweep_dir / name).is_file():
                shutil.copyfile(sweep_dir / name, tmp / name)
        for name in sweep.tables:   # computed from the run directories, not kept
            derived[name](sweep_dir).to_parquet(tmp / f"{name}.parquet", index=False)
        (tmp / SETTINGS).write_text(json.dumps(settings_record(configs), indent=1) + "\n")
        (tmp / PROVENANCE).write_text(json.dumps(record, indent=2, default=str) + "\n")

    return outdir.write_dir(sweep.kept_dir, fill, ours=is_kept_dir, what="a kept sweep's folder")


#: the files a kept folder may hold
KEPT_NAMES = frozenset((*KEPT_FILES, *KEPT_TABLES, *(f"{t}.parquet" for t in DERIVED_TABLES),
                        SETTINGS, PROVENANCE, CHANGES))


def is_kept_dir(path: Path) -> bool:
    """A folder keep() wrote (its provenance and nothing but kept files):
    keeping a sweep again replaces it whole."""
    try:
        entries = list(Path(path).iterdir())
    except OSError:
        return False
    return (any(e.name == PROVENANCE for e in entries)
            and all(e.name in KEPT_NAMES and e.is_file() and not e.is_symlink() for e in entries))


def check_kept_dir(sweep: KeptSweep) -> None:
    """Before a sweep runs for keeping: its kept folder may be absent, empty
    or one keep() wrote (replaced whole at the end); anything else would stop
    the keeping after the simulation, so it stops now."""
    path = sweep.kept_dir
    if path.exists() and not (path.is_dir() and (not any(path.iterdir()) or is_kept_dir(path))):
        raise ConfigError(str(path), "holds files that keeping a sweep did not write: nothing in "
                          f"it is replaced; move them away to keep sweep {sweep.key!r} there")


def _cell_settings(sweep_dir: Path, grid) -> dict[str, dict]:
    """Each cell's flat digest data, made again from the grid and its point;
    a ConfigError when a cell no longer has the digest it ran under (the code
    or a default changed since: rerun it)."""
    from harness.analysis.tables import read_sweep_record
    from harness.sweeps.grid import make_cell

    settings = {}
    for c in read_sweep_record(sweep_dir)["cells"]:
        cell = make_cell(grid, tuple(c["point"].items()), c["arm"])
        if cell.id != c["id"] or cell.scenario is None:
            raise ConfigError(str(sweep_dir), f"cell {c['id']} would now be {cell.id}: the "
                              "code or a default changed since it ran; rerun it "
                              "(harness findings run) before keeping it")
        settings[cell.id] = flat(cell.scenario.digest_data())
    return settings
