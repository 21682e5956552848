"""The reference suite's page, generated from its kept results
(harness.findings.kept_references) by the documentation's hook
(docs/hooks/generated.py): ``<!-- generated: references -->`` becomes what
each check ran under and one table row per compared quantity, expected and
measured side by side with the command that reproduces it."""

from __future__ import annotations

import math

from harness.findings import kept_references as kept

VERDICT = {True: "yes", False: "**no**", None: "undecided"}


def _g(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.4g}"


def _reported(row) -> bool:
    """A row shown beside a check, not judged (no tolerance)."""
    t = row["tolerance"]
    return t is None or (isinstance(t, float) and math.isnan(t))


def _tolerance(row) -> str:
    if _reported(row):
        return "reported"
    if row["tolerance"] == 0:
        return "the interval"
    if row["tolerance_unit"] == "relative":
        return f"{100 * row['tolerance']:g} %"
    return f"±{row['tolerance']:g} {row['tolerance_unit']}"


def _departure(row) -> str:
    if not row["expected"]:
        return "n/a"
    return f"{100 * (row['measured'] / row['expected'] - 1):+.1f} %"


def references_table() -> str:
    table, provenance = kept.read()
    if table is None:
        return ('!!! warning "Not kept yet"\n    `python -m bench --only references '
                '--keep-references` runs every check and keeps its rows here.\n')
    lines = ['!!! info "What these results ran under"']
    for name, p in provenance.get("checks", {}).items():
        lines.append(f"    - `{name}`: run {p['date']} at commit `{p['commit']}` on "
                     f"{p['machine']}, {p['cpu_s']:,.0f} s of CPU"
                     + (" (its cheap points only)" if p.get("cheap") else ""))
    lines += ["", "| check | point | quantity | expected | measured (95 % interval) | "
              "departure | tolerance | within |", "|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {r['check']} | {r['point']} | {r['quantity']} | {_g(r['expected'])} | "
                     f"{_g(r['measured'])} [{_g(r['low'])}, {_g(r['high'])}] | {_departure(r)} | "
                     f"{_tolerance(r)} | {'-' if _reported(r) else VERDICT[r['within']]} |")
    lines += ["", "| check | reference | source | reproduce |", "|---|---|---|---|"]
    for _, r in table.drop_duplicates("check").iterrows():
        lines.append(f"| {r['check']} | {r['reference']} | {r['source']} | `{r['command']}` |")
    notes = table[table["note"].notna() & (table["note"].astype(str) != "")]
    if len(notes):
        lines += ["", "Notes the checks recorded with their rows:", ""]
        lines += [f"- {r['check']}, {r['point']}, {r['quantity']}: {r['note']}"
                  for _, r in notes.iterrows()]
    return "\n".join(lines) + "\n"
