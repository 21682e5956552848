"""The bench's `references` section: every check of the reference suite
(harness.usecases.references, workloads/references/references.toml) run on
the harness's own scenarios in this process, one row per compared quantity,
and their table."""

from __future__ import annotations

import resource
import time

from bench.config import BenchConfig


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def section(_runner, cfg: BenchConfig) -> dict:
    """{"rows": [...], "cpu_s", "wall_s", "within": counts by verdict}; --quick
    or --cheap runs each check's cheap points only."""
    from harness.usecases import references

    cheap = cfg.quick or cfg.references_cheap
    started, cpu = time.time(), _cpu_s()
    rows = []
    for name in cfg.references or list(references.checks()):
        t0, c0 = time.time(), _cpu_s()
        got = references.run_check(name, cheap=cheap)
        for row in got:
            row.update(check_wall_s=time.time() - t0, check_cpu_s=_cpu_s() - c0)
        rows += got
    verdicts = [r["within"] for r in rows if r["tolerance"] is not None]
    return {"rows": rows, "cheap": cheap, "cpu_s": _cpu_s() - cpu,
            "wall_s": time.time() - started,
            "within": {"yes": verdicts.count(True), "no": verdicts.count(False),
                       "undecided": verdicts.count(None)}}


def _g(value: float) -> str:
    return f"{value:.4g}"


def table(rows: list[dict]) -> list[str]:
    """One line per row: check, point, quantity, expected, measured [interval], within."""
    lines = [f"  {'check':<19} {'point':<20} {'quantity':<34} {'expected':>10} "
             f"{'measured':>10} {'interval':>23}  within"]
    for r in rows:
        lo, hi = r["interval"]
        verdict = {True: "yes", False: "NO", None: "-"}[r["within"]]
        lines.append(f"  {r['check']:<19} {r['point']:<20} {r['quantity'][:34]:<34} "
                     f"{_g(r['expected']):>10} {_g(r['measured']):>10} "
                     f"{'[' + _g(lo) + ', ' + _g(hi) + ']':>23}  {verdict}")
    return lines
