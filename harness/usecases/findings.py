"""The findings' kept results (`harness findings`): listed with their
status and cost, rerun (each sweep as `harness sweep` runs it, then kept),
redrawn, and checked against today's code and their figures
(harness.findings: the registry, the kept tables and the figures)."""

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


def _first_round(sweep, grid) -> tuple[list, set[str]]:
    """A grid's first-round cells that run (not invalid ones) and the ids of
    those among them its cached cells hold (ConfigError if they do not)."""
    from harness.sweeps import cell_cache
    from harness.sweeps.grid import expand

    cells = [c for c in expand(grid) if c.scenario is not None]
    held = ({c.id for c in cell_cache.check(sweep.cached, grid, cells)}
            if sweep.cached else set())
    return cells, held


def _planned(sweep) -> tuple:
    """A findings sweep's grid as today's files give it, with its first-round
    cells and the ids its cached cells hold ((grid, None, set()) for a
    search, whose probes are chosen as it goes). Raises ConfigError."""
    from harness.sweeps.grid import load_grid

    grid = load_grid(sweep.grid_path())
    if grid.search is not None:
        return grid, None, set()
    return (grid, *_first_round(sweep, grid))


def estimate_cpu_s(sweep) -> tuple[float, float] | None:
    """A not-yet-kept sweep's rough simulation CPU, from harness check's cost
    model, as (low, high): a grid's cells (not those its cached cells
    hold), each the middle of its bounds; a search's fewest and most probes."""
    from harness.sweeps.cost import Cost

    def middle(nbytes: float) -> float:
        return sum(Cost(nbytes).core_s) / 2

    try:
        grid, cells, held = _planned(sweep)
        if cells is None:
            from harness.sweeps.search_plan import plan_search

            plan = plan_search(grid)
            return middle(plan.least_bytes), middle(plan.most_bytes)
    except ConfigError:
        return None
    cpu = middle(sum(c.predicted_bytes for c in cells if c.id not in held))
    return cpu, cpu


def held_in_cache(sweep) -> tuple[int, int] | None:
    """A not-yet-kept sweep's first-round cells its cached cells hold (a
    sweep kept in parts), as (held, of); None without cached cells or for a
    search."""
    if not sweep.cached:
        return None
    try:
        _, cells, held = _planned(sweep)
    except ConfigError:
        return None
    return None if cells is None else (len(held), len(cells))


@dataclass
class RunSoFar:
    """A not-yet-kept sweep's run directory under the findings' results root:
    how far it got and what its finished cells cost (the resumable part)."""

    directory: Path
    done: int                  # finished cells
    cells: int | None          # the grid's first round (seeds added later not counted),
                               # less the cells its cached cells hold;
                               # None for a search, whose probes are chosen as it goes
    cpu_s: float               # their simulation CPU
    left_cpu_s: float | None   # the first round's other cells at the finished cells' CPU
                               # per predicted byte (a scale-2 cell costs ~5x a scale-10 one)
    from_cache: int = 0        # cells its cached cells hold (not run here)


def run_so_far(sweep, root: Path) -> RunSoFar | None:
    """The sweep's directory under `root` (findings run's --results), if any:
    its finished cells and their CPU, and the rest at their rate. The
    bytes-based estimate (estimate_cpu_s) is rough (2-4x low for sharded
    and frontier cells); finished cells say better."""
    from harness.findings import keeping
    from harness.sweeps.grid import load_grid

    directory = root / sweep.key
    if not (directory / "grid.toml").is_file():
        return None
    try:
        grid = load_grid(directory / "grid.toml")
        # the cached cells are copied in with their own (10 Gbit/s) CPU:
        # neither run here nor the rate of what is left
        cells, held = _first_round(sweep, grid) if grid.search is None else (None, set())
    except ConfigError:
        return None
    cpu = {}
    for summary in sorted(directory.glob("cells/*/summary.json")):
        manifest = keeping.cell_manifest(directory, summary.parent.name)
        if manifest and summary.parent.name not in held:
            cpu[summary.parent.name] = float(manifest.get("simulation_cpu_s") or 0.0)
    if cells is None:
        return RunSoFar(directory, len(cpu), None, sum(cpu.values()), None)
    first_round = [c for c in cells if c.id not in held]
    done = [c for c in first_round if c.id in cpu]
    done_bytes = sum(c.predicted_bytes for c in done)
    per_byte = sum(cpu[c.id] for c in done) / done_bytes if done_bytes else 0.0
    left = per_byte * sum(c.predicted_bytes for c in first_round if c.id not in cpu)
    return RunSoFar(directory, len(done), len(first_round), sum(cpu.values()), left, len(held))


