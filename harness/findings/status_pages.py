"""The findings pages' parts that say what each finding ran under and what
it cost, from the kept sweeps' provenance and their status against today's
code (harness.findings.checking):

- ``finding NAME``: a page's opening: preset, buffer model, scale, seeds,
  cells, CPU, date, commit, machine, its status, and the commands that
  reproduce and check it;
- ``findings-status``: every finding, its status and what it ran under;
- ``findings-costs``: every kept sweep's cells, CPU, events and engine;
- ``finding-figures NAME``: the finding's figures that have been drawn.
"""

from __future__ import annotations

from harness.findings import checking, registry
from harness.outputs.words import seeds_text


def provenance_line(record: dict) -> str:
    """One sentence: what a kept sweep ran under."""
    if not record:
        return ""
    cpu = record.get("simulation_cpu_s") or 0
    return (f"sweep `{record.get('grid')}` at scale {record.get('scale')}, buffer model "
            f"`{record.get('buffer_model')}`, {seeds_text(record)} a point, {record.get('cells')} cells, {cpu:,.0f} s of simulation CPU; run "
            f"{record.get('date')} at commit `{record.get('commit')}` on "
            f"{record.get('machine')}{engine_text(record.get('engine'))}")


def engine_text(engine: dict | None) -> str:
    """Where a kept sweep did not run on the ns3 wheel, which ns-3 it ran on
    (its tables are the wheel's; its CPU seconds are the build's)."""
    if not engine or engine.get("kind", "wheel") == "wheel":
        return ""
    return (f", on an ns-{engine.get('version', '?')} build ({engine.get('profile', '?')} "
            "profile; same tables as the wheel, less CPU)")


def finding_block(name: str) -> str:
    """The generated opening of a finding's page."""
    finding = registry.finding(name)
    states = [checking.check_sweep(s) for s in finding.sweeps]
    status = checking.finding_status(states)
    lines = []
    if status == checking.NOT_KEPT:
        lines += ['!!! warning "Not yet regenerated"',
                  "    Not every sweep this page stands on is kept yet: "
                  f"`harness findings run {name}` runs its sweeps "
                  f"({', '.join('`' + s.key + '`' for s in finding.sweeps)}), keeps their "
                  "tables and generates the page's parts from them. A number below that is "
                  "typed by hand comes from runs made before the kept results existed, many "
                  "under the older per-band buffer limits (`network.buffer.model = "
                  "\"per_band\"`, the default until 2026-11-24): it is not checked against "
                  "today's code.", ""]
        some = [st for st in states if st.status != checking.NOT_KEPT]
        if some:   # a finding kept in part: what is kept already, and what is not
            lines[-1:-1] = ["    Kept so far (the parts generated from them are checked):"] + [
                f"    - {provenance_line(st.provenance)}." for st in some] + [
                "    Not kept yet: " + ", ".join(f"`{s.key}`" for s, st in
                                                 zip(finding.sweeps, states)
                                                 if st.status == checking.NOT_KEPT) + "."]
        return "\n".join(lines)
    lines.append(f"!!! info \"What this page ran under ({status})\"")
    for state in states:
        lines.append(f"    - {provenance_line(state.provenance)}.")
    if finding.pinned:
        lines.append(f"    - Pinned on purpose: {finding.pinned}.")
    if status == checking.STALE:
        lines.append("    - **Stale**: " + "; ".join(r for s in states for r in s.reasons) + ".")
    lines += [f"    - Reproduce: `harness findings run {name}` (resumes); check against "
              "today's code: `harness findings check`.", ""]
    return "\n".join(lines)


def findings_status() -> str:
    """A table of every finding: its page, status and what it ran under."""
    lines = ["| finding | status | ran under |", "|---|---|---|"]
    for finding in registry.load_registry().values():
        states = [checking.check_sweep(s) for s in finding.sweeps]
        status = checking.finding_status(states)
        ran = "; ".join(provenance_line(s.provenance) for s in states if s.provenance)
        if status == checking.NOT_KEPT:
            left = [s.key for s, st in zip(finding.sweeps, states) if st.status == checking.NOT_KEPT]
            ran = (f"{ran}; not kept yet: {', '.join(f'`{k}`' for k in left)}" if ran else
                   "typed by hand from earlier runs (most under per-band limits); not "
                   f"regenerated yet: `harness findings run {finding.name}`")
        link = f"[{finding.title}](../{finding.page})" if not finding.page.startswith(
            "findings/") else f"[{finding.title}]({finding.page.split('/', 1)[1]})"
        lines.append(f"| {link} | {status} | {ran} |")
    return "\n".join(lines) + "\n"


def findings_costs() -> str:
    """A table of every kept sweep's cost, from its provenance: cells,
    simulation CPU, events and their rate, the ns-3 it ran on, when. (What a
    rerun of each costs on a machine like it; `harness findings list` adds
    the estimate for those not kept.)"""
    seen = {}
    for finding in registry.load_registry().values():
        for sweep in finding.sweeps:
            seen.setdefault(sweep.key, sweep)
    lines = ["| kept sweep | cells | simulation CPU | events | events per CPU-second | "
             "engine | run |", "|---|---|---|---|---|---|---|"]
    for key, sweep in seen.items():
        record = registry.provenance(sweep)
        if not record:
            continue
        cpu, events = record.get("simulation_cpu_s") or 0, record.get("events") or 0
        rate = f"{events / cpu / 1e3:,.0f} k" if cpu and events else "n/a"
        engine = record.get("engine") or {}
        ran_on = ("ns3 wheel" if engine.get("kind", "wheel") == "wheel" else
                  f"ns-{engine.get('version', '?')} build ({engine.get('profile', '?')})")
        lines.append(f"| `{key}` | {record.get('cells')} | {cpu:,.0f} s | "
                     f"{events / 1e9:,.2f} G | {rate} | {ran_on} | {record.get('date')} on "
                     f"{record.get('machine')} |")
    return "\n".join(lines) + "\n"


def finding_figures(name: str) -> str:
    """The finding's drawn figures as Markdown images, each a link to itself
    (its full size), relative to its page (a figure not drawn yet, before its sweep is kept, is left out: a
    link to a missing file would break the site)."""
    import os

    from harness.config.paths import DOCS_DIR

    finding = registry.finding(name)
    page_dir = (DOCS_DIR / finding.page).parent
    lines = []
    for figure in finding.figures:
        if (DOCS_DIR / figure.file).is_file():
            what = f"{figure.sweep}: {figure.kind}" + (
                f" of {figure.metric}" if figure.metric != "iteration_time" else "")
            path = os.path.relpath(DOCS_DIR / figure.file, page_dir)
            lines.append(f"[![{what}]({path})]({path})")   # linked to its full size
    return "\n\n".join(lines) + "\n" if lines else ""
