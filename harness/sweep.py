"""Operating-boundary sweeps: a grid file -> cells -> runs -> tidy tables.

A grid file (TOML) names a base scenario, fields fixed for every cell, axes
(Cartesian product) and paired arms:

    name = "quick"
    scenario = "thesis"              # a scenario name or path
    timeout = "2h"                   # wall-clock limit per cell
    [set]                            # every cell
    "run.duration" = 4.0
    [axes]                           # any scenario field; "seed" is the seed
    "training.ratio" = [4, 2]
    "background.rate" = [46, 184]
    seed = [1, 2]
    [arms]                           # every axes point runs each arm
    reference = "same"               # deltas: every other arm vs this one
    same = { "training.priority" = "same" }
    low = { "training.priority" = "low" }

Arms of one point differ only in their arm fields, so they share the
background schedule (it depends on the seed and the traffic parameters only:
common random numbers) and compare flow by flow.

A cell is identified by the digest of its resolved scenario. The sweep
directory holds the grid file, sweep.json (the cells), cells/<id>/ (complete
run directories, each renamed into place), failed/<id>.json, logs/, and the
tables summary.parquet, deltas.parquet and deltas_mean.parquet.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import signal
import sys
import threading
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from harness import metrics, outdir
from harness.config import (SWEEPS_DIR, ConfigError, ConfigTypeError, Scenario, apply_values,
                            builtin_names, parse_time, parse_toml, read_scenario_dict, read_text,
                            scenario_from_dict)

GRIDS_DIR = SWEEPS_DIR
_GRID_KEYS = ("name", "scenario", "timeout", "set", "axes", "arms")
SEED_AXIS = "seed"


class SweepError(RuntimeError):
    """A sweep directory that cannot be (re)used as asked."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C: running cells were stopped (they are unfinished, not failed) and
    the tables of the finished ones written; `report` says what finished."""

    def __init__(self, report: "SweepReport | None"):
        super().__init__()
        self.report = report


@dataclass(frozen=True)
class Grid:
    name: str
    path: Path
    text: str                                         # the grid file as given
    base: dict                                        # the base scenario, raw
    fixed: tuple[tuple[str, Any], ...]                # field -> value, every cell
    axes: tuple[tuple[str, tuple[Any, ...]], ...]     # field -> values, in file order
    arms: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]  # arm -> its fields
    reference: str | None
    timeout_s: float

    @property
    def axis_fields(self) -> list[str]:
        return [f for f, _ in self.axes]


@dataclass(frozen=True)
class Cell:
    id: str                                # digest of the resolved scenario
    arm: str | None
    point: tuple[tuple[str, Any], ...]     # axis field -> value
    scenario: Scenario | None              # None: invalid (see error)
    error: str | None = None
    predicted_iteration_change: float | None = None  # fluid model, low priority
    predicted_bytes: float = 0.0           # what it sends: a proxy for its cost

    def labels(self) -> dict[str, Any]:
        return {"cell": self.id, "arm": self.arm, **dict(self.point)}


# --------------------------------------------------------------------------
# grid files


def resolve_grid_file(name: str | Path) -> Path:
    for c in (Path(name), GRIDS_DIR / name, GRIDS_DIR / f"{name}.toml"):
        if c.is_file():
            return c
    raise ConfigError("grid", f"grid file not found: {name} (built-in: "
                      f"{', '.join(builtin_names(GRIDS_DIR, '.toml'))})")


def _table(data: dict, key: str, example: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a table ({example}), got {value!r}")
    return value


def _flatten(table: dict, where: str, prefix: str = "") -> dict[str, Any]:
    """{"training": {"ratio": [..]}} and {"training.ratio": [..]} alike -> dotted keys."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and not path.startswith("training.layer_classes"):
            out.update(_flatten(value, where, f"{path}."))
        else:
            out[path] = value
    return out


def _check_field(base: dict, field: str, value: Any, where: str) -> None:
    """Unknown fields and values of the wrong kind are grid errors, found before
    anything runs (a value that is only out of range fails its own cell)."""
    try:
        scenario_from_dict(apply_values(base, [(field.split("."), value)]))
    except ConfigTypeError as e:
        raise ConfigError(where, f"{value!r} is the wrong kind of value for {field}: {e}") \
            from None
    except ConfigError as e:
        if "unknown key" in str(e):
            raise ConfigError(where, f"unknown scenario field {field!r}: {e}") from None


