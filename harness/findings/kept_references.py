"""The reference suite's kept results: its rows as a compact table
(workloads/findings/references/references.csv) with their provenance
(provenance.json: commit, date, machine, CPU seconds, versions), written by
`python -m bench --only references --keep-references` and rendered into
docs/findings/references.md (harness.findings.reference_page)."""

from __future__ import annotations

import datetime
import json
from importlib.metadata import version

import pandas as pd

from harness.findings.keeping import head_commit, machine
from harness.findings.registry import FINDINGS_DIR
from harness.io import outdir

KEPT_DIR = FINDINGS_DIR / "references"
TABLE, PROVENANCE = KEPT_DIR / "references.csv", KEPT_DIR / "provenance.json"
#: The kept columns, in order (a row's interval as low and high).
COLUMNS = ("check", "reference", "source", "point", "quantity", "expected", "measured", "low",
           "high", "tolerance", "tolerance_unit", "within", "note", "command")


def keep(rows: list[dict], cpu_s: float, cheap: bool, digests: dict[str, str]) -> None:
    """Write the rows and their provenance, each file whole. A check run
    alone replaces its own rows and keeps the others'. `digests`: each
    check's digest (harness.usecases.references.check_digest), kept so that
    `harness findings check` sees a changed check or default."""
    table = pd.DataFrame([{**{k: r.get(k) for k in COLUMNS if k not in ("low", "high")},
                           "low": r["interval"][0], "high": r["interval"][1]} for r in rows],
                         columns=list(COLUMNS))
    before, provenance = read()
    if before is not None:
        table = pd.concat([before[~before["check"].isin(table["check"])], table],
                          ignore_index=True)
    KEPT_DIR.mkdir(parents=True, exist_ok=True)
    outdir.write_file(TABLE, table.to_csv(index=False))
    runs = {k: v for k, v in (provenance or {}).get("checks", {}).items()}
    stamp = {"commit": head_commit(), "date": datetime.date.today().isoformat(),
             "machine": machine(), "cheap": cheap,
             "versions": {"ddnn-harness": version("ddnn-harness"), "ns3": version("ns3")}}
    for name in dict.fromkeys(r["check"] for r in rows):
        first = next(r for r in rows if r["check"] == name)   # every row carries its check's
        runs[name] = {**stamp, "cpu_s": round(first.get("check_cpu_s", 0.0), 1),
                      "digest": digests[name]}
    outdir.write_file(PROVENANCE, json.dumps({"checks": runs, "cpu_s_last_run": round(cpu_s, 1)},
                                             indent=2) + "\n")


def read() -> tuple[pd.DataFrame | None, dict | None]:
    """(the kept rows, their provenance), or (None, None) before any is kept."""
    if not TABLE.is_file():
        return None, None
    table = pd.read_csv(TABLE, keep_default_na=False, na_values=[""])
    # True, False or empty (undecided, or a row only reported): None
    table["within"] = [{"True": True, "False": False}.get(str(v)) for v in table["within"]]
    return table, json.loads(PROVENANCE.read_text()) if PROVENANCE.is_file() else {}
