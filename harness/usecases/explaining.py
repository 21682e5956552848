"""`harness explain RUN|SWEEP`: what delayed the traffic, in words.

A run: its background flows' TCP delays per size class and each service's
client-side timeouts (harness.analysis.causes). A sweep: per point and
compared arm, training's verdict (deltas_mean) and what the background's
FCT change is made of, flow pairs of both arms (causes.parquet:
harness.analysis.cause_changes). Reads tables only; no ns-3.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.analysis import causes, cause_changes, comparing, stats
from harness.analysis.metrics import (DROP_REASONS, JOB_TCP_DELAYS, PLACES, TCP_DELAYS,
                                      job_tcp_delays_line, losses)
from harness.analysis.tables import (SEED_AXIS, load_sweep, optional_table, read_run,
                                     rows_at)
from harness.config.errors import ConfigError


def run_lines(directory: Path) -> list[str]:
    """A run's lines: each size class's TCP delays, then each service's."""
    run = read_run(directory, ("flows", "services", "queues", "transfers"))
    flows = run.flows
    if flows is None or not all(c in flows for c in TCP_DELAYS):
        raise ConfigError("RUN", f"{directory} has no TCP delay counts in its flows table "
                          f"({', '.join(TCP_DELAYS)}): it was run before they were counted; "
                          "run it again")
    out = causes.lines(causes.flow_delays(flows))
    training = run.summary.get("training") or {}
    parts = causes.iteration_line(training)
    if parts:
        out.append(parts)
    slowest = causes.slowest_transfer(run.transfers, tuple(run.summary.get("window_s") or
                                                           (0.0, float("inf"))))
    if training and slowest:
        out.append(causes.transfer_line(slowest))
    if training.get("tcp_delays"):
        out.append(job_tcp_delays_line(training["tcp_delays"]))
    services = run.services
    if services is not None and all(c in services for c in causes.CLIENT_DELAYS):
        out += causes.service_lines(causes.service_delays(services))
    if run.queues is not None:
        out += causes.starvation_lines(causes.band_starvation(run.queues),
                                       float(run.summary.get("simulated_s") or 0.0))
        out += causes.loss_lines(losses(run.queues))
    return out


def parse_points(points: tuple[str, ...]) -> dict[str, str]:
    """--point FIELD=VALUE (repeatable) as {field: value}; a malformed one
    is a ConfigError naming it."""
    chosen = {}
    for item in points:
        field, sep, value = item.partition("=")
        if not sep or not field.strip() or not value.strip():
            raise ConfigError("--point", f"{item!r} is not FIELD=VALUE (training.ratio=2, say)")
        chosen[field.strip()] = value.strip()
    return chosen


def _matches(values: pd.Series, wanted: str) -> pd.Series:
    """Which of an axis's values are `wanted` as typed: a number equal as a
    number (2 is 2.0), anything else equal as text."""
    try:
        number = float(wanted)
    except ValueError:
        return values.astype(str) == wanted
    return pd.to_numeric(values, errors="coerce") == number


def _select(table: pd.DataFrame, chosen: dict[str, str], axes: list[str]) -> pd.DataFrame:
    for field, value in chosen.items():
        if field not in axes:
            raise ConfigError("--point", f"unknown axis {field!r}; the sweep's axes: "
                              f"{', '.join(axes) or 'none'}")
        hit = _matches(table[field], value)
        if not hit.any():
            raise ConfigError("--point", f"{field}={value} is not a point of the sweep; its "
                              f"values: {', '.join(map(str, sorted(table[field].unique())))}")
        table = table[hit]
    return table


def _unset(value) -> bool:
    """A point field a labelled point does not set (NaN or None in the tables)."""
    return value is None or (isinstance(value, float) and value != value)


def _point_words(row: dict, axes: list[str]) -> str:
    """The point in words: each axis's value ("ratio = 2"), leaving out the
    fields a labelled point does not set."""
    return ", ".join(f"{a.rsplit('.', 1)[-1]} = {row[a]:g}" if isinstance(row[a], float)
                     else f"{a.rsplit('.', 1)[-1]} = {row[a]}" for a in axes
                     if not _unset(row[a])) or "the point"


