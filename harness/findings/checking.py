"""Checking kept sweeps against today's code, with no simulation: each kept
cell is made again from today's grid file and scenario defaults
(harness.sweeps.grid.make_cell) and its digest compared with the kept one; a
cell whose digest moved is stale, named with the settings that changed
(settings.json). A finding's status is the worst of its sweeps'."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.config.errors import ConfigError
from harness.findings.registry import DERIVED_TABLES, SETTINGS, KeptSweep, provenance
from harness.findings.settings import changed_settings, flat, kept_settings

CURRENT, STALE, PINNED, NOT_KEPT = "current", "stale", "pinned", "not kept"


@dataclass
class SweepState:
    """A kept sweep against today's code: its status and why."""

    sweep: KeptSweep
    status: str
    reasons: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)


def _read_kept_tables(kept) -> None:
    """Every kept table read whole, as the pages and figures read it (a
    table cut short or not the one its name says: CorruptTableError), so
    that a kept sweep is never vouched for on its digests alone."""
    from harness.analysis.tables import read_sweep_record, read_sweep_summary, read_table
    from harness.findings.keeping import KEPT_TABLES

    read_sweep_summary(kept, read_sweep_record(kept))
    for name in (*KEPT_TABLES, *(f"{t}.parquet" for t in DERIVED_TABLES)):
        if name != "summary.parquet" and (kept / name).is_file():
            read_table(kept / name)


def check_sweep(sweep: KeptSweep, planned: bool = True) -> SweepState:
    """current / pinned / stale / not kept, with the reasons: each kept cell
    made again from today's grid file and defaults must have its kept digest
    (planned: and pass every check a run makes; False, the digests alone:
    seconds, for `harness findings list`)."""
    from harness.analysis.tables import read_record, read_sweep_record
    from harness.sweeps.grid import expand, load_grid, make_cell

    kept = sweep.kept_dir
    if not (kept / "sweep.json").is_file():
        return SweepState(sweep, NOT_KEPT, [f"no kept tables: harness findings run "
                                            f"(the sweep {sweep.key})"])
    try:
        prov = provenance(sweep)
        cells = read_sweep_record(kept)["cells"]
        settings = read_record(kept / SETTINGS, {"common": dict, "cells": dict},
                               "a kept sweep's settings")
        _read_kept_tables(kept)
    except ConfigError as e:
        return SweepState(sweep, STALE, [f"kept tables unreadable: {e}"])
    try:
        grid = load_grid(sweep.grid_path())
    except ConfigError as e:
        return SweepState(sweep, STALE, [f"its grid no longer loads: {e}"], prov)
    reasons: list[str] = []
    changed: dict[str, int] = {}
    kept_ids = set()
    for c in cells:
        kept_ids.add(c["id"])
        cell = make_cell(grid, tuple(c["point"].items()), c["arm"], planned)
        if cell.id == c["id"]:
            continue
        if cell.scenario is None:
            reasons.append(f"cell {c['id']} is no longer valid: {cell.error}")
            continue
        for line in changed_settings(kept_settings(settings, c["id"]),
                                     flat(cell.scenario.digest_data())) or ["its digest"]:
            changed[line] = changed.get(line, 0) + 1
    reasons += [f"{line} ({n} of {len(cells)} cells)" for line, n in sorted(changed.items())]
    # a search's cells are the probes it chose, not the grid's expansion
    missing = [] if grid.search is not None else \
        [c for c in expand(grid, planned) if c.scenario is not None and c.id not in kept_ids]
    if missing:
        reasons.append(f"the grid now has {len(missing)} cells the kept tables lack")
    if reasons:
        return SweepState(sweep, STALE, reasons, prov)
    return SweepState(sweep, PINNED if sweep.pinned else CURRENT,
                      [sweep.pinned] if sweep.pinned else [], prov)


def finding_status(states: list[SweepState]) -> str:
    """The worst of its sweeps' states; a finding on no kept sweep is not kept."""
    statuses = {s.status for s in states} or {NOT_KEPT}
    for status in (STALE, NOT_KEPT, PINNED):
        if status in statuses:
            return status
    return CURRENT