def load_grid(path: str | Path) -> Grid:
    path = resolve_grid_file(path)
    text = read_text(path, "grid")
    data = parse_toml(text, path, "grid")
    for key in data:
        if key not in _GRID_KEYS:
            raise ConfigError(key, f"unknown grid key; allowed: {', '.join(_GRID_KEYS)}")
    if "scenario" not in data:
        raise ConfigError("scenario", "a grid names its base scenario (scenario = \"...\")")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("name", f"expected a non-empty string, got {name!r}")
    base = read_scenario_dict(data["scenario"])
    fixed = _flatten(_table(data, "set", '"run.duration" = 2.0, ...'), "set")
    for field, value in fixed.items():
        _check_field(base, field, value, f"set.{field}")
    base = apply_values(base, [(f.split("."), v) for f, v in fixed.items()])

    axes = []
    for field, values in _flatten(_table(data, "axes", '"training.ratio" = [16, 8], ...'),
                                  "axes").items():
        where = f"axes.{field}"
        if not isinstance(values, list) or not values:
            raise ConfigError(where, f"an axis is a non-empty list of values, got {values!r}")
        if len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            raise ConfigError(where, f"lists a value twice: {values!r}")
        for v in values:
            _check_field(base, field, v, where)
        axes.append((field, tuple(values)))

    arms_raw = dict(_table(data, "arms", 'reference = "same", same = { "training.priority" = '
                           '"same" }, ...'))
    reference = arms_raw.pop("reference", None)
    if reference is not None and not isinstance(reference, str):
        raise ConfigError("arms.reference", f"expected an arm's name, got {reference!r}")
    arms = []
    for arm, fields in arms_raw.items():
        if not isinstance(fields, dict) or not fields:
            raise ConfigError(f"arms.{arm}", "an arm is a table of scenario fields, e.g. "
                              '{ "training.priority" = "low" }')
        flat = _flatten(fields, f"arms.{arm}")
        for field, value in flat.items():
            _check_field(base, field, value, f"arms.{arm}.{field}")
            if field in dict(axes):
                raise ConfigError(f"arms.{arm}.{field}", "is also an axis")
        arms.append((arm, tuple(flat.items())))
    if reference is not None and reference not in dict(arms):
        raise ConfigError("arms.reference", f"{reference!r} is not an arm; arms: "
                          f"{', '.join(a for a, _ in arms)}")
    if reference is None and len(arms) > 1:
        reference = arms[0][0]
    timeout = parse_time(data.get("timeout", "6h"), "timeout")
    return Grid(name, path.resolve(), text, base, tuple(fixed.items()), tuple(axes),
                tuple(arms), reference, timeout)


def expand(grid: Grid) -> list[Cell]:
    """Every (axes point, arm) of the grid, validated as a scenario. A cell whose
    scenario is invalid is kept, with its error, so the sweep records it failed."""
    from harness.run import plan

    fields = grid.axis_fields
    arms = grid.arms or ((None, ()),)
    cells: list[Cell] = []
    seen: dict[str, Cell] = {}
    for values in itertools.product(*(v for _, v in grid.axes)):
        point = tuple(zip(fields, values))
        for arm, arm_fields in arms:
            raw = apply_values(grid.base, [(f.split("."), v) for f, v in (*point, *arm_fields)])
            try:
                scenario = scenario_from_dict(raw)
                p = plan(scenario)  # every check a run makes before ns-3, now
                cell = Cell(scenario.digest(), arm, point, scenario,
                            predicted_iteration_change=predicted_change(p),
                            predicted_bytes=predicted_bytes(p))
            except Exception as e:  # noqa: BLE001 - one cell's problem fails that cell only
                message = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
                blob = json.dumps(raw, sort_keys=True, default=str).encode()
                cell = Cell("x" + hashlib.sha256(blob).hexdigest()[:15], arm, point, None,
                            message)
            if cell.id in seen:
                raise ConfigError("grid", f"cells {seen[cell.id].labels()} and "
                                  f"{cell.labels()} are the same scenario")
            seen[cell.id] = cell
            cells.append(cell)
    return cells


# --------------------------------------------------------------------------
# the sweep directory


def default_dir(grid: Grid) -> Path:
    """results/sweeps/<name> under $DDNN_HARNESS_RESULTS or the current directory."""
    return outdir.default_sweep_dir(grid.name)


