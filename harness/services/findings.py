"""The findings' kept results (`harness findings`): listed with their
status and cost, rerun (each sweep as `harness sweep` runs it, then kept),
redrawn, and checked against today's code and their figures
(harness.sweeps.findings: the registry and the kept tables;
harness.outputs.findings_pages: the figures)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.config.errors import ConfigError


def docs_dir() -> Path:
    """The documentation's folder: the checkout's, or the copy a wheel carries."""
    from harness.config.paths import DOCS_DIR

    return DOCS_DIR


def estimate_cpu_s(sweep) -> float | None:
    """A not-yet-kept sweep's rough simulation CPU, from harness check's cost
    model: the cells it would run (not those its reference results hold)."""
    from harness.sweeps import reference
    from harness.sweeps.cost import Cost
    from harness.sweeps.grid import expand, load_grid

    try:
        grid = load_grid(sweep.grid_path())
        cells = [c for c in expand(grid) if c.scenario is not None]
        if sweep.reference:
            held = {c.id for c in reference.check(sweep.reference, grid, cells)}
            cells = [c for c in cells if c.id not in held]
    except ConfigError:
        return None
    low, high = Cost(sum(c.predicted_bytes for c in cells)).core_s
    return (low + high) / 2


@dataclass
class RunSoFar:
    """A not-yet-kept sweep's run directory under the findings' results root:
    how far it got and what its finished cells cost (the resumable part)."""

    directory: Path
    done: int            # finished cells
    cells: int           # the grid's first round (seeds added later not counted)
    cpu_s: float         # their simulation CPU
    left_cpu_s: float    # the first round's other cells at the finished cells' mean


def run_so_far(sweep, root: Path) -> RunSoFar | None:
    """The sweep's directory under `root` (findings run's --results), if any:
    its finished cells and their CPU, and the rest at their rate. The
    bytes-based estimate (estimate_cpu_s) is rough (2-4x low for sharded
    and frontier cells); finished cells say better."""
    import json

    from harness.sweeps.grid import expand, load_grid
    from harness.sweeps.sweepdir import is_done

    directory = root / sweep.key
    if not (directory / "grid.toml").is_file():
        return None
    try:
        cells = [c for c in expand(load_grid(directory / "grid.toml")) if c.scenario is not None]
    except ConfigError:
        return None
    done = [c for c in cells if is_done(directory, c)]
    cpu = []
    for cell in done:
        try:
            manifest = json.loads((directory / "cells" / cell.id / "manifest.json").read_text())
            cpu.append(float(manifest.get("simulation_cpu_s") or 0.0))
        except (OSError, ValueError):
            continue
    mean = sum(cpu) / len(cpu) if cpu else 0.0
    return RunSoFar(directory, len(done), len(cells), sum(cpu), mean * (len(cells) - len(done)))


def results_root(results: Path | None) -> Path:
    """Where `findings run` runs the sweeps, checked before any runs: the
    findings folder must be writable (the tables are kept there)."""
    from harness.io import outdir
    from harness.sweeps import findings as kept

    root = results if results is not None else outdir.results_root() / "findings"
    if not os.access(kept.FINDINGS_DIR, os.W_OK):
        raise ConfigError(str(kept.FINDINGS_DIR), "not writable: findings run keeps its "
                          "tables in a checkout of the project")
    return root


def sweep_command(sweep, out: Path, jobs: int, no_added_seeds: bool) -> list[str]:
    """The `harness sweep` command that reruns (or resumes) a finding's sweep
    with its grid, budget and reference results as findings.toml gives them."""
    command = [sys.executable, "-m", "harness.cli", "sweep", str(sweep.grid_path()),
               "-o", str(out), "-j", str(jobs)]
    if (out / "sweep.json").is_file():
        command.append("--resume")
    if no_added_seeds:
        command += ["--max-seeds", "1"]
    elif sweep.budget:
        command += ["--budget", sweep.budget]
    if sweep.max_seeds and not no_added_seeds:
        command += ["--max-seeds", str(sweep.max_seeds)]
    if sweep.reference:
        command += ["--reference", sweep.reference]
    return command


def draw(figure) -> Path:
    """One figure of a finding, from its kept tables, into the docs."""
    from harness.outputs import findings_pages

    return findings_pages.draw(figure, docs_dir())


@dataclass
class Checked:
    """One finding checked: its status and why (each stale setting or figure)."""

    name: str
    status: str
    reasons: list[str] = field(default_factory=list)


def check(finding) -> Checked:
    """No simulation: the finding's kept cells against today's grid files and
    defaults, and its figures against the provenance of its kept tables."""
    from harness.outputs import findings_pages
    from harness.sweeps import findings as kept

    states = [kept.check_sweep(s) for s in finding.sweeps]
    status = kept.finding_status(states)
    reasons = [f"{s.sweep.key}: {r}" for s in states for r in s.reasons
               if s.status != kept.PINNED]
    for figure in finding.figures:
        record = kept.provenance(kept.kept_sweep(figure.sweep))
        path = docs_dir() / figure.file
        if not record:
            continue
        if not path.is_file():
            reasons.append(f"figure {figure.file} missing: harness findings draw")
            status = kept.STALE
            continue
        meta = findings_pages.png_metadata(path)
        if (meta.get("commit"), meta.get("date")) != (record.get("commit"),
                                                       record.get("date")):
            reasons.append(f"figure {figure.file} was drawn from other tables "
                           f"({meta.get('date')}, {meta.get('commit')}): "
                           f"harness findings draw {finding.name}")
            status = kept.STALE
    return Checked(finding.name, status, reasons)
