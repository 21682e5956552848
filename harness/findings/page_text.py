"""The findings pages' words and table cells, shared by every generated
part: a change as a percentage, a change with its interval, verdict and
seeds, a point field's short name and a point's values in words."""

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


def no_tables(key: str) -> str:
    """What a part says in place of its table before its sweep is kept."""
    return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