write_atomic = outdir.write_file  # every file of the sweep directory: temporary name, rename


def _cells_record(grid: Grid, cells: list[Cell]) -> dict:
    return {"grid": grid.name, "grid_file": str(grid.path),
            "axes": grid.axis_fields, "arms": [a for a, _ in grid.arms],
            "reference": grid.reference,
            "cells": [{"id": c.id, "arm": c.arm, "point": dict(c.point)} for c in cells]}


def check_dir(out: Path, cells: list[Cell], resume: bool) -> None:
    """SweepError unless `out` is new or empty, or holds this grid's sweep and
    `resume` is set (same cells, by resolved-config digest)."""
    stored = out / "sweep.json"
    if stored.exists():
        if not resume:
            raise SweepError(f"{out} already holds a sweep: --resume to continue it, or "
                             "-o another directory")
        try:
            old_ids = {c["id"] for c in json.loads(stored.read_text())["cells"]}
        except (ValueError, KeyError, TypeError, OSError) as e:
            raise SweepError(f"{stored} cannot be read ({e}); start the sweep in a new "
                             "directory") from None
        new_ids = {c.id for c in cells}
        if old_ids != new_ids:
            raise SweepError(
                f"the grid changed since {out} was started: {len(new_ids - old_ids)} new and "
                f"{len(old_ids - new_ids)} missing cells (by resolved-config digest); "
                "start it in a new directory")
    elif out.exists() and any(out.iterdir()):
        raise SweepError(f"{out} exists and is not a sweep directory")


