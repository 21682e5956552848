"""The speed section's engines table (issue 51): in one bench run, side by
side, the harness on the ns3 wheel and on a found ns-3.44 build, the native
program on both, and the native program on the build with ns-3's own
TcpTxBuffer (what an expert would write and run). Events per CPU second of
the simulation phase, on the thesis cell and the default scenario; the
repetitions interleaved, so the machine's load falls on every variant alike."""

from __future__ import annotations

import contextlib
import os
import statistics

from bench import native
from harness.engine import engines

# (label, engine: "wheel" or "build", harness or native, the TCP fast path)
VARIANTS = (
    ("harness on the wheel", "wheel", "harness", True),
    ("native main on the wheel", "wheel", "native", True),
    ("native main on the build, stock TCP", "build", "native", False),
    ("native main on the build, fast path", "build", "native", True),
    ("harness on the build", "build", "harness", True),
)


@contextlib.contextmanager
def _engine(value: str):
    """This process on `value` (DDNN_HARNESS_NS3_BUILD) while the native
    program is built against it."""
    old = os.environ.get(engines.BUILD_ENV)
    os.environ[engines.BUILD_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(engines.BUILD_ENV, None)
        else:
            os.environ[engines.BUILD_ENV] = old


def _one(r, run, setting: str, side: str, fast: bool) -> dict:
    if side == "harness":
        h = r.harness(run, env={engines.BUILD_ENV: setting})
        cpu = h.manifest["simulation_cpu_s"]
        return {"events": h.manifest["events"], "cpu_s": cpu,
                "events_per_cpu_s": h.manifest["events"] / cpu,
                "engine": h.manifest["engine"], "tcp_fastpath": h.manifest["tcp_fastpath"]["mode"],
                "other_busy_cores": h.cost.other_busy_cores}
    with _engine(setting):
        binary = native.build(stock_tcp=not fast)
    cost, proc = r.measure(native.command(binary, r.recipe(run)))
    counters = native.parse_output(proc.stdout)
    cpu = counters["sim_user_s"] + counters["sim_system_s"]
    return {"events": counters["events"], "cpu_s": cpu,
            "events_per_cpu_s": counters["events"] / cpu if cpu else None,
            "tcp_fastpath": "fast" if fast else "stock", "other_busy_cores": cost.other_busy_cores}


def engines_table(r, runs, reps: int) -> dict:
    """Each of `runs` (ScenarioRuns) on every variant, `reps` times interleaved."""
    choice = engines.chosen()
    if choice is None:
        return {"skipped": f"no ns-3 build: set {engines.BUILD_ENV}=DIR (`harness engine build "
                           "SRC` makes one) to measure the harness on it"}
    build = str(engines.find_build(choice[1], where=choice[0]).root)
    settings = {"wheel": engines.WHEEL, "build": build}
    out: dict = {"build": build, "scenarios": {}}
    for run in runs:
        rows: dict[str, list[dict]] = {label: [] for label, *_ in VARIANTS}
        for _ in range(reps):
            for label, engine, side, fast in VARIANTS:
                rows[label].append(_one(r, run, settings[engine], side, fast))
        table = {label: {"events_per_cpu_s": statistics.median(x["events_per_cpu_s"]
                                                                for x in rs),
                         "events": sorted({x["events"] for x in rs}), "runs": rs}
                 for label, rs in rows.items()}
        rate = {label: t["events_per_cpu_s"] for label, t in table.items()}
        out["scenarios"][run.label] = {
            "args": run.args(), "variants": table,
            # the targets: >= 0.9x the native main on the build, >= 1.5x the wheel
            "harness_build_vs_native_build": rate["harness on the build"]
            / rate["native main on the build, fast path"],
            "harness_build_vs_harness_wheel": rate["harness on the build"]
            / rate["harness on the wheel"],
            "harness_build_vs_expert": rate["harness on the build"]
            / rate["native main on the build, stock TCP"],
        }
    return out
