"""A sweep's results in words and table cells, for the findings pages'
generated parts and the report: a change as a percentage, a change with its
interval, verdict and seeds, a point field's short name and a point's
values in words, and a map's changes summed up (map_summary)."""

from __future__ import annotations

import math

METRIC_WORDS = {
    "iteration_time": "training's iteration time",
    "fct_small_mean": "small flows' mean FCT",
    "fct_medium_mean": "medium flows' mean FCT",
    "fct_large_mean": "large flows' mean FCT",
    "fct_all_mean": "all flows' mean FCT",
}


def pct(v: float) -> str:
    """A change as a signed percentage (two decimals below 1 %); "n/a", "stalled"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if v == math.inf:
        return "stalled"
    return f"{100 * v:+.2f}" if abs(v) < 0.01 else f"{100 * v:+.1f}"


def change_cell(row: dict, prefix: str | None = None) -> str:
    """A deltas row's change as a table cell: % [95 % interval] verdict, bold
    where decided, seeds in parentheses; `prefix`: the row's columns named
    PREFIX_change, PREFIX_low, ... (a scale check's reference)."""
    g = (lambda c: row.get(f"{prefix}_{c}")) if prefix else (lambda c: row.get(c))
    change = g("change")
    if change is None or (isinstance(change, float) and math.isnan(change)):
        return "n/a"
    low = g("low") if prefix else g("change_low")
    high = g("high") if prefix else g("change_high")
    text = pct(change)
    if low is not None and not math.isnan(low):
        text += f" [{pct(low)}, {pct(high)}]"
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
    """A kept sweep's seeds a point, in words: "1 seed", "2-4 seeds"."""
    seeds = str(record.get("seeds", "?"))
    return f"{seeds} seed{'' if seeds == '1' else 's'}"


def points_text(rows, y: str | None, x: str | None) -> str:
    """Points as 'R = 16 (lambda 23, 46), R = 8 (lambda 46)'."""
    if not y:
        return f"{short_name(x)} " + ", ".join(value_text(v) for v in rows[x]) if x else f"{len(rows)} points"
    parts = []
    for yv in sorted(rows[y].unique(), reverse=True):
        xs = sorted(rows[rows[y] == yv][x]) if x else []
        inner = f" ({short_name(x)} {', '.join(f'{v:g}' for v in xs)})" if xs else ""
        parts.append(f"{short_name(y)} = {yv:g}{inner}")
    return ", ".join(parts)


def value_text(v) -> str:
    """A point field's value in a cell: a number as it prints, a name as code."""
    return f"{v:g}" if isinstance(v, (int, float)) else f"`{v}`"


def short_name(field: str | None) -> str:
    """A point field's name in a heading (training.ratio: R)."""
    return {"training.ratio": "R", "background.rate": "lambda",
            "background.load": "load", "training.policy": "policy",
            "network.buffer.model": "buffer model"}.get(field or "", field or "")


def map_summary(grid: dict, dm) -> str:
    """A map in words: how many training verdicts are decided and where
    each class lies; for each FCT mean, where it is significantly faster or
    slower, and its range. Markdown bullets; a grid with more point fields
    than the map's two axes (a buffer model) gets its bullets once per
    value, in the grid's order."""
    from harness.outputs.plots.sweep_axes import boundary_axes, point_fields

    y, x = boundary_axes(grid)
    if not y and not x:   # not a map: points named by the grid's first axis
        x = next(iter(point_fields(grid)), None)
        return _summary_lines(dm, grid, y, x)
    facets, combos = map_facets(grid, dm)
    if not facets:
        return _summary_lines(dm, grid, y, x)
    parts = []
    for facet in combos:
        inside = facet_rows(dm, facets, facet)
        if len(inside):
            name = ", ".join(f"{short_name(f)} {value_text(v)}" for f, v in zip(facets, facet))
            parts.append(f"Under {name}:\n\n" + _summary_lines(inside, grid, y, x))
    return "\n".join(parts)


def map_facets(grid: dict, rows) -> tuple[list[str], list[tuple]]:
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


def facet_rows(rows, facets: list[str], combo: tuple):
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
