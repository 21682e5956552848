"""The findings pages' generated parts and figures, from the kept results
(harness.sweeps.findings): nothing a kept table holds is typed by hand.

The documentation's hook (docs/hooks/generated.py) replaces marker lines of
a findings page with these:

- ``<!-- generated: finding NAME -->``: what the finding ran under (preset,
  buffer model, scale, seeds, cells, CPU, date, commit, machine), its
  status against today's code, and the commands that reproduce and check it;
- ``<!-- generated: findings-status -->``: every finding, its status and
  what it ran under (the findings index);
- ``<!-- generated: finding-map SWEEP [METRIC] -->``: a metric's change per
  point of a two-axis map (rows: R, columns: the background), with its 95 %
  interval and verdict, bold where decided, seeds in parentheses; a grid's
  other point fields (a buffer model; a labelled point's label) lead each row;
- ``<!-- generated: finding-contrast A B [METRIC ...] -->``: where two maps
  of the same points disagree (A, B: 'SWEEP' or 'SWEEP:FIELD=VALUE', a
  facet of one): intervals disjoint, decided verdicts that differ, decided
  or significant under one only;
- ``<!-- generated: finding-tails SWEEP MEAN:TAIL [...] -->``: where a mean
  and its tail (fct_small_mean:fct_small_p99, query_mean:query_p99) move
  the same way, only one of them, or opposite ways;
- ``<!-- generated: findings-costs -->``: every kept sweep's cells, CPU,
  events and engine (its provenance);
- ``<!-- generated: finding-changes SWEEP METRIC [METRIC ...] -->``: the
  same as one row per point and metric;
- ``<!-- generated: finding-seeds SWEEP METRIC [METRIC ...] -->``: the
  pooled change beside each seed's own and how many seeds share its sign;
- ``<!-- generated: finding-summary SWEEP -->``: the map in words (verdicts
  decided and where, the background's significant changes and their range);
- ``<!-- generated: finding-table SWEEP COLUMN [COLUMN ...] -->``: per point
  and arm, summary columns' means over the seeds with their intervals;
- ``<!-- generated: finding-claims SWEEP [LABEL ...] -->``: a kept claims
  table (every comparison of a systems sweep, harness.analysis.claims);
- ``<!-- generated: finding-verdicts NAME -->``: each paper's claim the
  finding judges (findings.toml), its kept comparison and whether it agrees;
- ``<!-- generated: finding-frontier SWEEP -->``: the knob frontier of a
  kept sweep (harness.analysis.frontier), a table per point and its best arm;
- ``<!-- generated: finding-boundary SWEEP -->``: a kept boundary search's
  crossings per point and threshold (its boundary.parquet);
- ``<!-- generated: finding-figures NAME -->``: the finding's figures
  (findings.toml) that have been drawn, as images; none before it is kept;
- ``<!-- generated: finding-scale-check SWEEP [METRIC ...] -->``: a kept
  sweep with a scale axis, each point and metric's change at every scale
  beside the smallest's (its scale_check.parquet), and whether it lies inside.

The findings' figures are drawn by harness.outputs.findings_figures.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.sweeps import findings as kept

METRIC_WORDS = {
    "iteration_time": "training's iteration time",
    "fct_small_mean": "small flows' mean FCT",
    "fct_medium_mean": "medium flows' mean FCT",
    "fct_large_mean": "large flows' mean FCT",
    "fct_all_mean": "all flows' mean FCT",
}


def load_kept(key: str):
    from harness.analysis.tables import load_sweep

    sweep = kept.kept_sweep(key)
    if not (sweep.kept_dir / "sweep.json").is_file():
        return sweep, None
    return sweep, load_sweep(sweep.kept_dir)


def _pct(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if v == math.inf:
        return "stalled"
    return f"{100 * v:+.2f}" if abs(v) < 0.01 else f"{100 * v:+.1f}"


def _cell(row: dict, prefix: str | None = None) -> str:
    g = (lambda c: row.get(f"{prefix}_{c}")) if prefix else (lambda c: row.get(c))
    change = g("change")
    if change is None or (isinstance(change, float) and math.isnan(change)):
        return "n/a"
    low = g("low") if prefix else g("change_low")
    high = g("high") if prefix else g("change_high")
    text = _pct(change)
    if low is not None and not math.isnan(low):
        text += f" [{_pct(low)}, {_pct(high)}]"
    verdict = g("verdict")
    if isinstance(verdict, str) and verdict:
        text += f" {verdict}"
    if g("decided"):
        text = f"**{text}**"
    seeds = g("seeds")
    if seeds is not None and not (isinstance(seeds, float) and math.isnan(seeds)):
        text += f" ({int(seeds)})"
    return text


def seeds_text(record: dict) -> str:
    seeds = str(record.get("seeds", "?"))
    return f"{seeds} seed{'' if seeds == '1' else 's'}"


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
    finding = kept.finding(name)
    states = [kept.check_sweep(s) for s in finding.sweeps]
    status = kept.finding_status(states)
    lines = []
    if status == kept.NOT_KEPT:
        lines += ['!!! warning "Not yet regenerated"',
                  "    Not every sweep this page stands on is kept yet: "
                  f"`harness findings run {name}` runs its sweeps "
                  f"({', '.join('`' + s.key + '`' for s in finding.sweeps)}), keeps their "
                  "tables and generates the page's parts from them. A number below that is "
                  "typed by hand comes from runs made before the kept results existed, many "
                  "under the older per-band buffer limits (`network.buffer.model = "
                  "\"per_band\"`, the default until 2026-11-24): it is not checked against "
                  "today's code.", ""]
        some = [st for st in states if st.status != kept.NOT_KEPT]
        if some:   # a finding kept in part: what is kept already, and what is not
            lines[-1:-1] = ["    Kept so far (the parts generated from them are checked):"] + [
                f"    - {provenance_line(st.provenance)}." for st in some] + [
                "    Not kept yet: " + ", ".join(f"`{s.key}`" for s, st in
                                                 zip(finding.sweeps, states)
                                                 if st.status == kept.NOT_KEPT) + "."]
        return "\n".join(lines)
    lines.append(f"!!! info \"What this page ran under ({status})\"")
    for state in states:
        lines.append(f"    - {provenance_line(state.provenance)}.")
    if finding.pinned:
        lines.append(f"    - Pinned on purpose: {finding.pinned}.")
    if status == kept.STALE:
        lines.append("    - **Stale**: " + "; ".join(r for s in states for r in s.reasons) + ".")
    lines += [f"    - Reproduce: `harness findings run {name}` (resumes); check against "
              "today's code: `harness findings check`.", ""]
    return "\n".join(lines)


def findings_status() -> str:
    """A table of every finding: its page, status and what it ran under."""
    lines = ["| finding | status | ran under |", "|---|---|---|"]
    for finding in kept.load_registry().values():
        states = [kept.check_sweep(s) for s in finding.sweeps]
        status = kept.finding_status(states)
        ran = "; ".join(provenance_line(s.provenance) for s in states if s.provenance)
        if status == kept.NOT_KEPT:
            left = [s.key for s, st in zip(finding.sweeps, states) if st.status == kept.NOT_KEPT]
            ran = (f"{ran}; not kept yet: {', '.join(f'`{k}`' for k in left)}" if ran else
                   "typed by hand from earlier runs (most under per-band limits); not "
                   f"regenerated yet: `harness findings run {finding.name}`")
        link = f"[{finding.title}](../{finding.page})" if not finding.page.startswith(
            "findings/") else f"[{finding.title}]({finding.page.split('/', 1)[1]})"
        lines.append(f"| {link} | {status} | {ran} |")
    return "\n".join(lines) + "\n"


def finding_tails(key: str, *pairs: str) -> str:
    """Where a mean and a tail of the same quantity tell different stories:
    for each 'MEAN:TAIL' pair of deltas metrics (fct_small_mean:fct_small_p99,
    query_mean:query_p99, ...), over a kept sweep's points, where both move
    the same way, where only one of them moves significantly (its 95 %
    interval excludes 0), where they move in opposite directions, and at how
    many points the tail's change is the larger. Bullets in words; the
    numbers are finding-changes'."""
    from harness.outputs.plots.sweep_axes import boundary_axes, compared_arms, point_fields

    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    grid, dm = loaded.grid, loaded.deltas_mean
    y, x = boundary_axes(grid)
    keys = [k for k in point_fields(grid) if k in dm]

    def way(row) -> str | None:
        """Where the 95 % interval puts the change: below 0, above, across it;
        None without an interval (too few samples)."""
        low, high = row["change_low"], row["change_high"]
        if low is None or high is None or math.isnan(low) or math.isnan(high):
            return None
        return "down" if high < 0 else "up" if low > 0 else "none"

    lines = []
    for arm in compared_arms(grid):
        for pair in pairs:
            mean_metric, _, tail_metric = pair.partition(":")
            means, tails = (_by_point(dm, arm, m, keys) for m in (mean_metric, tail_metric))
            common = means.index.intersection(tails.index)
            if not len(common):
                continue
            groups: dict[str, list] = {"same": [], "mean only": [], "tail only": [],
                                       "opposite": [], "too few": []}
            larger = 0
            for point in common:
                m, t = means.loc[point], tails.loc[point]
                a, b = way(m), way(t)
                if a is None or b is None:
                    groups["too few"].append(point)
                    continue
                larger += abs(t["change"]) > abs(m["change"])
                groups["same" if a == b else "mean only" if b == "none" else
                       "tail only" if a == "none" else "opposite"].append(point)
            judged = len(common) - len(groups["too few"])

            def at(points: list) -> str:
                if not points:
                    return "0"
                where = _where(points, keys, y, x) if y or x else ""
                return f"{len(points)}" + (f" ({where})" if where else "")

            lines.append(
                f"- **`{mean_metric}` against `{tail_metric}`** (`{arm}` vs "
                f"`{grid.get('reference')}`, {len(common)} points): the same verdict at "
                f"{at(groups['same'])}; only the mean significant at {at(groups['mean only'])}; "
                f"only the tail at {at(groups['tail only'])}; opposite directions at "
                f"{at(groups['opposite'])}"
                + (f"; too few samples for a verdict at {at(groups['too few'])}"
                   if groups["too few"] else "")
                + (f". The tail's change is the larger at {larger} of {judged}." if judged
                   else "."))
    return "\n".join(lines) + "\n"


