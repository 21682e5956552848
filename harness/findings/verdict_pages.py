"""The findings pages' parts that judge arms: ``finding-claims SWEEP
[LABEL ...]`` (a kept claims table: every comparison of a systems sweep,
harness.analysis.claims), ``finding-verdicts NAME`` (each paper's claim the
finding judges, findings.toml, beside its kept comparison and whether it
agrees) and ``finding-frontier SWEEP`` (the knob frontier of a kept sweep,
harness.analysis.frontier: a table per point and its best arm)."""

from __future__ import annotations

from harness.findings import page_text, registry
from harness.outputs.words import pct


def finding_claims(key: str, *labels: str) -> str:
    """A kept claims table (harness.analysis.claims), the points `labels` or all."""
    from harness.analysis import claims

    table = registry.claims_table(key)
    if table is None:
        return f"*(no kept claims table for `{key}` yet: `harness findings run`)*"
    if labels:
        table = table[table["label"].isin(labels)]
    return claims.markdown(table) + "\n"


def finding_verdicts(name: str) -> str:
    """Each paper's claim of a finding (findings.toml `claims`) beside the
    kept comparison that tests it and whether its interval agrees."""
    from harness.analysis import claims as claims_table

    lines = ["| system | paper's claim | tested as | iteration ms, arm / baseline | "
             "change [95 % CI] | agrees? |", "|---|---|---|---|---|---|"]
    claims = registry.finding(name).claims
    tables = {key: registry.claims_table(key) for key in {c.sweep for c in claims}}   # each read once
    for claim in claims:
        table = tables[claim.sweep]
        row = (claims_table.comparison_row(table, claim.label, claim.arm, claim.baseline,
                                           claim.phase) if table is not None else None)
        tested = f"`{claim.arm}` vs `{claim.baseline}` at `{claim.label}`"
        if row is None:
            lines.append(f"| {claim.system} | {claim.claim} | {tested} | not kept | | |")
            continue
        if claim.phase:
            tested += f", {row['start_s']:.2f}-{row['end_s']:.2f} s"
        change = f"{pct(row['change'])} [{pct(row['low'])}, {pct(row['high'])}] %"
        lines.append(f"| {claim.system} | {claim.claim} | {tested} | {row['arm_ms']:.1f} / "
                     f"{row['baseline_ms']:.1f} | {change} | "
                     f"{claims_table.agrees(claim.side, row['low'], row['high'])} ({row['seeds']} seeds) |")
    return "\n".join(lines) + "\n"


def finding_frontier(key: str) -> str:
    """Per point: each arm's training slowdown and the background's mean-FCT
    gains (% [95 % interval], verdict), its Pareto marks, then the point's
    best arm or why none qualifies (harness frontier's table, from the kept
    deltas_mean)."""
    from harness.analysis import frontier

    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
    table, keys = frontier.sweep_frontier(loaded.deltas_mean, loaded.grid)
    verdicts = dict(frontier.point_verdicts(table, keys))
    out = []
    for name, rows in table.groupby([frontier.point_key(v) for v in
                                     table[keys].itertuples(index=False)], sort=False):
        point = frontier.point_name({k: rows.iloc[0][k] for k in keys})
        out += [f"**{point}**", "",
                "| arm | slowdown | small-flow gain | large-flow gain | Pareto (small, large) |",
                "|---|---|---|---|---|"]
        for r in rows.to_dict("records"):
            if r["is_reference"]:
                out.append(f"| `{r['arm']}` | 0 (reference) | 0 | 0 | "
                           f"{frontier.pareto_marks(r)} |")
                continue
            slow = frontier.interval_text(r["slowdown"], r["slowdown_low"], r["slowdown_high"])
            slow += f" {r['slowdown_verdict']}" + ("" if r["slowdown_decided"] else " (undecided)")
            gains = [frontier.interval_text(r[f"{c}_gain"], r[f"{c}_gain_low"],
                                            r[f"{c}_gain_high"]) + f" {r[f'{c}_verdict']}"
                     for c, _ in frontier.GAIN_CLASSES]
            best = " **best**" if r["best"] else ""
            out.append(f"| `{r['arm']}`{best} | {slow} | {gains[0]} | {gains[1]} | "
                       f"{frontier.pareto_marks(r)} |")
        out += ["", verdicts[point], ""]
    out.append(f"Pareto: {frontier.PARETO_LEGEND}.")
    return "\n".join(out) + "\n"