def results_root(results: Path | None) -> Path:
    """Where `findings run` runs the sweeps, checked before any runs: the
    findings folder must be writable (the tables are kept there)."""
    from harness.io import outdir
    from harness.findings import registry

    root = results if results is not None else outdir.results_root() / "findings"
    if not os.access(registry.FINDINGS_DIR, os.W_OK):
        raise ConfigError(str(registry.FINDINGS_DIR), "not writable: findings run keeps its "
                          "tables in a checkout of the project")
    return root


def sweep_command(sweep, out: Path, jobs: int, no_added_seeds: bool) -> list[str]:
    """The `harness sweep` command that reruns (or resumes) a finding's sweep
    with its grid, budget and cached cells as findings.toml gives them;
    `harness boundary` for a search grid (its seeds are its [search]'s)."""
    from harness.sweeps.grid import SEED_AXIS, load_grid

    grid = load_grid(sweep.grid_path())
    search = grid.search is not None
    command = [sys.executable, "-m", "harness.cli", "boundary" if search else "sweep",
               str(sweep.grid_path()), "-o", str(out), "-j", str(jobs)]
    if (out / "sweep.json").is_file():
        command.append("--resume")
    if search:
        return command
    if no_added_seeds:
        # a grid without a seed axis or a reference arm adds none (and
        # `harness sweep` refuses --max-seeds there)
        if SEED_AXIS in dict(grid.axes) and grid.reference is not None:
            command += ["--max-seeds", "1"]
    else:
        if sweep.budget:
            command += ["--budget", sweep.budget]
        if sweep.max_seeds:
            command += ["--max-seeds", str(sweep.max_seeds)]
    if sweep.cached:
        command += ["--cached", sweep.cached]
    return command


def draw(figure) -> Path:
    """One figure of a finding, from its kept tables, into the docs."""
    from harness.findings import figures

    return figures.draw(figure, docs_dir())


@dataclass
class Checked:
    """One finding checked: its status and why (each stale setting or figure)."""

    name: str
    status: str
    reasons: list[str] = field(default_factory=list)


def sweep_states(finding, checked: dict | None = None, planned: bool = True) -> list:
    """Each of the finding's sweeps checked (checking.check_sweep), each
    once across the findings that share it (`checked`: the states so far, by key)."""
    from harness.findings import checking

    checked = {} if checked is None else checked
    for s in finding.sweeps:
        if s.key not in checked:
            checked[s.key] = checking.check_sweep(s, planned)
    return [checked[s.key] for s in finding.sweeps]


def check(finding, checked: dict | None = None) -> Checked:
    """No simulation: the finding's kept cells against today's grid files and
    defaults, and its figures against the provenance of its kept tables
    (`checked`: sweep states shared across findings, sweep_states')."""
    from harness.findings import checking, figures, registry

    states = sweep_states(finding, checked)
    status = checking.finding_status(states)
    reasons = [f"{s.sweep.key}: {r}" for s in states for r in s.reasons
               if s.status != checking.PINNED]
    for figure in finding.figures:
        record = registry.provenance(registry.kept_sweep(figure.sweep))
        path = docs_dir() / figure.file
        if not record:
            continue
        if not path.is_file():
            reasons.append(f"figure {figure.file} missing: harness findings draw")
            status = checking.STALE
            continue
        meta = figures.png_metadata(path)
        if (meta.get("commit"), meta.get("date")) != (record.get("commit"),
                                                       record.get("date")):
            reasons.append(f"figure {figure.file} was drawn from other tables "
                           f"({meta.get('date')}, {meta.get('commit')}): "
                           f"harness findings draw {finding.name}")
            status = checking.STALE
    return Checked(finding.name, status, reasons)


def check_references() -> Checked:
    """No simulation: the reference suite's kept rows (docs/findings/references.md)
    against today's references.toml, scenario files and defaults: each
    check's kept digest must be today's, and every check must be kept."""
    from harness.usecases import references
    from harness.findings import checking, kept_references

    table, provenance = kept_references.read()
    if table is None:
        return Checked("references", checking.NOT_KEPT,
                       ["no kept rows: python -m bench --only references --keep-references"])
    runs = (provenance or {}).get("checks", {})
    known, kept_checks = references.checks(), set(table["check"])
    reasons = []
    for name, check in known.items():
        run = runs.get(name)
        if run is None or name not in kept_checks:
            reasons.append(f"{name}: not kept ({check.command()} --keep-references)")
        elif run.get("digest") != references.check_digest(check):
            reasons.append(f"{name}: its entry of references.toml, its scenario or a default "
                           f"changed since it was kept ({check.command()} --keep-references)")
    gone = sorted(kept_checks - set(known))
    reasons += [f"{name}: kept, but no longer in references.toml" for name in gone]
    return Checked("references", checking.STALE if reasons else checking.CURRENT, reasons)