def findings_costs() -> str:
    """A table of every kept sweep's cost, from its provenance: cells,
    simulation CPU, events and their rate, the ns-3 it ran on, when. (What a
    rerun of each costs on a machine like it; `harness findings list` adds
    the estimate for those not kept.)"""
    seen = {}
    for finding in kept.load_registry().values():
        for sweep in finding.sweeps:
            seen.setdefault(sweep.key, sweep)
    lines = ["| kept sweep | cells | simulation CPU | events | events per CPU-second | "
             "engine | run |", "|---|---|---|---|---|---|---|"]
    for key, sweep in seen.items():
        record = kept.provenance(sweep)
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


def finding_map(key: str, metric: str = "iteration_time") -> str:
    """A markdown table of one metric's change per point of a two-axis map;
    a grid with more point fields (a buffer model, a qdisc) gets one leading
    column per such field, its rows grouped by their values."""
    from harness.outputs.plots.sweep_axes import boundary_axes, compared_arms
    from harness.outputs.plots.sweep_data import boundary_table
    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    grid = loaded.grid
    y, x = boundary_axes(grid)
    dm = loaded.deltas_mean
    prefix = {"iteration_time": "iteration", "fct_small_mean": "small_fct",
              "fct_large_mean": "large_fct"}.get(metric)
    if prefix is None:
        return finding_changes(key, metric)
    table = boundary_table(dm, loaded.summary, grid)
    facets, combos = _facets(grid, table)
    parts = []
    for arm in compared_arms(grid):
        rows = table[table["arm"] == arm]
        ys = sorted(rows[y].unique(), reverse=True) if y else [None]
        xs = sorted(rows[x].unique()) if x else [None]
        head = ("| " + "".join(f"{_short(f)} | " for f in facets) + f"{_short(y)} | "
                + " | ".join(f"{_short(x)} {v:g}" for v in xs) + " |")
        lines = [f"{METRIC_WORDS.get(metric, metric)}: `{arm}` vs `{grid.get('reference')}`"
                 " (%, [95 % interval], verdict; bold: decided; seeds in parentheses)", "",
                 head, "|" + "---|" * (len(facets) + len(xs) + 1)]
        for facet in combos:
            inside = _facet_rows(rows, facets, facet)
            if not len(inside):
                continue
            for yv in ys:
                cells = []
                for xv in xs:
                    match = inside[(inside[y] == yv) if y else True]
                    match = match[(match[x] == xv)] if x else match
                    cells.append(_cell(match.iloc[0].to_dict(), prefix) if len(match) else "")
                lines.append("| " + "".join(f"{_value(v)} | " for v in facet)
                             + f"{yv:g} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def finding_summary(key: str) -> str:
    """A kept map in words: how many training verdicts are decided and where
    each class lies; for each FCT mean, where it is significantly faster or
    slower, and its range. Bullets, for a page or the findings index; a grid
    with more point fields than the map's two axes (a buffer model) gets its
    bullets once per value, in the grid's order."""
    from harness.outputs.plots.sweep_axes import boundary_axes, point_fields

    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    grid, dm = loaded.grid, loaded.deltas_mean
    y, x = boundary_axes(grid)
    if not y and not x:   # not a map: points named by the grid's first axis
        x = next(iter(point_fields(grid)), None)
        return _summary_lines(dm, grid, y, x)
    facets, combos = _facets(grid, dm)
    if not facets:
        return _summary_lines(dm, grid, y, x)
    parts = []
    for facet in combos:
        inside = _facet_rows(dm, facets, facet)
        if len(inside):
            name = ", ".join(f"{_short(f)} {_value(v)}" for f, v in zip(facets, facet))
            parts.append(f"Under {name}:\n\n" + _summary_lines(inside, grid, y, x))
    return "\n".join(parts)


def _facets(grid: dict, rows) -> tuple[list[str], list[tuple]]:
    """The point fields a map's two axes do not show, and their value
    combinations in the order the grid's cells list them (not sorted). A grid
    of labelled points (a `points` list) is faceted by its labels alone: the
    label names the settings each point changes."""
    from harness.outputs.plots.sweep_axes import facet_fields

    facets = facet_fields(grid)
    if "label" in facets:
        facets = ["label"]
    combos = list(dict.fromkeys(tuple(c["point"].get(f) for f in facets)
                                for c in grid.get("cells", [])))
    if not combos and facets:
        combos = list(dict.fromkeys(map(tuple, rows[facets].itertuples(index=False))))
    return facets, combos


def _facet_rows(rows, facets: list[str], combo: tuple):
    for f, v in zip(facets, combo):
        rows = rows[rows[f].isna()] if v is None else rows[rows[f] == v]
    return rows


def _summary_lines(dm, grid: dict, y: str | None, x: str | None) -> str:
    from harness.analysis import stats
    from harness.outputs.plots.sweep_axes import compared_arms

    lines = []
    for arm in compared_arms(grid):
        mine = dm[dm["arm"] == arm]
        training = mine[mine["metric"] == "iteration_time"]
        decided = training[training["decided"].eq(True)]
        where = []
        for verdict in stats.TRAINING_CLASSES:
            rows = decided[decided["verdict"] == verdict]
            if len(rows):
                where.append(f"{verdict} at {_points(rows, y, x)}")
        lines.append(f"- **Training** (`{arm}` vs `{grid.get('reference')}`): "
                     f"{len(decided)} of {len(training)} verdicts decided"
                     + (": " + "; ".join(where) if where else "") + ".")
        for metric in ("fct_small_mean", "fct_medium_mean", "fct_large_mean"):
            rows = mine[mine["metric"] == metric]
            if not len(rows):
                continue
            faster = rows[rows["verdict"] == stats.FASTER]
            slower = rows[rows["verdict"] == stats.SLOWER]
            span = (f"; changes from {_pct(rows['change'].min())} to "
                    f"{_pct(rows['change'].max())} %") if rows["change"].notna().any() else ""
            few = rows[rows["verdict"] == stats.TOO_FEW]
            words = METRIC_WORDS[metric]
            some = 0 < len(faster) < len(rows)
            text = (f"- **{words[0].upper()}{words[1:]}**: significantly faster at "
                    f"{len(faster)} of {len(rows)} points"
                    + (f" ({_points(faster, y, x)})" if some else "")
                    + f", slower at {len(slower)}"
                    + (f" ({_points(slower, y, x)})" if len(slower) else "")
                    + (f", too few samples at {len(few)}" if len(few) else "") + span + ".")
            lines.append(text)
    return "\n".join(lines) + "\n"


def _points(rows, y: str | None, x: str | None) -> str:
    """Points as 'R = 16 (lambda 23, 46), R = 8 (lambda 46)'."""
    if not y:
        return f"{_short(x)} " + ", ".join(_value(v) for v in rows[x]) if x else f"{len(rows)} points"
    parts = []
    for yv in sorted(rows[y].unique(), reverse=True):
        xs = sorted(rows[rows[y] == yv][x]) if x else []
        inner = f" ({_short(x)} {', '.join(f'{v:g}' for v in xs)})" if xs else ""
        parts.append(f"{_short(y)} = {yv:g}{inner}")
    return ", ".join(parts)


def _value(v) -> str:
    return f"{v:g}" if isinstance(v, (int, float)) else f"`{v}`"


def _short(field: str | None) -> str:
    return {"training.ratio": "R", "background.rate": "lambda",
            "background.load": "load", "training.policy": "policy",
            "network.buffer.model": "buffer model"}.get(field or "", field or "")


def _selection(spec: str):
    """'SWEEP' or 'SWEEP:FIELD=VALUE': a kept sweep's deltas, the rows of one
    facet of it where a field is named (VALUE as the field's values print),
    and a name for them."""
    key, _, where = spec.partition(":")
    sweep, loaded = load_kept(key)
    if loaded is None:
        return None, None, key
    dm = loaded.deltas_mean
    if where:
        field, _, value = where.partition("=")
        if field not in dm:
            raise KeyError(f"finding-contrast {spec}: no field {field!r} in {key}'s points")
        dm = dm[dm[field].astype(str) == value]
        if not len(dm):
            raise KeyError(f"finding-contrast {spec}: no point of {key} has {field} = {value}")
        return loaded, dm, f"`{value}`"
    return loaded, dm, f"`{key}`"


def finding_contrast(a: str, b: str, *metrics: str) -> str:
    """Where two maps of the same points disagree (two facets of one sweep,
    or two sweeps: 'SWEEP' or 'SWEEP:FIELD=VALUE'): per metric, the points
    whose 95 % intervals are disjoint, whose decided verdicts differ, and
    those decided (training) or significant (FCTs) under one only. Bullets
    in words; the numbers are the maps' (finding-map)."""
    from harness.outputs.plots.sweep_axes import boundary_axes, compared_arms

    (la, da, na), (lb, db, nb) = _selection(a), _selection(b)
    if la is None or lb is None:
        missing = a if la is None else b
        return f"*(no kept tables for `{missing.partition(':')[0]}` yet: `harness findings run`)*"
    y, x = boundary_axes(la.grid)
    keys = [k for k in (y, x) if k]
    metrics = metrics or ("iteration_time", "fct_small_mean", "fct_large_mean")
    lines = []
    for arm in compared_arms(la.grid):
        for metric in metrics:
            ra, rb = _by_point(da, arm, metric, keys), _by_point(db, arm, metric, keys)
            common = ra.index.intersection(rb.index)
            if not len(common):
                continue
            disjoint, differ, only_a, only_b = [], [], [], []
            for point in common:
                p, q = ra.loc[point], rb.loc[point]
                if (p["change_high"] < q["change_low"]) or (q["change_high"] < p["change_low"]):
                    disjoint.append(point)
                decided_a, decided_b = bool(p["decided"]), bool(q["decided"])
                if decided_a and decided_b and p["verdict"] != q["verdict"]:
                    differ.append(point)
                elif decided_a and not decided_b:
                    only_a.append(point)
                elif decided_b and not decided_a:
                    only_b.append(point)
            word = "decided" if metric.startswith("iteration") else "significant"
            where = lambda pts: _where(pts, keys, y, x) if pts else "none"
            words = METRIC_WORDS.get(metric, metric)
            lines.append(
                f"- **{words[0].upper()}{words[1:]}** (`{arm}` vs `{la.grid.get('reference')}`,"
                f" {na} against {nb}, {len(common)} points): intervals disjoint at "
                f"{len(disjoint)} ({where(disjoint)}); decided verdicts differ at {len(differ)}"
                f" ({where(differ)}); {word} under {na} only at {len(only_a)} "
                f"({where(only_a)}), under {nb} only at {len(only_b)} ({where(only_b)}).")
    return "\n".join(lines) + "\n"


def _by_point(dm, arm: str, metric: str, keys: list[str]):
    """One arm's rows of one deltas metric, indexed by their point."""
    return dm[(dm["arm"] == arm) & (dm["metric"] == metric)].set_index(keys)


def _where(points: list, keys: list[str], y: str | None, x: str | None) -> str:
    """Index values of _by_point's rows in words ('R = 2 (lambda 23, 46)')."""
    import pandas as pd

    frame = pd.DataFrame([p if isinstance(p, tuple) else (p,) for p in points], columns=keys)
    return _points(frame, y, x)


def finding_changes(key: str, *metrics: str) -> str:
    """One row per point, arm and metric: change [interval] verdict (seeds)."""
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    dm = loaded.deltas_mean
    keys = [k for k in point_fields(loaded.grid) if k in dm]
    rows = dm[dm["metric"].isin(metrics)] if metrics else dm
    head = "| " + " | ".join([*(_short(k) for k in keys), "arm", "metric", "change, %"]) + " |"
    lines = [head, "|" + "---|" * (len(keys) + 3)]
    for row in rows.sort_values([*keys, "arm", "metric"]).to_dict("records"):
        values = [f"{row[k]:g}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        lines.append("| " + " | ".join([*values, f"`{row['arm']}`", row["metric"],
                                        _cell(row)]) + " |")
    return "\n".join(lines) + "\n"


