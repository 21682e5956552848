"""The findings pages' parts that show a kept map: ``finding-map SWEEP
[METRIC]``, a metric's change per point of a two-axis map (rows: R,
columns: the background) with its 95 % interval and verdict, bold where
decided, seeds in parentheses, a grid's other point fields (a buffer model;
a labelled point's label) leading each row; and ``finding-summary SWEEP``,
the map in words (verdicts decided and where, the background's significant
changes and their range)."""

from __future__ import annotations

from harness.findings import change_tables, page_text, registry
from harness.outputs.words import (METRIC_WORDS, change_cell, facet_rows, map_facets, map_summary,
                                   short_name, value_text)


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
    facets, combos = map_facets(grid, table)
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
            inside = facet_rows(rows, facets, facet)
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
    """A kept map in words (harness.outputs.words.map_summary), for a page
    or the findings index."""
    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
    return map_summary(loaded.grid, loaded.deltas_mean)
