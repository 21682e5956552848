"""The findings pages' tables of a kept sweep's numbers, one row per point:
``finding-changes SWEEP METRIC [...]`` (each point, arm and metric's change
[interval] verdict), ``finding-seeds SWEEP METRIC [...]`` (the pooled change
beside each seed's own and how many seeds share its sign),
``finding-table SWEEP COLUMN [...]`` (summary columns' means over the seeds
with their intervals) and ``finding-scale-check SWEEP [METRIC ...]`` (a
sweep with a scale axis: each change at every scale beside the smallest's,
and whether it lies inside)."""

from __future__ import annotations

import math

from harness.findings import page_text, registry
from harness.outputs.words import METRIC_WORDS, change_cell, pct, short_name, value_text


def finding_changes(key: str, *metrics: str) -> str:
    """One row per point, arm and metric: change [interval] verdict (seeds)."""
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
    dm = loaded.deltas_mean
    keys = [k for k in point_fields(loaded.grid) if k in dm]
    rows = dm[dm["metric"].isin(metrics)] if metrics else dm
    head = "| " + " | ".join([*(short_name(k) for k in keys), "arm", "metric", "change, %"]) + " |"
    lines = [head, "|" + "---|" * (len(keys) + 3)]
    for row in rows.sort_values([*keys, "arm", "metric"]).to_dict("records"):
        values = [f"{row[k]:g}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        lines.append("| " + " | ".join([*values, f"`{row['arm']}`", row["metric"],
                                        change_cell(row)]) + " |")
    return "\n".join(lines) + "\n"


def finding_seeds(key: str, *metrics: str) -> str:
    """One row per point, arm and metric: the pooled change with its
    interval, then each seed's own change (deltas.parquet) and how many seeds
    share the pooled change's sign. A pooled interval over requests can be
    carried by one seed's rare event (a stalled connection); the seeds show it."""
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = registry.load_kept(key)
    if loaded is None or loaded.deltas is None:
        return page_text.no_tables(key)
    dm, deltas = loaded.deltas_mean, loaded.deltas
    keys = [k for k in point_fields(loaded.grid) if k in dm]
    seeds = sorted(deltas["seed"].unique())
    head = [*(short_name(k) for k in keys), "arm", "metric", "pooled change, %",
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
            *(value_text(row[k]) for k in keys), f"`{row['arm']}`", row["metric"], change_cell(row),
            *(pct(by_seed[s]) if s in by_seed else "" for s in seeds), same_sign]) + " |")
    return "\n".join(lines) + "\n"


def finding_table(key: str, *columns: str) -> str:
    """One row per point and arm: each summary.parquet column's mean over the
    seeds with its 95 % interval (seconds shown as ms), seeds in parentheses:
    the absolute values behind a page's comparisons."""
    from harness.analysis.metrics import seed_mean
    from harness.outputs.plots.sweep_axes import point_fields

    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
    summary = loaded.summary
    if "status" in summary:
        summary = summary[summary["status"] == "ok"]
    unknown = [c for c in columns if c not in summary]
    if unknown:
        raise KeyError(f"finding-table {key}: no column {unknown[0]!r} in its summary.parquet")
    keys = [k for k in point_fields(loaded.grid) if k in summary]
    by = keys + (["arm"] if summary["arm"].notna().any() else [])
    head = [*(short_name(k) for k in keys), *(["arm"] if "arm" in by else []),
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


def finding_scale_check(key: str, *metrics: str) -> str:
    """Per point, arm and metric: the change at the reference scale and at
    each scale-down (% [95 % interval]), and per scale-down whether its change
    lies inside the reference's interval and has its sign."""
    from harness.analysis.tables import read_table

    path = registry.kept_sweep(key).kept_dir / "scale_check.parquet"
    if not path.is_file():
        return f"*(no kept scale check for `{key}` yet: `harness findings run`)*"
    table = read_table(path)
    if metrics:
        table = table[table["metric"].isin(metrics)]
    keys = list(table.columns[:list(table.columns).index("arm")])
    scales = sorted(table["scale"].unique())
    ref = table["reference_scale"].iloc[0] if len(table) else 1
    head = [*(short_name(k) for k in keys), "arm", "metric", f"scale {ref:g} (reference)",
            *(f"scale {s:g}" for s in scales), "inside / same sign"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for labels, rows in table.groupby([*keys, "arm", "metric"], sort=False):
        first = rows.iloc[0]
        by_scale = {r["scale"]: r for r in rows.to_dict("records")}
        cells = [change_cell(dict(first), "reference")]
        cells += [change_cell(by_scale[s]) if s in by_scale else "" for s in scales]
        marks = ", ".join(f"{s:g}: {'yes' if by_scale[s]['within'] else 'no'} / "
                          f"{'yes' if by_scale[s]['same_sign'] else 'no'}"
                          for s in scales if s in by_scale)
        lines.append("| " + " | ".join([*(value_text(v) for v in labels[:len(keys)]),
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