def prepare_dir(out: Path, grid: Grid, cells: list[Cell], resume: bool) -> None:
    """Create a new sweep directory, or check that `--resume` continues the
    same grid (check_dir), and clear what killed writers left behind."""
    check_dir(out, cells, resume)
    stored = out / "sweep.json"
    for sub in ("cells", "failed", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    # what writers killed mid-write left: cell directories, replaced cell
    # directories, failure records, tables
    for directory in (out, out / "cells", out / "failed"):
        outdir.remove_leftovers(directory)
    if not stored.exists():
        write_atomic(out / "grid.toml", grid.text)
        write_atomic(stored, json.dumps(_cells_record(grid, cells), indent=2, default=str) + "\n")


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / "cells" / cell.id


def is_done(out: Path, cell: Cell) -> bool:
    return (cell_dir(out, cell) / "summary.json").is_file()


def is_failed(out: Path, cell: Cell) -> bool:
    return (out / "failed" / f"{cell.id}.json").is_file()


def record_failure(out: Path, cell: Cell, error: str, detail: str | None = None) -> None:
    """failed/<id>.json: the error's own message (one line, what the summary
    shows) and, if any, the detail behind it (a traceback, ns-3's last output)."""
    record = {**cell.labels(), "error": error}
    if detail:
        record["detail"] = detail
    write_atomic(out / "failed" / f"{cell.id}.json",
                 json.dumps(record, indent=2, default=str) + "\n")


def clear_failure(out: Path, cell: Cell) -> None:
    (out / "failed" / f"{cell.id}.json").unlink(missing_ok=True)


def cell_json(cell: Cell) -> dict:
    return {**cell.labels(), "point": dict(cell.point)}


# --------------------------------------------------------------------------
# aggregation (tables only)

TIMING_COLUMNS = ("wall_s", "startup_s", "events_per_s", "sim_s_per_wall_s", "peak_rss_mib")


def cell_row(cell: Cell, run_dir: Path | None, error: str | None) -> dict[str, Any]:
    """One tidy summary row: the cell's labels, status and metrics. status:
    ok (run_dir), failed (error) or unfinished (neither: not run yet, or
    stopped by Ctrl-C; --resume runs it)."""
    status = "failed" if error else "ok" if run_dir is not None else "unfinished"
    row: dict[str, Any] = {**cell.labels(), "status": status, "error": error}
    if run_dir is None or error:
        return row
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    config = json.loads((run_dir / "config.json").read_text())
    row.update(metrics.flat_summary(summary))
    row.update(offered_load=config["background"]["offered_load"],
               compute_ms=config["training"]["compute_ms"],
               events=manifest["events"], wall_s=manifest.get("run_wall_s"),
               startup_s=manifest.get("startup_s"), peak_rss_mib=manifest.get("peak_rss_mib"),
               events_per_s=manifest.get("events_per_s"),
               sim_s_per_wall_s=manifest.get("sim_s_per_wall_s"))
    return row


def predicted_bytes(p) -> float:
    """Payload bytes a planned cell will send: its background flows, and its
    training job's iterations at max(compute, communication at line rate)
    each. The simulation cost grows with the bytes (README, "How long will my
    sweep take"), so a sweep starts the cells with the most bytes first, to
    end less often on one long cell running alone. A proxy only: ns-3's TCP
    send buffer costs more per segment as the congestion window grows, so
    cells of equal bytes can differ several-fold in wall time."""
    total = float(p.flows["size"].sum()) if len(p.flows) else 0.0
    tr = p.scenario.training
    if tr.enabled:
        n, model = len(p.training_hosts), p.profile.model_bytes
        # ring: each worker sends 2(N-1)/N of the model; ps: pushes and pulls it
        per_iteration = 2 * (n - 1) * model if tr.architecture == "ring" else 2 * n * model
        iteration_ms = max(p.profile.compute_ms, p.training_network_ms)
        total += per_iteration * p.scenario.run.duration * 1e3 / iteration_ms
    return total


# Calibrated on the `quick` preset (README, "How long will my sweep take"):
# 174 M events for 29.7 GB of predicted bytes, and one core simulates 60-130
# thousand events per second (less under heavy retransmission).
EVENTS_PER_MB = 6_000
EVENTS_PER_CORE_S = (130_000, 60_000)   # fast, slow
SWEEP_START_S = 3.0  # loading ns-3 and warming up, once per sweep (local executor)


@dataclass(frozen=True)
class Cost:
    """A rough cost from the bytes a run sends (predicted_bytes)."""
    bytes: float

    @property
    def events(self) -> float:
        return self.bytes / 1e6 * EVENTS_PER_MB

    @property
    def core_s(self) -> tuple[float, float]:
        return tuple(self.events / rate for rate in EVENTS_PER_CORE_S)

    def describe(self, jobs: int = 1) -> str:
        low, high = (t / jobs for t in self.core_s)
        on = "" if jobs == 1 else f" on {jobs} cores"
        return (f"~{self.bytes / 1e6:,.0f} MB to send, ~{self.events / 1e6:,.1f} M events, "
                f"~{_duration(low)} to {_duration(high)}{on}")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def predicted_change(p) -> float | None:
    """The fluid model's iteration-time change for training at low priority
    under a planned cell's background load (analytic.leftover_rate_slowdown)."""
    from harness import analytic, schedulers

    sc = p.scenario
    if not (sc.training.enabled and sc.background.enabled):
        return None
    load = min(p.background_load, 0.99)
    tr = sc.training
    if tr.architecture == "ps":  # the PS model is the fifo policy's
        return analytic.leftover_rate_slowdown(
            p.profile, len(p.training_hosts), p.training_link_bps, load,
            model=analytic.simulate_ps, tensor_shards=p.tensor_shards,
            colocated=tuple(h in p.training_hosts for h in p.server_hosts),
            barrier=tr.barrier)
    queue, partition = schedulers.ring_schedule(tr.policy, tr.scheduler_params)
    return analytic.leftover_rate_slowdown(
        p.profile, len(p.training_hosts), p.training_link_bps, load, queue=queue,
        barrier=tr.barrier, fusion_buffer=p.fusion_buffer, partition_bytes=partition)


def aggregate(out: Path, grid: Grid, cells: list[Cell]) -> dict[str, pd.DataFrame]:
    """summary.parquet (one row per cell), deltas.parquet (per seed, each arm vs
    the reference) and deltas_mean.parquet (mean and 95 % CI over seeds)."""
    rows = []
    for cell in cells:
        failed = out / "failed" / f"{cell.id}.json"
        if is_done(out, cell):
            rows.append(cell_row(cell, cell_dir(out, cell), None))
        elif failed.is_file():
            rows.append(cell_row(cell, None, json.loads(failed.read_text())["error"]))
        else:
            rows.append(cell_row(cell, None, None))
        rows[-1]["predicted_iteration_change"] = cell.predicted_iteration_change
    summary = pd.DataFrame(rows)
    tables = {"summary": summary}
    if grid.reference is not None:
        keys = grid.axis_fields
        deltas = metrics.paired_deltas(summary[summary["status"] == "ok"], keys, "arm",
                                       grid.reference, metrics.DELTA_METRICS)
        tables["deltas"] = deltas
        tables["deltas_mean"] = metrics.delta_means(
            deltas, [k for k in keys if k != SEED_AXIS], "arm")
    for name, df in tables.items():
        write_atomic(out / f"{name}.parquet", df.to_parquet(index=False))
    return tables


# --------------------------------------------------------------------------
# running


@contextlib.contextmanager
def _uninterruptible():
    """A second Ctrl-C while the tables of an interrupted sweep are written
    would leave them unwritten: ignore it for that second (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass(frozen=True)
class SweepReport:
    out: Path
    cells: int
    ran: int               # cells run to an end now (finished or failed)
    done_before: int       # finished in an earlier run of the directory (--resume)
    failed_before: int     # failed earlier and not retried (no --retry-failed)
    invalid: int           # invalid scenarios: recorded failed without running
    failed: list[str]      # ids of cells failed now or before
    wall_s: float
    tables: dict
    unfinished: int = 0    # left to run (an interrupted sweep)
    failed_now: int = 0    # of `ran`


def run_sweep(grid: Grid, out: Path, jobs: int = 1, executor: str = "local",
              scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
              progress: bool | None = None, cells: list[Cell] | None = None) -> SweepReport:
    """Run every cell not yet done, record failures, aggregate the tables.
    cells: expand(grid), when the caller has it already.
    Ctrl-C (KeyboardInterrupt) stops the running cells, which stay unfinished
    (not failed: --resume runs them), writes the tables of what finished and
    raises SweepInterrupted carrying the report."""
    import time

    from tqdm import tqdm

    from harness import executors

    if executor not in ("local", "dask"):
        raise ConfigError("--executor", f"unknown executor {executor!r}; allowed: local, dask")
    started = time.monotonic()
    cells = expand(grid) if cells is None else cells
    prepare_dir(out, grid, cells, resume)
    todo: list[Cell] = []
    done_before = failed_before = invalid = 0
    for cell in cells:
        if is_done(out, cell):
            clear_failure(out, cell)
            done_before += 1
        elif cell.scenario is None:
            record_failure(out, cell, cell.error)   # invalid scenario: fails without running
            invalid += 1
        elif is_failed(out, cell) and not retry_failed:
            failed_before += 1
        else:
            todo.append(cell)
    todo.sort(key=lambda c: c.predicted_bytes, reverse=True)  # longest first (stable)
    tasks = [executors.Task(c, cell_dir(out, c), out / "logs" / f"{c.id}.stderr",
                            grid.timeout_s) for c in todo]
    bar = tqdm(total=len(tasks), unit="cell", disable=None if progress is None else not progress,
               desc=f"sweep {grid.name}", file=sys.stderr)
    counts = {"ran": 0, "failed": 0}

    def done(outcome: executors.Outcome) -> None:
        if outcome.error is None:
            clear_failure(out, outcome.cell)
        else:
            counts["failed"] += 1
            record_failure(out, outcome.cell, outcome.error, outcome.detail)
        counts["ran"] += 1
        bar.set_postfix_str(f"{counts['failed']} failed", refresh=False)
        bar.update(1)

    interrupted = False
    try:
        if tasks and executor == "local":
            executors.run_local(tasks, jobs, done)
        elif tasks:
            executors.run_dask(tasks, jobs, scheduler, done)
    except KeyboardInterrupt:
        interrupted = True  # the executor has stopped its cells; record what finished
    finally:
        bar.close()
    with _uninterruptible() if interrupted else contextlib.nullcontext():
        tables = aggregate(out, grid, cells)
    failed = [c.id for c in cells if is_failed(out, c)]
    report = SweepReport(out, len(cells), counts["ran"], done_before, failed_before, invalid,
                         failed, time.monotonic() - started, tables,
                         unfinished=len(tasks) - counts["ran"], failed_now=counts["failed"])
    if interrupted:
        raise SweepInterrupted(report)
    return report


class _CallableModule(types.ModuleType):
    """`harness.sweep(...)` is the API function harness.api.sweep: after this
    module is imported, `harness.sweep` is the module (Python sets a package's
    attribute to its submodule), so the module itself is made callable."""

    def __call__(self, *args, **kwargs):
        from harness.api import sweep
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
