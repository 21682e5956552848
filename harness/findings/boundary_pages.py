"""The findings pages' part of a kept boundary search: ``finding-boundary
SWEEP``, its crossings per point and threshold (its boundary.parquet):
status, crossing, bracket, undecided band, probes, seeds and CPU, as
`harness boundary` prints them."""

from __future__ import annotations

import math

from harness.findings import registry
from harness.outputs.words import short_name, value_text


def finding_boundary(key: str) -> str:
    """A kept search's table: per point and threshold its status, crossing,
    bracket, undecided band, probes, seeds and CPU (harness boundary's)."""
    from harness.analysis.tables import read_table
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = registry.load_kept(key)
    path = sweep.kept_dir / "boundary.parquet"
    if loaded is None or not path.is_file():
        return f"*(no kept boundary table for `{key}` yet: `harness findings run`)*"
    table = read_table(path)
    keys = [k for k in point_fields(loaded.grid) if k in table]

    def num(v) -> str:
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.3g}"

    def pair(a, b) -> str:
        if num(a) and num(b):
            return f"[{num(a)}, {num(b)}]"
        # one end: a crossing beyond the range, or an undecided one below a decided probe
        return f"> {num(a)}" if num(a) else (f"< {num(b)}" if num(b) else "")

    head = [*(short_name(k) for k in keys), "threshold", "status", "crossing", "bracket",
            "undecided band", "probes", "seeds", "CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table.to_dict("records"):
        lines.append("| " + " | ".join([
            *(value_text(r[k]) for k in keys), f"{100 * r['threshold']:g} %", r["status"],
            num(r["crossing"]), pair(r["low"], r["high"]), pair(r["band_low"], r["band_high"]),
            str(r["probes"]), str(r["seeds"]), f"{r['cpu_s']:,.0f}"]) + " |")
    return "\n".join(lines) + "\n"