def _at(table: pd.DataFrame, point: dict, axes: list[str]) -> pd.DataFrame:
    """The rows of `table` at the point's value of each axis (a field the
    point leaves unset matches rows that leave it unset)."""
    return rows_at(table, axes, tuple(point[a] for a in axes))


def _training_line(means: pd.DataFrame | None, point: dict, axes: list[str], arm: str) -> str:
    """The point's training verdict for `arm` from deltas_mean, in words."""
    if means is None:
        return "training: no deltas_mean.parquet"
    rows = _at(means[(means["metric"] == "iteration_time") & (means["arm"] == arm)], point, axes)
    if not len(rows):
        return "training: no iteration-time change measured"
    r = rows.iloc[0]
    if r["change"] == float("inf"):
        return ("training: stalled (no iteration completed in the window where the "
                f"reference's did), {r['verdict']}")
    low, high = r["change_low"], r["change_high"]
    interval = (f" [{100 * low:+.1f}, {100 * high:+.1f}]" if pd.notna(low) and pd.notna(high)
                else f" ({stats.TOO_FEW})")
    return (f"training: iteration time {100 * r['change']:+.1f} %{interval}, "
            f"{r['verdict']}{'' if r['decided'] else ' (undecided)'}")


def _job_tcp_line(summary: pd.DataFrame, point: dict, axes: list[str], arm: str,
                  reference: str) -> str | None:
    """The job's own connections' TCP delays in each arm, summed over the
    point's seeds (summary.parquet's training_tcp_*); None where the cells
    have none (run before they were counted, or over RDMA)."""
    rows = _at(summary, point, axes)
    columns = [f"training_tcp_{k}" for k in JOB_TCP_DELAYS]
    if not all(c in rows for c in columns):
        return None
    sums = {}
    for side in (reference, arm):
        part = rows.loc[rows["arm"] == side, columns]
        if not len(part) or part.isna().all().all():
            return None
        sums[side] = part.sum()
    ref, x = sums[reference], sums[arm]
    return (f"training's connections: timeouts {int(ref.iloc[0]):,} -> {int(x.iloc[0]):,}, "
            f"{ref.iloc[1] * 1e3:,.1f} -> {x.iloc[1] * 1e3:,.1f} ms without progress before "
            f"them, fast retransmits {int(ref.iloc[2]):,} -> {int(x.iloc[2]):,}")


def _starvation_line(summary: pd.DataFrame, point: dict, axes: list[str], arm: str,
                     reference: str) -> str | None:
    """Each band's starvation in each arm, summed over the point's seeds
    (summary.parquet's starved_s_band_<n>); None without those columns."""
    rows = _at(summary, point, axes)
    columns = sorted((c for c in rows if c.startswith("starved_s_band_")),
                     key=lambda c: int(c.rsplit("_", 1)[1]))
    if not columns:
        return None
    ref = rows.loc[rows["arm"] == reference, columns].sum()
    x = rows.loc[rows["arm"] == arm, columns].sum()
    parts = [f"band {c.rsplit('_', 1)[1]} {ref[c] * 1e3:,.1f} -> {x[c] * 1e3:,.1f} ms"
             for c in columns if ref[c] > 0 or x[c] > 0]
    return ("bands starved (other bands sent while they held packets, summed over "
            "egresses): " + "; ".join(parts)) if parts else None


def _loss_line(summary: pd.DataFrame, point: dict, axes: list[str], arm: str,
               reference: str) -> str | None:
    """Each band's drops by place in each arm, summed over the point's seeds
    (summary.parquet's dropped_band_<n>_<place>), with the arm's reasons;
    None without those columns or drops."""
    rows = _at(summary, point, axes)
    found = sorted({tuple(c.split("_")[2:4]) for c in rows if c.startswith("dropped_band_")},
                   key=lambda bp: (int(bp[0]), list(PLACES).index(bp[1])))
    parts = []
    for band, place in found:
        def total(side: str, prefix: str = "") -> float:
            column = f"{prefix}dropped_band_{band}_{place}"
            return float(rows.loc[rows["arm"] == side, column].fillna(0).sum()) \
                if column in rows else 0.0
        ref, x = total(reference), total(arm)
        if not (ref or x):
            continue
        why = ", ".join(f"{causes.REASON_WORDS[r]} {total(reference, f'{r}_'):,.0f} -> "
                        f"{total(arm, f'{r}_'):,.0f}" for r in DROP_REASONS
                        if total(reference, f"{r}_") or total(arm, f"{r}_"))
        parts.append(f"band {band} at the {PLACES[place]} {ref:,.0f} -> {x:,.0f}"
                     f"{f' ({why})' if why else ''}")
    return ("packets lost (summed over seeds): " + "; ".join(parts)) if parts else None


