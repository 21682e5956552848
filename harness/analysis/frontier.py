"""The knob frontier (docs/user-guide/frontier.md): per point of a sweep,
each arm's training slowdown against the background's gains, the Pareto set
of the arms, and the best arm that costs training nothing. Pure: from a
sweep's deltas_mean table only (harness.sweeps.aggregate), no ns-3, no files.

- slowdown: the iteration-time change against the point's reference arm
  (`change`, `change_low`, `change_high` of deltas_mean's `iteration_time`);
- gain of a size class: minus its mean-FCT change (`fct_small_mean`,
  `fct_large_mean`): +30 % = the background's flows finish in 30 % less time.

- gain of a service (each changed statistic of services.CHANGED_STATS the
  table has: `query_p99_gain`, `rpc_slo_attainment_gain`, ...): minus its
  change, or its change where higher is better (SLO attainment, in points),
  with its interval and verdict; reported beside the flows' gains, not part
  of the Pareto set or the best arm (which keep to the flows).

The reference arm is a row too, at slowdown 0 and gain 0 exactly: doing
nothing is a candidate, and an arm that costs training more than it gives
the background does not dominate it.

Pareto set, per point and size class, judged on the estimates: an arm is on
it when no other arm has a slowdown at most its own and a gain at least its
own, one of them strictly. An arm off the set names the arms that dominate
it (`dominated_by_<class>`), and `dominance_decided_<class>` says whether
the intervals alone decide it: some dominating arm's whole slowdown interval
lies at or below this arm's, and its whole gain interval at or above this
arm's (interval ends compared, unpaired: conservative, since both arms
share the reference's flows and their difference is surer than the two
intervals suggest).

Best arm of a point: among the arms whose slowdown is decided green (the
whole interval <= stats.GREEN_MAX) with a significant gain in some size
class (its interval above 0) and no size class significantly slower, the
one with the largest small-flow gain (the latency-sensitive flows), then
the largest large-flow gain. Where no arm qualifies, every arm's
`why_not` says which condition its intervals miss."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from harness.analysis import services, stats

SLOWDOWN_METRIC = "iteration_time"
#: (size class, deltas_mean metric of its mean FCT)
GAIN_CLASSES = (("small", "fct_small_mean"), ("large", "fct_large_mean"))
#: deltas_mean's columns that are not point keys
VALUE_COLUMNS = frozenset({
    "arm", "metric", "n", "mean", "ci95_low", "ci95_high", "change", "change_low",
    "change_high", "samples", "seeds", "verdict", "decided", "seeds_to_decide"})
REFERENCE_VERDICT = "reference"


def point_keys_of(deltas_mean: pd.DataFrame) -> list[str]:
    """The point columns of a deltas_mean table: every column but its values."""
    return [c for c in deltas_mean.columns if c not in VALUE_COLUMNS]


def _key(values) -> str:
    """A point's values as one hashable text (NaN, a field the point does not
    set, as null; numbers as floats, so 16 and 16.0 are one point)."""
    def norm(v):
        if _missing(v):
            return None
        if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)):
            return float(v)
        return v
    return json.dumps([norm(v) for v in values], default=str)


def point_key(values) -> str:
    """The key of a point (its values in point-key order) in frontier_table's `reference`."""
    return _key(values)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def point_name(point: Mapping[str, Any]) -> str:
    """A point as text: its label, else "field=value, ..." of the fields it sets."""
    label = point.get("label")
    if isinstance(label, str) and label:
        return label
    parts = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
             for k, v in point.items() if not _missing(v)]
    return ", ".join(parts) or "all cells"


