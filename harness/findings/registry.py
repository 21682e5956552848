"""The findings registry (workloads/findings/findings.toml): each finding
(its page under docs/findings/, its figures, the papers' claims it judges)
and the sweeps it stands on (a preset or a grid file of
workloads/findings/grids/, a budget, cached cells), with where each kept
sweep's folder is and how its tables are read back.

A kept sweep is a folder workloads/findings/<sweep>/ holding its compact
tables (summary, deltas, deltas_mean, scale_check: no per-flow logs; a
claims table where findings.toml asks for it), its cells (sweep.json,
grid.toml), the settings that decide each cell (settings.json) and its
provenance (provenance.json: preset, commit, date, machine, CPU seconds):
a sweep directory without its cells' run directories, which
harness.analysis.tables.load_sweep reads (harness.findings.keeping writes
it).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.config.errors import ConfigError
from harness.config.paths import WORKLOADS_DIR

FINDINGS_DIR = WORKLOADS_DIR / "findings"
REGISTRY = FINDINGS_DIR / "findings.toml"
GRIDS_DIR = FINDINGS_DIR / "grids"
#: tables a sweep may ask to have computed from its run directories when it is
#: kept (findings.toml `tables`): they need the cells, which are not kept
DERIVED_TABLES = ("claims",)
SETTINGS = "settings.json"
PROVENANCE = "provenance.json"
#: a finding's figure: the operating-boundary map, or bars per point and arm
FIGURE_KINDS = ("map", "comparison", "frontier", "boundary")
#: a [sweeps.KEY] table's keys; `reference` is the old name of `cached`
SWEEP_KEYS = ("grid", "budget", "max_seeds", "cached", "pinned", "tables")


@dataclass(frozen=True)
class KeptSweep:
    """A sweep a finding stands on: how it is run, and where its tables are kept."""

    key: str                      # its folder under workloads/findings/
    grid: str                     # a preset name, or a grid file under grids/
    budget: str | None = None     # harness sweep --budget
    max_seeds: int | None = None  # harness sweep --max-seeds
    cached: str | None = None     # cached cells it takes (harness sweep --cached)
    pinned: str | None = None     # why its grid pins a setting that is not today's default
    tables: tuple[str, ...] = ()  # DERIVED_TABLES computed when it is kept

    @property
    def kept_dir(self) -> Path:
        return FINDINGS_DIR / self.key

    def grid_path(self) -> str | Path:
        own = GRIDS_DIR / f"{self.grid}.toml"
        return own if own.is_file() else self.grid


@dataclass(frozen=True)
class Figure:
    file: str          # under docs/
    sweep: str         # the kept sweep it is drawn from
    kind: str          # one of FIGURE_KINDS (harness.findings.figures.draw)
    metric: str = "iteration_time"
    over: str | None = None   # a boundary's kept map, drawn underneath


@dataclass(frozen=True)
class Claim:
    """A paper's claim and the kept comparison that tests it: `arm` against
    `baseline` at the point `label` of a sweep's claims table, over the whole
    window (phase 0) or its n-th phase of constant conditions; the paper says
    the arm's iteration is `side` ("faster" or "slower")."""

    system: str
    claim: str
    sweep: str
    label: str
    arm: str
    baseline: str
    side: str = "faster"
    phase: int = 0


@dataclass(frozen=True)
class Finding:
    name: str
    title: str
    page: str                          # under docs/findings/
    sweeps: tuple[KeptSweep, ...]
    figures: tuple[Figure, ...] = ()
    note: str | None = None            # what it stands on beside its sweeps
    claims: tuple[Claim, ...] = ()     # papers' claims its page judges

    @property
    def pinned(self) -> str | None:
        reasons = [s.pinned for s in self.sweeps if s.pinned]
        return "; ".join(reasons) if reasons else None