def finding_seeds(key: str, *metrics: str) -> str:
    """One row per point, arm and metric: the pooled change with its
    interval, then each seed's own change (deltas.parquet) and how many seeds
    share the pooled change's sign. A pooled interval over requests can be
    carried by one seed's rare event (a stalled connection); the seeds show it."""
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = load_kept(key)
    if loaded is None or loaded.deltas is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    dm, deltas = loaded.deltas_mean, loaded.deltas
    keys = [k for k in point_fields(loaded.grid) if k in dm]
    seeds = sorted(deltas["seed"].unique())
    head = [*(_short(k) for k in keys), "arm", "metric", "pooled change, %",
            *(f"seed {s}" for s in seeds), "seeds with its sign"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = dm[dm["metric"].isin(metrics)] if metrics else dm
    # each point, arm and metric's seeds, grouped once: {seed: change}
    per_seed = {group: dict(zip(g["seed"], g["change"]))
                for group, g in deltas.groupby([*keys, "arm", "metric"])}
    for row in rows.sort_values([*keys, "arm", "metric"]).to_dict("records"):
        by_seed = per_seed.get(tuple(row[k] for k in [*keys, "arm", "metric"]), {})
        known = [v for v in by_seed.values() if not math.isnan(v)]
        pooled = row.get("change")
        same_sign = ("n/a" if pooled is None or math.isnan(pooled) or not known else
                     f"{sum(1 for v in known if v * pooled > 0)} of {len(known)}")
        lines.append("| " + " | ".join([
            *(_value(row[k]) for k in keys), f"`{row['arm']}`", row["metric"], _cell(row),
            *(_pct(by_seed[s]) if s in by_seed else "" for s in seeds), same_sign]) + " |")
    return "\n".join(lines) + "\n"


def finding_table(key: str, *columns: str) -> str:
    """One row per point and arm: each summary.parquet column's mean over the
    seeds with its 95 % interval (seconds shown as ms), seeds in parentheses:
    the absolute values behind a page's comparisons."""
    from harness.analysis.metrics import seed_mean
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
    summary = loaded.summary
    if "status" in summary:
        summary = summary[summary["status"] == "ok"]
    unknown = [c for c in columns if c not in summary]
    if unknown:
        raise KeyError(f"finding-table {key}: no column {unknown[0]!r} in its summary.parquet")
    keys = [k for k in point_fields(loaded.grid) if k in summary]
    by = keys + (["arm"] if summary["arm"].notna().any() else [])
    head = [*(_short(k) for k in keys), *(["arm"] if "arm" in by else []),
            *(_column_words(c) for c in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for labels, rows in summary.groupby(by, sort=False, dropna=False):   # the grid's order
        labels = labels if isinstance(labels, tuple) else (labels,)
        values = [f"{v:g}" if isinstance(v, float) else f"`{v}`" if b == "arm" else str(v)
                  for b, v in zip(by, labels)]
        cells = []
        for column in columns:
            n, mean, low, high = seed_mean(rows[column])
            unit = 1000 if column.endswith("_s") else 1
            text = f"{unit * mean:.4g}"
            if n > 1:
                text += f" [{unit * low:.4g}, {unit * high:.4g}]"
            cells.append(f"{text} ({n})")
        lines.append("| " + " | ".join(values + cells) + " |")
    return "\n".join(lines) + "\n"


def _column_words(column: str) -> str:
    """A summary column as a table heading: job_a_mean_iteration_s ->
    'job a mean iteration, ms'."""
    words = column.removesuffix("_s").replace("_", " ")
    return f"{words}, ms" if column.endswith("_s") else words


def _claims(key: str):
    from harness.analysis.tables import read_table

    path = kept.kept_sweep(key).kept_dir / "claims.parquet"
    return read_table(path) if path.is_file() else None


def finding_claims(key: str, *labels: str) -> str:
    """A kept claims table (harness.analysis.claims), the points `labels` or all."""
    from harness.analysis import claims

    table = _claims(key)
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
    claims = kept.finding(name).claims
    tables = {key: _claims(key) for key in {c.sweep for c in claims}}   # each read once
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
        change = f"{_pct(row['change'])} [{_pct(row['low'])}, {_pct(row['high'])}] %"
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

    sweep, loaded = load_kept(key)
    if loaded is None:
        return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
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


def finding_boundary(key: str) -> str:
    """A kept search's table: per point and threshold its status, crossing,
    bracket, undecided band, probes, seeds and CPU (harness boundary's)."""
    from harness.analysis.tables import read_table
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = load_kept(key)
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

    head = [*(_short(k) for k in keys), "threshold", "status", "crossing", "bracket",
            "undecided band", "probes", "seeds", "CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table.to_dict("records"):
        lines.append("| " + " | ".join([
            *(_value(r[k]) for k in keys), f"{100 * r['threshold']:g} %", r["status"],
            num(r["crossing"]), pair(r["low"], r["high"]), pair(r["band_low"], r["band_high"]),
            str(r["probes"]), str(r["seeds"]), f"{r['cpu_s']:,.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def finding_figures(name: str) -> str:
    """The finding's drawn figures as Markdown images, linked relative to its
    page (a figure not drawn yet, before its sweep is kept, is left out: a
    link to a missing file would break the site)."""
    import os

    from harness.config.paths import DOCS_DIR

    finding = kept.finding(name)
    page_dir = (DOCS_DIR / finding.page).parent
    lines = []
    for figure in finding.figures:
        if (DOCS_DIR / figure.file).is_file():
            what = f"{figure.sweep}: {figure.kind}" + (
                f" of {figure.metric}" if figure.metric != "iteration_time" else "")
            lines.append(f"![{what}]({os.path.relpath(DOCS_DIR / figure.file, page_dir)})")
    return "\n\n".join(lines) + "\n" if lines else ""


def finding_scale_check(key: str, *metrics: str) -> str:
    """Per point, arm and metric: the change at the reference scale and at
    each scale-down (% [95 % interval]), and per scale-down whether its change
    lies inside the reference's interval and has its sign."""
    from harness.analysis.tables import read_table

    path = kept.kept_sweep(key).kept_dir / "scale_check.parquet"
    if not path.is_file():
        return f"*(no kept scale check for `{key}` yet: `harness findings run`)*"
    table = read_table(path)
    if metrics:
        table = table[table["metric"].isin(metrics)]
    keys = list(table.columns[:list(table.columns).index("arm")])
    scales = sorted(table["scale"].unique())
    ref = table["reference_scale"].iloc[0] if len(table) else 1
    head = [*(_short(k) for k in keys), "arm", "metric", f"scale {ref:g} (reference)",
            *(f"scale {s:g}" for s in scales), "inside / same sign"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for labels, rows in table.groupby([*keys, "arm", "metric"], sort=False):
        first = rows.iloc[0]
        by_scale = {r["scale"]: r for r in rows.to_dict("records")}
        cells = [_cell(dict(first), "reference")]
        cells += [_cell(by_scale[s]) if s in by_scale else "" for s in scales]
        marks = ", ".join(f"{s:g}: {'yes' if by_scale[s]['within'] else 'no'} / "
                          f"{'yes' if by_scale[s]['same_sign'] else 'no'}"
                          for s in scales if s in by_scale)
        lines.append("| " + " | ".join([*(_value(v) for v in labels[:len(keys)]),
                                        f"`{first['arm']}`", METRIC_WORDS.get(first["metric"],
                                                                            first["metric"]),
                                        *cells, marks]) + " |")
    lines.append("")
    for s in scales:   # the table in one line per scale-down
        at = table[table["scale"] == s]
        words = []
        for what, rows in (("training", at[at["metric"] == "iteration_time"]),
                           ("the flows' FCTs", at[at["metric"].str.startswith("fct_")])):
            if len(rows):
                words.append(f"{what} inside the reference's interval in {int(rows['within'].sum())} "
                             f"of {len(rows)}, with its sign in {int(rows['same_sign'].sum())}")
        lines.append(f"- Scale {s:g}: " + "; ".join(words) + ".")
    return "\n".join(lines) + "\n"


#: the findings pages' markers (docs/hooks/generated.py) and what fills each
MARKERS = {"finding": finding_block, "findings-status": findings_status,
           "finding-map": finding_map, "finding-changes": finding_changes,
           "finding-summary": finding_summary, "finding-table": finding_table,
           "finding-claims": finding_claims, "finding-verdicts": finding_verdicts,
           "finding-frontier": finding_frontier, "finding-boundary": finding_boundary,
           "finding-scale-check": finding_scale_check, "finding-figures": finding_figures,
           "finding-contrast": finding_contrast, "findings-costs": findings_costs,
           "finding-tails": finding_tails, "finding-seeds": finding_seeds}
