"""The claims table of a sweep whose points compare systems (e.g. the
seed-claims grid): for every point, each arm against the point's reference
arm and each pair of its other arms, and for points whose conditions change
during the run (link-rate changes, background load steps) the same per
phase. Pure: reads the sweep
directory's tables and run directories, no ns-3.

    python -m harness.analysis.claims results/sweeps/seed-claims     # markdown table

Changes are those of harness.analysis.stats: the iteration-time change with its 95 %
bootstrap interval (iterations resampled within each seed), and the change
of the straggler spread (metrics.end_spread); a phase keeps the iterations
that start in it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.analysis import run_changes, stats, tables
from harness.analysis.tables import POINT_LABEL, SEED_AXIS, read_table


@dataclass(frozen=True)
class Cell:
    """One cell of the sweep: its point label, arm, seed and run directory."""

    label: str
    arm: str
    seed: int
    path: Path


def runs(sweep_dir: Path) -> list[Cell]:
    """The sweep's finished cells."""
    sweep_dir = Path(sweep_dir)
    record = tables.read_sweep_record(sweep_dir)
    out = []
    for cell in record["cells"]:
        path = sweep_dir / "cells" / cell["id"]
        if (path / "summary.json").is_file():
            point = cell["point"]
            out.append(Cell(str(point.get(POINT_LABEL, "")), cell["arm"],
                           point.get(SEED_AXIS, 0), path))
    return out


def references(sweep_dir: Path) -> dict[str, str]:
    """Point label -> its reference arm (the grid's, or the point's own)."""
    record = tables.read_sweep_record(sweep_dir)
    out = {}
    for cell in record["cells"]:
        label = str(cell["point"].get(POINT_LABEL, ""))
        out[label] = cell.get("reference", record.get("reference"))
    return out


def _tables(run: Cell, start_s: float | None, end_s: float | None) -> tables.Run:
    """The cell's run as the paired statistics read it, the iterations that
    start in [start_s, end_s)."""
    it = read_table(run.path / "iterations.parquet")
    if start_s is not None:
        it = it[it["start_ns"] >= start_s * 1e9]
    if end_s is not None:
        it = it[it["start_ns"] < end_s * 1e9]
    return tables.Run(flows=read_table(run.path / "flows.parquet"), iterations=it, dir=run.path)


def phases(run: Cell) -> list[tuple[float, float]]:
    """[start, end) s of each phase of constant conditions inside the
    measurement window: split at every link-rate change and load step."""
    config = tables.read_record(run.path / "config.json", what="the cell's config")
    window = (config["run"]["warmup"], config["run"]["duration"] - config["run"]["cooldown"])
    times = {c["at_ns"] / 1e9 for c in config.get("link_changes", [])}
    times |= {at for at, _ in config["background"].get("steps", [])}
    cuts = [window[0], *sorted(t for t in times if window[0] < t < window[1]), window[1]]
    return list(zip(cuts[:-1], cuts[1:]))


def compare(all_runs: list[Cell], label: str, arm: str, baseline: str,
            start_s: float | None = None, end_s: float | None = None) -> dict[str, object]:
    """`arm` against `baseline` at point `label`, over the seeds both ran:
    iteration-time and end-spread changes with their intervals."""
    mine = {r.seed: r for r in all_runs if r.label == label and r.arm == arm}
    base = {r.seed: r for r in all_runs if r.label == label and r.arm == baseline}
    seeds = sorted(set(mine) & set(base))
    ref = [_tables(base[s], start_s, end_s) for s in seeds]
    other = [_tables(mine[s], start_s, end_s) for s in seeds]
    key = (label, arm, baseline, start_s, end_s)
    it = run_changes.iteration_change(ref, other, key)
    spread = run_changes.end_spread_change(ref, other, key)
    verdict = stats.comparison_verdict(it.low, it.high)
    # the means the change is the ratio of (pooled over seeds)
    return {"label": label, "arm": arm, "baseline": baseline, "start_s": start_s,
            "end_s": end_s, "seeds": len(seeds),
            "arm_ms": 1e3 * run_changes.mean_iteration_s(other),
            "baseline_ms": 1e3 * run_changes.mean_iteration_s(ref),
            "change": it.change, "low": it.low, "high": it.high, "verdict": verdict,
            "spread_change": spread.change, "spread_low": spread.low,
            "spread_high": spread.high}