def _seeds(means: pd.DataFrame | None, point: dict, axes: list[str]) -> str:
    """How many seeds the point's pairs pool."""
    if means is None or "seeds" not in means:
        return "seeds pooled"
    rows = _at(means[means["arm"] == point["arm"]], point, axes)
    n = int(rows["seeds"].max()) if len(rows) else 0
    return f"{n} seed{'s' if n != 1 else ''} pooled"


#: a sweep's attribution tables (harness.sweeps.aggregate.ATTRIBUTIONS' names)
ATTRIBUTION_TABLES = ("causes", "training_causes", "service_causes")


def sweep_lines(directory: Path, points: tuple[str, ...] = ()) -> list[str]:
    """A sweep's lines: per point (or those --point chooses) and compared
    arm, a head line, training's verdict and what its change is made of,
    the job's connections, the bands' starvation and losses, each size
    class's attribution and each service's."""
    chosen = parse_points(points)
    tables = {name: optional_table(directory, name) for name in ATTRIBUTION_TABLES}
    tables = {name: t for name, t in tables.items() if t is not None and len(t)}
    if not tables:
        raise ConfigError("SWEEP", f"{directory} has no causes.parquet (nor training_causes, "
                          "service_causes): its tables were written before causes were "
                          "attributed (or its cells ran before TCP delays were counted); "
                          f"`harness sweep GRID -o {directory} --resume` rewrites its tables")
    sweep = load_sweep(directory)
    axes = [a for a in sweep.grid.get("axes", []) if a != SEED_AXIS
            and all(a in t for t in tables.values())]
    tables = {name: _select(t, chosen, axes) for name, t in tables.items()}
    keys = [*axes, "arm"]
    heads = pd.concat([t[[*keys, "reference"]] for t in tables.values()],
                      ignore_index=True).drop_duplicates(keys)
    out = []
    for first in heads.to_dict("records"):
        arm, reference = first["arm"], first["reference"]

        def at(name: str) -> pd.DataFrame:
            table = tables.get(name)
            return (pd.DataFrame() if table is None
                    else _at(table[table["arm"] == arm], first, axes))
        out.append(f"{_point_words(first, axes)}, {arm} vs {reference} "
                   f"({_seeds(sweep.deltas_mean, first, axes)}):")
        out.append("  " + _training_line(sweep.deltas_mean, first, axes, arm))
        parts = at("training_causes")
        if len(parts):
            out.append("    " + cause_changes.iteration_cause_line(parts.iloc[0].to_dict()))
        for line in (_job_tcp_line(sweep.summary, first, axes, arm, reference),
                     _starvation_line(sweep.summary, first, axes, arm, reference),
                     _loss_line(sweep.summary, first, axes, arm, reference)):
            if line:
                out.append("  " + line)
        out += ["  " + line for line in cause_changes.cause_lines(at("causes"), reference)]
        out += ["  " + line for line in
                cause_changes.service_cause_lines(at("service_causes"), reference)]
    return out


def explain_lines(directory: Path, points: tuple[str, ...] = ()) -> list[str]:
    """explain's lines for a run or a sweep directory (--point: a sweep's only)."""
    kind = comparing.directory_kind(str(directory), "RUN|SWEEP")
    if kind == comparing.RUN:
        if points:
            raise ConfigError("--point", f"{directory} is one run: --point chooses points "
                              "of a sweep")
        return run_lines(directory)
    return sweep_lines(directory, points)
