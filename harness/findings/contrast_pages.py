"""The findings pages' parts that say, in words, where two sets of changes
tell different stories: ``finding-contrast A B [METRIC ...]``, where two
maps of the same points disagree (A, B: 'SWEEP' or 'SWEEP:FIELD=VALUE', a
facet of one: intervals disjoint, decided verdicts that differ, decided or
significant under one only); and ``finding-tails SWEEP MEAN:TAIL [...]``,
where a mean and its tail (fct_small_mean:fct_small_p99,
query_mean:query_p99) move the same way, only one of them, or opposite
ways."""

from __future__ import annotations

import math

from harness.findings import page_text, registry
from harness.outputs.words import METRIC_WORDS, points_text


def finding_tails(key: str, *pairs: str) -> str:
    """Where a mean and a tail of the same quantity tell different stories:
    for each 'MEAN:TAIL' pair of deltas metrics (fct_small_mean:fct_small_p99,
    query_mean:query_p99, ...), over a kept sweep's points, where both move
    the same way, where only one of them moves significantly (its 95 %
    interval excludes 0), where they move in opposite directions, and at how
    many points the tail's change is the larger. Bullets in words; the
    numbers are finding-changes'."""
    from harness.outputs.plots.sweep_axes import boundary_axes, compared_arms, point_fields

    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return page_text.no_tables(key)
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


def _selection(spec: str):
    """'SWEEP' or 'SWEEP:FIELD=VALUE': a kept sweep's deltas, the rows of one
    facet of it where a field is named (VALUE as the field's values print),
    and a name for them."""
    key, _, where = spec.partition(":")
    sweep, loaded = registry.load_kept(key)
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
    return points_text(frame, y, x)