def frontier_table(deltas_mean: pd.DataFrame, point_keys: list[str] | None = None,
                   reference: str | Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per point and arm (the reference arm included, at 0): slowdown
    and the gains with their intervals and verdicts, the Pareto set per size
    class, eligibility and the best arm (see the module's doc). reference:
    the reference arm's name, or per point (keyed by point_key(values)); None:
    "reference". An empty table gives an empty frame with the columns."""
    keys = point_keys if point_keys is not None else point_keys_of(deltas_mean)
    gains = service_gains(deltas_mean)
    rows: list[dict] = []
    if len(deltas_mean):
        frame = deltas_mean.assign(_point=[_key(v) for v in
                                           deltas_mean[keys].itertuples(index=False)]) \
            if keys else deltas_mean.assign(_point=_key([]))
        for point, group in frame.groupby("_point", sort=False):
            first = group.iloc[0]
            values = {k: first[k] for k in keys}
            ref = reference.get(point) if isinstance(reference, Mapping) else reference
            rows += _point_rows(values, group, ref or "reference", gains)
    columns = [*keys, *COLUMNS, *(f"{m}_{s}" for m in gains for s in SERVICE_GAIN_COLUMNS)]
    table = pd.DataFrame(rows, columns=columns)
    for c in BOOL_COLUMNS:
        table[c] = table[c].astype(bool)
    return table


COLUMNS = (
    "arm", "is_reference", "seeds",
    "slowdown", "slowdown_low", "slowdown_high", "slowdown_verdict", "slowdown_decided",
    *(f"{c}_{s}" for c, _ in GAIN_CLASSES for s in ("gain", "gain_low", "gain_high",
                                                     "verdict", "significant")),
    *(f"{s}_{c}" for c, _ in GAIN_CLASSES for s in ("pareto", "dominated_by",
                                                     "dominance_decided")),
    "eligible", "why_not", "best")
BOOL_COLUMNS = ("is_reference", "slowdown_decided",
                *(f"{c}_significant" for c, _ in GAIN_CLASSES),
                *(f"pareto_{c}" for c, _ in GAIN_CLASSES),
                *(f"dominance_decided_{c}" for c, _ in GAIN_CLASSES), "eligible", "best")


#: each service gain's columns, after `<metric>_`
SERVICE_GAIN_COLUMNS = ("gain", "gain_low", "gain_high", "verdict", "significant")


def service_gains(deltas_mean: pd.DataFrame) -> list[str]:
    """The services' changed metrics of a deltas_mean table, in its order."""
    if "metric" not in deltas_mean:
        return []
    return [m for m in dict.fromkeys(deltas_mean["metric"]) if services.stat_of(m) is not None]


def _service_gains(metric: pd.DataFrame, gains: list[str]) -> dict:
    """An arm's gain of each service metric: minus its change (plus where
    higher is better: an SLO attainment's points)."""
    row = {}
    for name in gains:
        row.update(_gain(metric, name, 1.0 if services.stat_of(name).higher_is_better else -1.0,
                         name))
    return row


def _point_rows(values: dict, group: pd.DataFrame, reference: str,
                gains: list[str] = ()) -> list[dict]:
    by_arm: dict[str, dict] = {}
    for arm, rows in group.groupby("arm", sort=False):
        metric = rows.set_index("metric")
        by_arm[str(arm)] = {**_arm_row(values, str(arm), metric), **_service_gains(metric, gains)}
    if reference in by_arm:   # a table that compares the reference with itself: keep one
        del by_arm[reference]
    seeds = max((r["seeds"] for r in by_arm.values() if not math.isnan(r["seeds"])),
                default=math.nan)
    reference_row = _reference_row(values, reference, seeds)
    for name in gains:
        reference_row.update(_reference_gain(name))
    rows = [reference_row, *by_arm.values()]
    for cls, _ in GAIN_CLASSES:
        _mark_pareto(rows, cls)
    for r in rows:
        r["why_not"] = _why_not(r)
        r["eligible"] = r["why_not"] == ""
    eligible = [r for r in rows if r["eligible"]]
    best = max(eligible, key=lambda r: (r["small_gain"] if math.isfinite(r["small_gain"])
                                        else -math.inf,
                                        r["large_gain"] if math.isfinite(r["large_gain"])
                                        else -math.inf, -r["slowdown"]), default=None)
    for r in rows:
        r["best"] = r is best
    return rows


def _interval(metric: pd.DataFrame, name: str, sign: float) -> tuple[float, float, float, str,
                                                                      float]:
    """(estimate, low, high, verdict, seeds) of one metric, times sign (-1: a gain)."""
    if name not in metric.index:
        return math.nan, math.nan, math.nan, "n/a", math.nan
    row = metric.loc[name]
    if isinstance(row, pd.DataFrame):   # a metric twice: the table is not one point's
        row = row.iloc[0]
    est, low, high = (_num(row.get(c)) for c in ("change", "change_low", "change_high"))
    if sign < 0:
        est, low, high = -est, -high, -low
    verdict = row.get("verdict")
    if not isinstance(verdict, str):   # a table without verdicts: judged here
        samples = _num(row.get("samples"))
        verdict = stats.judge(name, stats.Interval(
            _num(row.get("change")), _num(row.get("change_low")), _num(row.get("change_high")),
            int(samples) if math.isfinite(samples) else 0, 0))[0]
    return est, low, high, verdict, _num(row.get("seeds"))


def _arm_row(values: dict, arm: str, metric: pd.DataFrame) -> dict:
    s, s_low, s_high, s_verdict, seeds = _interval(metric, SLOWDOWN_METRIC, 1.0)
    row = {**values, "arm": arm, "is_reference": False, "seeds": seeds,
           "slowdown": s, "slowdown_low": s_low, "slowdown_high": s_high,
           "slowdown_verdict": s_verdict,
           "slowdown_decided": bool(stats.training_verdict(s_low, s_high)[1])}
    for cls, name in GAIN_CLASSES:
        row.update(_gain(metric, name, -1.0, cls))
    return row


def _gain(metric: pd.DataFrame, name: str, sign: float, prefix: str) -> dict:
    """A gain's columns (`<prefix>_gain`, its interval, verdict, significant):
    the metric's change times sign (-1: lower is better)."""
    g, g_low, g_high, g_verdict, _ = _interval(metric, name, sign)
    return {f"{prefix}_gain": g, f"{prefix}_gain_low": g_low, f"{prefix}_gain_high": g_high,
            f"{prefix}_verdict": g_verdict,
            f"{prefix}_significant": bool(math.isfinite(g_low) and g_low > 0)}


def _reference_gain(prefix: str) -> dict:
    """The reference arm's gain columns: 0 exactly."""
    return {f"{prefix}_gain": 0.0, f"{prefix}_gain_low": 0.0, f"{prefix}_gain_high": 0.0,
            f"{prefix}_verdict": REFERENCE_VERDICT, f"{prefix}_significant": False}


def _reference_row(values: dict, reference: str, seeds: float) -> dict:
    row = {**values, "arm": reference, "is_reference": True, "seeds": seeds,
           "slowdown": 0.0, "slowdown_low": 0.0, "slowdown_high": 0.0,
           "slowdown_verdict": REFERENCE_VERDICT, "slowdown_decided": True}
    for cls, _ in GAIN_CLASSES:
        row.update(_reference_gain(cls))
    return row


def _placed(r: dict, cls: str) -> bool:
    """Both estimates finite: the arm has a place in the plane (a stalled
    arm's slowdown is +inf, an arm without flows of the class has no gain)."""
    return math.isfinite(r["slowdown"]) and math.isfinite(r[f"{cls}_gain"])


def dominates(a: dict, b: dict, cls: str) -> bool:
    """a dominates b on the estimates: slowdown <= and gain >=, one strictly."""
    sa, sb, ga, gb = a["slowdown"], b["slowdown"], a[f"{cls}_gain"], b[f"{cls}_gain"]
    return sa <= sb and ga >= gb and (sa < sb or ga > gb)


def dominance_decided(a: dict, b: dict, cls: str) -> bool:
    """a dominates b by the intervals: a's whole slowdown interval at or below
    b's, and a's whole gain interval at or above b's (see the module's doc)."""
    s_a, s_b = a["slowdown_high"], b["slowdown_low"]
    g_a, g_b = a[f"{cls}_gain_low"], b[f"{cls}_gain_high"]
    return all(math.isfinite(v) for v in (s_a, s_b, g_a, g_b)) and s_a <= s_b and g_a >= g_b \
        and (s_a < s_b or g_a > g_b)


def _mark_pareto(rows: list[dict], cls: str) -> None:
    placed = [r for r in rows if _placed(r, cls)]
    for r in rows:
        if not _placed(r, cls):
            r.update({f"pareto_{cls}": False, f"dominated_by_{cls}": "",
                      f"dominance_decided_{cls}": False})
            continue
        over = [o for o in placed if o is not r and dominates(o, r, cls)]
        r.update({f"pareto_{cls}": not over,
                  f"dominated_by_{cls}": ", ".join(o["arm"] for o in over),
                  f"dominance_decided_{cls}": any(dominance_decided(o, r, cls) for o in over)})


def _pct(v: float) -> str:
    return f"{100 * v:+.1f}" if math.isfinite(v) else ("+inf" if v == math.inf else "n/a")


def interval_text(est: float, low: float, high: float) -> str:
    """"+1.2 % [-0.3, +2.7]" (a percentage change and its 95 % interval);
    "+1.2 % (no interval)" where there is none."""
    if not math.isfinite(est):
        return "stalled" if est == math.inf else "n/a"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{_pct(est)} % (no interval)"
    return f"{_pct(est)} % [{_pct(low)}, {_pct(high)}]"


def _why_not(r: dict) -> str:
    """Why an arm is not a candidate for the best arm ("" where it is)."""
    if r["is_reference"]:
        return "the reference"
    s, low, high = r["slowdown"], r["slowdown_low"], r["slowdown_high"]
    if s == math.inf:
        return "training stalled"
    if not math.isfinite(s):
        return "no slowdown measured"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"slowdown {interval_text(s, low, high)}: too few iterations for an interval"
    if high > stats.GREEN_MAX:
        limit = f"{100 * stats.GREEN_MAX:g} %"
        return (f"slowdown {interval_text(s, low, high)} above {limit}" if low > stats.GREEN_MAX
                else f"slowdown {interval_text(s, low, high)} not decided <= {limit}")
    slower = [c for c, _ in GAIN_CLASSES if math.isfinite(r[f"{c}_gain_high"])
              and r[f"{c}_gain_high"] < 0]
    if slower:
        return " and ".join(slower) + " flows significantly slower"
    if not any(r[f"{c}_significant"] for c, _ in GAIN_CLASSES):
        return "no significant background gain (" + "; ".join(
            f"{c} {interval_text(r[f'{c}_gain'], r[f'{c}_gain_low'], r[f'{c}_gain_high'])}"
            for c, _ in GAIN_CLASSES) + ")"
    return ""


def point_verdicts(table: pd.DataFrame, point_keys: list[str]) -> list[tuple[str, str]]:
    """Per point: (its name, one sentence): the best arm with its slowdown
    and gains, or that none qualifies and the arms nearest to it."""
    out = []
    if table.empty:
        return out
    frame = table.assign(_point=[_key(v) for v in table[point_keys].itertuples(index=False)]) \
        if point_keys else table.assign(_point=_key([]))
    limit = f"{100 * stats.GREEN_MAX:g} %"
    for _, group in frame.groupby("_point", sort=False):
        name = point_name({k: group.iloc[0][k] for k in point_keys})
        best = group[group["best"]]
        if len(best):
            b = best.iloc[0]
            out.append((name, f"best: {b['arm']}, slowdown "
                        f"{interval_text(b['slowdown'], b['slowdown_low'], b['slowdown_high'])}"
                        f" (decided <= {limit}), " + _gains_text(b)))
            continue
        arms = group[~group["is_reference"]]
        if arms.empty:
            out.append((name, "no arm compared with the reference"))
            continue
        out.append((name, f"none: no arm has a slowdown decided <= {limit} with a "
                    "significant background gain; " + "; ".join(
                        f"{r['arm']}: {r['why_not']}" for _, r in arms.iterrows())))
    return out


def _gain_text(metric: str, r) -> str:
    """A service's gain as text: in points for a fraction, else in %."""
    text = interval_text(r[f"{metric}_gain"], r[f"{metric}_gain_low"], r[f"{metric}_gain_high"])
    return text.replace(" %", " pp") if services.stat_of(metric).fraction else text


def _gains_text(r) -> str:
    return ", ".join(f"{c}-flow FCT gain "
                     f"{interval_text(r[f'{c}_gain'], r[f'{c}_gain_low'], r[f'{c}_gain_high'])}"
                     for c, _ in GAIN_CLASSES)


PARETO_LEGEND = ("P on the set (estimates); d dominated, decided by the intervals; "
                 "e dominated on the estimates only; - no estimate")


def pareto_marks(row) -> str:
    """An arm's Pareto marks per size class, small then large (PARETO_LEGEND)."""
    return ", ".join("P" if row[f"pareto_{c}"] else
                     ("d" if row[f"dominance_decided_{c}"] else "e")
                     if row[f"dominated_by_{c}"] else "-" for c, _ in GAIN_CLASSES)


def table_lines(table: pd.DataFrame, point_keys: list[str]) -> list[str]:
    """The table as text, a block per point: arm, slowdown, gains (% [95 %
    interval]; each service's on a line of its own), and the Pareto marks
    (P: on the set; d: dominated, decided by the intervals; e: dominated on
    the estimates only)."""
    lines: list[str] = []
    if table.empty:
        return lines
    frame = table.assign(_point=[_key(v) for v in table[point_keys].itertuples(index=False)]) \
        if point_keys else table.assign(_point=_key([]))
    verdicts = dict(point_verdicts(table, point_keys))
    gains = [c.removesuffix("_gain") for c in table.columns
             if c.endswith("_gain") and services.stat_of(c.removesuffix("_gain")) is not None]
    width = max(8, int(frame["arm"].astype(str).str.len().max()))
    for _, group in frame.groupby("_point", sort=False):
        name = point_name({k: group.iloc[0][k] for k in point_keys})
        lines.append(f"{name}")
        lines.append(f"  {'arm':<{width}}  {'slowdown':<26}{'small-flow gain':<28}"
                     f"{'large-flow gain':<28}pareto (small, large)")
        for _, r in group.iterrows():
            marks = pareto_marks(r)
            star = " *best" if r["best"] else ""
            lines.append(
                f"  {r['arm']:<{width}}  " + (
                    f"{'0 (reference)':<26}{'0':<28}{'0':<28}" if r["is_reference"] else
                    f"{interval_text(r['slowdown'], r['slowdown_low'], r['slowdown_high']):<26}"
                    f"{interval_text(r['small_gain'], r['small_gain_low'], r['small_gain_high']):<28}"
                    f"{interval_text(r['large_gain'], r['large_gain_low'], r['large_gain_high']):<28}")
                + f"{marks}{star}")
            if not r["is_reference"] and gains:
                lines.append(f"  {'':<{width}}  services: " + "; ".join(
                    f"{m} gain {_gain_text(m, r)}" for m in gains))
        lines.append(f"  {verdicts[name]}")
    lines.append(f"pareto: {PARETO_LEGEND}")
    return lines


def references_of(sweep_grid: dict, point_keys: list[str]) -> str | dict[str, str] | None:
    """The reference arm of a sweep (sweep.json): the grid's, or per point
    (grids whose points carry their own arms), keyed as frontier_table
    expects."""
    from harness.analysis.summary import point_value

    per_point = {}
    for cell in sweep_grid.get("cells", []):
        if cell.get("reference"):
            point = cell.get("point", {})
            per_point[_key([point_value(point.get(k)) for k in point_keys])] = cell["reference"]
    return per_point or sweep_grid.get("reference")


def sweep_frontier(deltas_mean: pd.DataFrame, sweep_grid: dict) -> tuple[pd.DataFrame,
                                                                          list[str]]:
    """A sweep's frontier table and its point columns, from its deltas_mean and
    its sweep.json (each point's reference arm)."""
    keys = point_keys_of(deltas_mean)
    return frontier_table(deltas_mean, keys, references_of(sweep_grid, keys)), keys


def finite_or_nan(values) -> np.ndarray:
    """As floats, +-inf as NaN (for drawing)."""
    out = np.asarray(values, dtype=float)
    return np.where(np.isfinite(out), out, np.nan)
