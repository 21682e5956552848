"""The findings pages' parts that show a kept map: ``finding-map SWEEP
[METRIC]``, a metric's change per point of a two-axis map (rows: R,
columns: the background) with its 95 % interval and verdict, bold where
decided, seeds in parentheses, a grid's other point fields (a buffer model;
a labelled point's label) leading each row; and ``finding-summary SWEEP``,
the map in words (verdicts decided and where, the background's significant
changes and their range)."""

from __future__ import annotations

from harness.findings import change_tables, page_text, registry
from harness.findings.page_text import (METRIC_WORDS, change_cell, pct, points_text, short_name,
                                        value_text)


def finding_map(key: str, metric: str = "iteration_time") -> str:
    """A markdown table of one metric's change per point of a two-axis map;
    a grid with more point fields (a buffer model, a qdisc) gets one leading
    column per such field, its rows grouped by their values."""
    from harness.outputs.plots.sweep_axes import boundary_axes, compared_arms
    from harness.outputs.plots.sweep_data import boundary_table
    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
    grid = loaded.grid
    y, x = boundary_axes(grid)
    dm = loaded.deltas_mean
    prefix = {"iteration_time": "iteration", "fct_small_mean": "small_fct",
              "fct_large_mean": "large_fct"}.get(metric)
    if prefix is None:
        return change_tables.finding_changes(key, metric)
    table = boundary_table(dm, loaded.summary, grid)
    facets, combos = _facets(grid, table)
    parts = []
    for arm in compared_arms(grid):
        rows = table[table["arm"] == arm]
        ys = sorted(rows[y].unique(), reverse=True) if y else [None]
        xs = sorted(rows[x].unique()) if x else [None]
        head = ("| " + "".join(f"{short_name(f)} | " for f in facets) + f"{short_name(y)} | "
                + " | ".join(f"{short_name(x)} {v:g}" for v in xs) + " |")
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
                    cells.append(change_cell(match.iloc[0].to_dict(), prefix) if len(match) else "")
                lines.append("| " + "".join(f"{value_text(v)} | " for v in facet)
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

    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
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
            name = ", ".join(f"{short_name(f)} {value_text(v)}" for f, v in zip(facets, facet))
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
                where.append(f"{verdict} at {points_text(rows, y, x)}")
        lines.append(f"- **Training** (`{arm}` vs `{grid.get('reference')}`): "
                     f"{len(decided)} of {len(training)} verdicts decided"
                     + (": " + "; ".join(where) if where else "") + ".")
        for metric in ("fct_small_mean", "fct_medium_mean", "fct_large_mean"):
            rows = mine[mine["metric"] == metric]
            if not len(rows):
                continue
            faster = rows[rows["verdict"] == stats.FASTER]
            slower = rows[rows["verdict"] == stats.SLOWER]
            span = (f"; changes from {pct(rows['change'].min())} to "
                    f"{pct(rows['change'].max())} %") if rows["change"].notna().any() else ""
            few = rows[rows["verdict"] == stats.TOO_FEW]
            words = METRIC_WORDS[metric]
            some = 0 < len(faster) < len(rows)
            text = (f"- **{words[0].upper()}{words[1:]}**: significantly faster at "
                    f"{len(faster)} of {len(rows)} points"
                    + (f" ({points_text(faster, y, x)})" if some else "")
                    + f", slower at {len(slower)}"
                    + (f" ({points_text(slower, y, x)})" if len(slower) else "")
                    + (f", too few samples at {len(few)}" if len(few) else "") + span + ".")
            lines.append(text)
    return "\n".join(lines) + "\n"