def claims_table(sweep_dir: Path) -> pd.DataFrame:
    """Every point's arms against its reference, and each pair of its other
    arms (the later in the grid against the earlier), over the whole window
    and, where conditions change, per phase."""
    all_runs = runs(sweep_dir)
    rows = []
    for label, reference in references(sweep_dir).items():
        arms = list(dict.fromkeys(r.arm for r in all_runs if r.label == label))
        others = [a for a in arms if a != reference]
        pairs = [(a, reference) for a in others]
        pairs += [(b, a) for i, a in enumerate(others) for b in others[i + 1:]]
        cuts = phases(next(r for r in all_runs if r.label == label))
        for arm, baseline in pairs:
            rows.append(compare(all_runs, label, arm, baseline))
            if len(cuts) > 1:
                rows += [compare(all_runs, label, arm, baseline, a, b) for a, b in cuts]
    return pd.DataFrame(rows)


def _pct(x: float) -> str:
    return f"{100 * x:+.1f} %"


def markdown(table: pd.DataFrame) -> str:
    """One line per comparison: point, arm vs baseline, phase, mean iteration
    times, the change with its 95 % interval, the verdict, the spread change."""
    lines = ["| point | arm vs baseline | phase (s) | iteration ms, arm / baseline | "
             "change [95 % CI] | verdict | end-spread change [95 % CI] |",
             "|---|---|---|---|---|---|---|"]
    for r in table.to_dict("records"):
        phase = "all" if pd.isna(r["start_s"]) else f"{r['start_s']:.2f}-{r['end_s']:.2f}"
        spread = ("n/a" if pd.isna(r["spread_change"]) else
                  f"{_pct(r['spread_change'])} [{_pct(r['spread_low'])}, "
                  f"{_pct(r['spread_high'])}]")
        lines.append(f"| {r['label']} | {r['arm']} vs {r['baseline']} | {phase} | "
                     f"{r['arm_ms']:.1f} / {r['baseline_ms']:.1f} | {_pct(r['change'])} "
                     f"[{_pct(r['low'])}, {_pct(r['high'])}] | {r['verdict']} "
                     f"({r['seeds']} seeds) | {spread} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m harness.analysis.claims SWEEP_DIR", file=sys.stderr)
        return 2
    print(markdown(claims_table(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def comparison_row(table: pd.DataFrame, label: str, arm: str, baseline: str,
                   phase: int = 0) -> dict | None:
    """The row of a claims table that compares `arm` with `baseline` at the
    point `label`: over the whole window (phase 0) or its n-th phase of
    constant conditions; None where the table has none. NaN as None."""
    rows = table[(table["label"] == label) & (table["arm"] == arm)
                 & (table["baseline"] == baseline)]
    whole = rows[rows["start_s"].isna()]
    phased = rows[rows["start_s"].notna()].sort_values("start_s")
    chosen = whole if phase == 0 else phased.iloc[phase - 1:phase]
    if not len(chosen):
        return None
    row = chosen.iloc[0].to_dict()
    return {k: (None if isinstance(v, float) and pd.isna(v) else v) for k, v in row.items()}


def agrees(side: str, low: float, high: float) -> str:
    """Does a change's interval agree with a paper that says the arm is
    `side` ("faster" or "slower")? Only a whole interval on one side decides."""
    faster, slower = high < 0, low > 0
    if not (faster or slower):
        return "undecided"
    return "yes" if (faster if side == "faster" else slower) else "no: the opposite"