def _registry_text() -> dict:
    try:
        return tomllib.loads(REGISTRY.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(str(REGISTRY), f"cannot be read: {e}") from None


def load_registry() -> dict[str, Finding]:
    """Every finding of findings.toml, by name, in file order."""
    raw = _registry_text()
    sweeps = {}
    for key, spec in raw.get("sweeps", {}).items():
        spec = _old_names(f"{REGISTRY.name}: sweeps.{key}", spec)
        unknown = set(spec) - set(SWEEP_KEYS)
        if unknown or "grid" not in spec:
            raise ConfigError(f"{REGISTRY.name}: sweeps.{key}",
                              f"keys grid (required), budget, max_seeds, cached, pinned, "
                              f"tables; got {sorted(spec)}")
        tables = tuple(spec.pop("tables", ()))
        if set(tables) - set(DERIVED_TABLES):
            raise ConfigError(f"{REGISTRY.name}: sweeps.{key}.tables",
                              f"unknown tables {sorted(set(tables) - set(DERIVED_TABLES))}; "
                              f"allowed: {', '.join(DERIVED_TABLES)}")
        sweeps[key] = KeptSweep(key, **spec, tables=tables)
    findings = {}
    for name, spec in raw.get("findings", {}).items():
        where = f"{REGISTRY.name}: findings.{name}"
        missing = [s for s in spec.get("sweeps", []) if s not in sweeps]
        if missing:
            raise ConfigError(where, f"unknown sweeps {missing}; known: {', '.join(sweeps)}")
        figures = tuple(_figure(f"{where}.figures[{i}]", f, sweeps)
                        for i, f in enumerate(spec.get("figures", [])))
        claims = tuple(_claim(f"{where}.claims[{i}]", c, sweeps)
                       for i, c in enumerate(spec.get("claims", [])))
        findings[name] = Finding(name, spec["title"], spec["page"],
                                 tuple(sweeps[s] for s in spec.get("sweeps", [])),
                                 figures, spec.get("note"), claims)
    return findings


def _old_names(where: str, spec: dict) -> dict:
    """A [sweeps.KEY] table with `reference` (the old name of `cached`: the
    cached cells it takes) read as `cached`; both at once is refused."""
    spec = dict(spec)
    if "reference" in spec:
        if "cached" in spec:
            raise ConfigError(where, "both cached and reference (its old name): keep cached")
        spec["cached"] = spec.pop("reference")
    return spec


def _figure(where: str, spec: dict, sweeps: dict[str, KeptSweep]) -> Figure:
    fields = {"file", "sweep", "kind", "metric", "over"}
    if set(spec) - fields or {"file", "sweep", "kind"} - set(spec):
        raise ConfigError(where, f"keys file, sweep, kind (required), metric, over; "
                          f"got {sorted(spec)}")
    if spec["kind"] not in FIGURE_KINDS:
        raise ConfigError(f"{where}.kind", f"{spec['kind']!r}; allowed: "
                          f"{', '.join(FIGURE_KINDS)}")
    for key in ("sweep", "over"):
        if spec.get(key) is not None and spec[key] not in sweeps:
            raise ConfigError(f"{where}.{key}", f"unknown sweep {spec[key]!r}; known: "
                              f"{', '.join(sweeps)}")
    return Figure(**spec)


def _claim(where: str, spec: dict, sweeps: dict[str, KeptSweep]) -> Claim:
    fields = {"system", "claim", "sweep", "label", "arm", "baseline", "side", "phase"}
    required = fields - {"side", "phase"}
    if set(spec) - fields or required - set(spec):
        raise ConfigError(where, f"keys {', '.join(sorted(required))} (required), side, "
                          f"phase; got {sorted(spec)}")
    if spec.get("side", "faster") not in ("faster", "slower"):
        raise ConfigError(f"{where}.side", f"{spec['side']!r}; allowed: faster, slower")
    if "claims" not in (sweeps[spec["sweep"]].tables if spec["sweep"] in sweeps else ()):
        raise ConfigError(f"{where}.sweep", f"{spec['sweep']!r} keeps no claims table; "
                          "allowed: a sweep with tables = [\"claims\"]")
    return Claim(**spec)


def finding(name: str) -> Finding:
    findings = load_registry()
    if name not in findings:
        raise ConfigError("NAME", f"no finding {name!r}; findings: {', '.join(findings)}")
    return findings[name]


def kept_sweep(key: str) -> KeptSweep:
    for f in load_registry().values():
        for s in f.sweeps:
            if s.key == key:
                return s
    raise ConfigError("sweep", f"no kept sweep {key!r}")


def provenance(sweep: KeptSweep) -> dict:
    """A kept sweep's provenance.json ({} where it is not kept)."""
    from harness.analysis.tables import read_record

    path = sweep.kept_dir / PROVENANCE
    return read_record(path, None, "a kept sweep's provenance") if path.is_file() else {}


def load_kept(key: str):
    """A kept sweep and its tables (harness.analysis.tables.load_sweep), or
    (the sweep, None) before it is kept."""
    from harness.analysis.tables import load_sweep

    sweep = kept_sweep(key)
    if not (sweep.kept_dir / "sweep.json").is_file():
        return sweep, None
    return sweep, load_sweep(sweep.kept_dir)


def claims_table(key: str):
    """A kept sweep's claims table (harness.analysis.claims), None where it has none."""
    from harness.analysis.tables import read_table

    path = kept_sweep(key).kept_dir / "claims.parquet"
    return read_table(path) if path.is_file() else None
