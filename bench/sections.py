"""The bench's sections: each runs real processes and returns a JSON-able dict.

Runs: `harness run` goes through bench.harness_driver (the same CLI, plus a
counter around the simulation phase); the native program is bench/native.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bench import compare, native, procs
from bench import engines as bench_engines
from bench.reference_suite import section as references  # noqa: F401 (a section, by name)
from bench.config import BenchConfig, ScenarioRun, scaling_run, sweep_grid
from harness.engine.memory import environment as huge_pages_environment

REPO_DIR = Path(__file__).resolve().parent.parent


def spread(values: list[float]) -> dict:
    """median, min, max and n of a list of numbers."""
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "median": None, "min": None, "max": None}
    return {"n": len(values), "median": statistics.median(values),
            "min": min(values), "max": max(values)}


@dataclass
class HarnessRun:
    run_dir: Path
    cost: procs.ProcessCost
    phase: dict          # bench.counters.PhaseCost of the Stop/Run phase, + events
    manifest: dict
    summary: dict


@dataclass
class NativeRun:
    cost: procs.ProcessCost
    counters: dict       # what the program printed
    tables: Path


class Runner:
    """Runs harness and native processes inside one work directory."""

    def __init__(self, work: Path):
        self.work = work
        self._cached: dict[tuple, HarnessRun] = {}
        self._count = 0
        self.costs: list[procs.ProcessCost] = []   # every process measured

    def measure(self, cmd: list[str], env: dict[str, str] | None = None):
        """procs.run with the bench's environment, from the repository root."""
        cost, proc = procs.run(cmd, env=self._env(env), cwd=REPO_DIR)
        self.costs.append(cost)
        return cost, proc

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        # the heap on huge pages, as the `harness` command has it (and the
        # native program likewise, so the two compare on the same footing)
        env = huge_pages_environment(os.environ | (extra or {}))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_DIR),
                                                          env.get("PYTHONPATH")]))
        return env | (extra or {})

    def fresh_dir(self, name: str) -> Path:
        """A new, numbered path in the work directory."""
        self._count += 1
        return self.work / f"{self._count:03d}-{name}"

    def harness(self, run: ScenarioRun, env: dict[str, str] | None = None,
                reuse: bool = False) -> HarnessRun:
        """`harness run` of `run`; reuse: return an earlier identical run if any."""
        key = (run, tuple(sorted((env or {}).items())))
        if reuse and key in self._cached:
            return self._cached[key]
        base = self.fresh_dir(f"harness-{run.label}")
        base.mkdir(parents=True)
        phase_file, run_dir = base / "phase.json", base / "run"
        # --allow-short: the bench times the engine on windows too short to
        # measure an iteration, on purpose
        cmd = [sys.executable, "-m", "bench.harness_driver", str(phase_file), "run",
               *run.args(), "-o", str(run_dir), "--no-progress", "--allow-short"]
        cost, _ = self.measure(cmd, env)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        summary = json.loads((run_dir / "summary.json").read_text())
        phase = {**json.loads(phase_file.read_text()), "events": manifest["events"],
                 "simulated_s": summary["simulated_s"]}
        result = HarnessRun(run_dir, cost, phase, manifest, summary)
        self._cached[key] = result
        return result

    def recipe(self, run: ScenarioRun) -> Path:
        from harness.engine import recipe
        from harness.config.scenario import load_scenario
        from harness.engine.planning import plan

        path = self.work / "recipes" / f"{run.label}.recipe"
        if not path.exists():
            recipe.write(plan(load_scenario(run.scenario, list(run.overrides))), path)
        return path

    def native(self, run: ScenarioRun) -> NativeRun:
        binary, recipe = native.build(), self.recipe(run)
        tables = self.fresh_dir(f"native-{run.label}")
        tables.mkdir(parents=True)
        cost, proc = self.measure(native.command(binary, recipe, tables))
        return NativeRun(cost, native.parse_output(proc.stdout), tables)


# --------------------------------------------------------------------------
# 1. overhead vs native


def _overhead_pct(harness: float, native_: float) -> float | None:
    return 100.0 * (harness / native_ - 1.0) if native_ > 0 and harness >= 0 else None


def _pair(r: Runner, run: ScenarioRun, harness_first: bool) -> tuple[dict, dict]:
    """One A/B pair: the costs of both runs, and whether they agree."""
    runs: dict = {}
    for side in (("harness", "native") if harness_first else ("native", "harness")):
        runs[side] = r.harness(run) if side == "harness" else r.native(run)
    h, n = runs["harness"], runs["native"]
    native_phase = {"wall_s": n.counters["sim_wall_s"], "user_s": n.counters["sim_user_s"],
                    "system_s": n.counters["sim_system_s"],
                    "instructions": n.counters["sim_instructions"], "events": n.counters["events"]}
    pair = {"harness": {"process": h.cost.to_dict(), "phase": h.phase},
            "native": {"process": n.cost.to_dict(), "phase": native_phase}}
    return pair, compare.agreement(h.run_dir, n.counters, n.tables)


def _summarize(pairs: list[dict], measure: str) -> dict:
    """Overhead in % (harness / native - 1) per pair, for the whole process and
    the simulation phase, by `measure` and by wall time."""
    out: dict = {}
    for part in ("process", "phase"):
        def values(side: str, m: str) -> list[float]:
            return [p[side][part][m] for p in pairs]
        out[f"{part}_overhead_pct"] = spread(
            [_overhead_pct(h, n) for h, n in zip(values("harness", measure),
                                                 values("native", measure))])
        # under contention CPU time only grows: the minima are the least disturbed
        out[f"{part}_overhead_pct_of_minima"] = _overhead_pct(min(values("harness", measure)),
                                                              min(values("native", measure)))
        out[f"{part}_wall_overhead_pct"] = spread(
            [_overhead_pct(h, n) for h, n in zip(values("harness", "wall_s"),
                                                 values("native", "wall_s"))])
        for m in sorted({measure, "user_s"}):
            out[f"{part}_harness_{m}"] = spread(values("harness", m))
            out[f"{part}_native_{m}"] = spread(values("native", m))
        out[f"{part}_extra_user_s"] = spread(
            [h - n for h, n in zip(values("harness", "user_s"), values("native", "user_s"))])
    return out


def overhead(r: Runner, cfg: BenchConfig) -> dict:
    """The same scenario from `harness run` and from the native program, A/B
    interleaved (the order alternates), compared by user-space instructions
    when the CPU counts them, else by user CPU seconds; plus exact phase
    instruction counts under callgrind on a smaller scenario."""
    pairs, agreements = [], []
    for i in range(cfg.reps):
        pair, agree = _pair(r, cfg.overhead, harness_first=i % 2 == 0)
        pairs.append(pair)
        agreements.append(agree)
    if cfg.check is not None:
        _, agree = _pair(r, cfg.check, harness_first=True)
        agreements.append(agree | {"scenario": cfg.check.label})
    counted = all(p[s][part]["instructions"] > 0 for p in pairs
                  for s in ("harness", "native") for part in ("process", "phase"))
    measure = "instructions" if counted else "user_s"
    result = {
        "scenario": {"label": cfg.overhead.label, "args": cfg.overhead.args()},
        "measure": "user-space instructions" if counted else
                   "user CPU seconds (no hardware instruction counter on this machine)",
        "method": (
            "A/B interleaved pairs, order alternating. Whole process: the child's "
            "user CPU time (wait4) or perf stat instructions:u. Simulation phase: a "
            "marker in each program, i.e. counters read in-process right before "
            "Simulator::Stop/Run and right after (harness: execute's on_phase hook, "
            "given by bench.harness_driver; native: "
            "around Stop/Run in main.cc): getrusage user/system time and, with a PMU, "
            "a perf_event_open instructions:u counter of the thread. 'callgrind': the "
            "same markers, counted exactly by valgrind on a smaller scenario."),
        "pairs": pairs,
        "agreement": agreements,
        "agree": all(a["agree"] for a in agreements),
        **_summarize(pairs, measure),
        "other_busy_cores": spread([p[s]["process"]["other_busy_cores"]
                                    for p in pairs for s in ("harness", "native")]),
        "native_hot_spots": hot_spots(r, cfg.overhead),
    }
    result["bindings_floor"] = bindings_floor(r, cfg.reps,
                                              result["process_native_user_s"]["median"])
    timed = {"label": cfg.overhead.label,
             "native_phase_user_s": result["phase_native_user_s"]["median"]}
    result["callgrind"] = callgrind_phase(r, cfg.callgrind, timed) if cfg.callgrind else None
    return result


# What any Python program driving ns-3 through cppyy pays before its first
# event, whatever it does next: the interpreter, pandas (the harness's tables)
# and cppyy with ns-3 and our library loaded (PCH included).
FLOOR_PROGRAM = "import pandas\nfrom harness.engine import ns3\nns3.load(quiet=True)\n"


def bindings_floor(r: Runner, reps: int, native_user_s: float) -> dict:
    """User CPU of FLOOR_PROGRAM: the part of the harness's extra cost that no
    harness code can remove, in seconds and in % of the native run."""
    costs = [r.measure([sys.executable, "-c", FLOOR_PROGRAM])[0] for _ in range(reps)]
    user = spread([c.user_s for c in costs])
    return {"program": FLOOR_PROGRAM, "user_s": user,
            "pct_of_native_process": 100.0 * user["median"] / native_user_s}


def hot_spots(r: Runner, run: ScenarioRun, top: int = 8) -> list[dict] | None:
    """Where the native program spends its CPU time (perf record -e cpu-clock,
    which works without a PMU): the top symbols, in % of samples."""
    if shutil.which("perf") is None:
        return None
    data = r.work / f"perf-{run.label}.data"
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "499", "-o", str(data), "--",
           *native.command(native.build(), r.recipe(run), None)]
    r.measure(cmd)
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                             "--sort", "dso,symbol"], capture_output=True, text=True)
    out = []
    for line in report.stdout.splitlines():
        parts = line.split()
        while parts and parts[-1] == "-":   # empty columns perf adds
            parts.pop()
        if len(parts) >= 4 and parts[0].endswith("%") and parts[2] == "[.]":
            out.append({"percent": float(parts[0].rstrip("%")), "dso": parts[1],
                        "symbol": " ".join(parts[3:])})
        if len(out) == top:
            break
    return out


def _collected(log: Path) -> int:
    """The instructions callgrind counted (its log's totals)."""
    return _collected_events(log)["Ir"]


def _inclusive(profile: Path, function: str) -> int | None:
    """Inclusive instructions of `function` in a callgrind profile."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                          str(profile)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if f":{function} [" in line:
            return int(line.split()[0].replace(",", ""))
    return None


def callgrind_phase(r: Runner, run: ScenarioRun, timed: dict | None = None) -> dict | None:
    """Exact instruction counts of the simulation phase (callgrind, counting
    only between the phase markers), harness vs native: deterministic, so
    neither load nor a missing PMU blurs them. Slow, so a small scenario; the
    harness's extra work outside Simulator::Run() is a constant per run, which
    `timed` (the overhead section's native phase CPU seconds) scales to the
    timed scenario."""
    if not native.valgrind_available():
        return None
    phase: dict[str, int] = {}
    inside_run: dict[str, int | None] = {}
    events: dict[str, int] = {}
    for side in ("native", "harness"):
        base = r.fresh_dir(f"callgrind-{side}-{run.label}")
        base.mkdir(parents=True)
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                    f"--callgrind-out-file={base / 'callgrind.out'}",
                    f"--log-file={base / 'valgrind.log'}"]
        if side == "native":
            _, proc = r.measure([*valgrind, *native.command(native.build(), r.recipe(run),
                                                              base)])
            events[side] = native.parse_output(proc.stdout)["events"]
        else:
            r.measure([*valgrind, sys.executable, "-m", "bench.harness_driver",
                       str(base / "phase.json"), "run", *run.args(), "-o", str(base / "run"),
                       "--no-progress", "--allow-short"], env={"BENCH_PHASE_MARKER": str(native.build_marker())})
            events[side] = json.loads((base / "run" / "manifest.json").read_text())["events"]
        phase[side] = _collected(base / "valgrind.log")
        inside_run[side] = _inclusive(base / "callgrind.out", "ns3::Simulator::Run()")
    result = {"scenario": {"label": run.label, "args": run.args()},
              "events": events, "phase_instructions": phase,
              "simulator_run_instructions": inside_run,
              "phase_overhead_pct": _overhead_pct(phase["harness"], phase["native"]),
              "method": "valgrind --tool=callgrind --instr-atstart=no: instrumentation on "
                        "only between the phase markers (native: around Simulator::Stop/Run "
                        "in main.cc; harness: execute's on_phase hook, calling "
                        "bench/native/marker.c loaded with ctypes); Simulator::Run()'s "
                        "inclusive count from callgrind_annotate"}
    if None not in inside_run.values():
        result["simulator_run_overhead_pct"] = _overhead_pct(inside_run["harness"],
                                                             inside_run["native"])
        extra = (phase["harness"] - inside_run["harness"]) - (phase["native"] - inside_run["native"])
        result["outside_run_extra_instructions"] = extra
        if timed:
            # the native's instruction rate, from a plain run of this scenario
            rate = phase["native"] / min(r.native(run).counters["sim_user_s"] for _ in range(3))
            result["native_instructions_per_cpu_s"] = rate
            result["projected_phase_overhead_pct"] = (
                result["simulator_run_overhead_pct"]
                + 100.0 * extra / (rate * timed["native_phase_user_s"]))
            result["projected_for"] = timed["label"]
    return result


# --------------------------------------------------------------------------
# 2. start-up


def startup(r: Runner, cfg: BenchConfig) -> dict:
    """manifest startup_s (process start to the network built, i.e. to the
    first simulated event), with a warm cache and with an empty one."""
    first = r.harness(cfg.startup, reuse=True)  # the cache is warm from here on
    # --quick: that first run is the measurement (the cache was warm already,
    # unless this is a fresh machine: then it is only a smoke test)
    warm = [first] if cfg.quick else [r.harness(cfg.startup) for _ in range(cfg.reps)]
    result: dict = {
        "scenario": {"label": cfg.startup.label, "args": cfg.startup.args()},
        "warm_startup_s": spread([w.manifest["startup_s"] for w in warm]),
        "warm_process_wall_s": spread([w.cost.wall_s for w in warm]),
        "other_busy_cores": spread([w.cost.other_busy_cores for w in warm]),
    }
    if cfg.cold_start:
        with tempfile.TemporaryDirectory(prefix="bench-cold-cache-") as cache:
            cold = r.harness(cfg.startup, env={"DDNN_HARNESS_CACHE": cache})
            built = sorted(str(p.relative_to(cache)) for p in Path(cache).rglob("*")
                           if p.is_file() and p.suffix in (".so", ".pch"))
        result["cold"] = {"startup_s": cold.manifest["startup_s"], "process_wall_s": cold.cost.wall_s,
                          "user_s": cold.cost.user_s, "other_busy_cores": cold.cost.other_busy_cores,
                          "built": built}
    else:
        result["cold"] = None
    return result


# --------------------------------------------------------------------------
# 3. memory


def memory(r: Runner, cfg: BenchConfig) -> dict:
    h = r.harness(cfg.memory, reuse=True)
    return {"scenario": {"label": cfg.memory.label, "args": cfg.memory.args()},
            "manifest_peak_rss_mib": h.manifest["peak_rss_mib"],
            "time_max_rss_mib": h.cost.time_max_rss_mib,
            "wait4_max_rss_mib": h.cost.max_rss_mib}


# --------------------------------------------------------------------------
# 4. sweep scaling


def sweep(r: Runner, cfg: BenchConfig) -> dict:
    grid = r.work / "grid.toml"
    grid.write_text(sweep_grid(cfg))
    runs = {}
    for jobs, executor in ((1, "local"), (2, "local"), (2, "dask"), (2, "dask-processes")):
        name = f"{executor}-j{jobs}"
        out = r.work / "sweeps" / name
        cmd = [sys.executable, "-m", "bench.sweep_driver", str(grid), str(out), str(jobs),
               executor]
        cost, proc = r.measure(cmd)
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        runs[name] = {"jobs": jobs, "executor": executor, "cells": report["cells"],
                      "failed": report["failed"], "wall_s": report["wall_s"],
                      "cells_per_hour": report["cells"] / report["wall_s"] * 3600,
                      "cell_wall_s": spread(report["cell_wall_s"]),
                      "other_busy_cores": cost.other_busy_cores,
                      "load_1min": cost.load_1min}
        if executor != "dask-processes":   # its cell servers are stopped, never reaped
            # user + system CPU of the sweep's processes (those reaped)
            runs[name]["cpu_s"] = cost.user_s + cost.system_s
    j1 = runs["local-j1"]["cells_per_hour"]
    return {"grid": sweep_grid(cfg), "runs": runs,
            "efficiency_local_j2": runs["local-j2"]["cells_per_hour"] / (2 * j1),
            "efficiency_dask_j2": runs["dask-j2"]["cells_per_hour"] / (2 * j1),
            "efficiency_dask_processes_j2": runs["dask-processes-j2"]["cells_per_hour"] / (2 * j1)}


# --------------------------------------------------------------------------
# 5. speed


def _delivered(run_dir: Path, n_hosts: int) -> dict:
    """Payload bytes delivered (flows received + training partitions) and wire
    bytes sent by the hosts (utilization.parquet, host uplinks)."""
    flows = pd.read_parquet(run_dir / "flows.parquet")
    payload = int(flows["received_bytes"].sum())
    transfers = run_dir / "transfers.parquet"
    if transfers.is_file():
        t = pd.read_parquet(transfers)
        payload += int(t.loc[t["end_ns"] >= 0, "bytes"].sum())
    util = pd.read_parquet(run_dir / "utilization.parquet")
    wire = int(util.loc[util["from_node"] < n_hosts, "bytes"].sum())
    return {"payload_bytes": payload, "host_uplink_wire_bytes": wire}


def _speed_row(h: HarnessRun) -> dict:
    config = json.loads((h.run_dir / "config.json").read_text())
    delivered = _delivered(h.run_dir, config["topology"]["hosts"])
    events = h.summary["events"]
    return {"events": events, "simulated_s": h.summary["simulated_s"],
            "simulation_wall_s": h.manifest["simulation_wall_s"],
            "events_per_s": h.manifest["events_per_s"],
            "sim_s_per_wall_s": h.manifest["sim_s_per_wall_s"],
            "process_wall_s": h.cost.wall_s, "user_s": h.cost.user_s,
            "startup_s": h.manifest["startup_s"], "other_busy_cores": h.cost.other_busy_cores,
            **delivered,
            "events_per_payload_mb": events / max(1, delivered["payload_bytes"]) * 1e6,
            "events_per_wire_mb": events / max(1, delivered["host_uplink_wire_bytes"]) * 1e6,
            "wall_s_per_payload_mb": (h.manifest["simulation_wall_s"]
                                      / max(1, delivered["payload_bytes"]) * 1e6),
            "training_iterations": h.summary.get("training", {}).get("iterations"),
            "fct_mean_s": {k: v["mean_fct_s"] for k, v in h.summary["fct"].items()},
            "segment_size": config["tcp_attributes"]["ns3::TcpSocket::SegmentSize"]}


def tcp_fastpath(r: Runner, run: ScenarioRun) -> dict:
    """The reference cell with the TCP fast path and with the wheel's own
    TcpTxBuffer (DDNN_HARNESS_STOCK_TCP=1), one after the other: its speed-up,
    and whether every table is the same."""
    from harness.engine import ns3

    runs = {"fast": r.harness(run), "stock": r.harness(run, env={ns3.STOCK_TCP_ENV: "1"})}
    out: dict = {"args": run.args()}
    for mode, h in runs.items():
        simulated = h.summary["simulated_s"]
        out[mode] = {"events": h.manifest["events"], "simulated_s": simulated,
                     "simulation_wall_s": h.manifest["simulation_wall_s"],
                     "simulation_cpu_s": h.manifest["simulation_cpu_s"],
                     "wall_s_per_simulated_s": h.manifest["simulation_wall_s"] / simulated,
                     "events_per_cpu_s": h.manifest["events"] / h.manifest["simulation_cpu_s"],
                     "tcp_fastpath": h.manifest["tcp_fastpath"],
                     "other_busy_cores": h.cost.other_busy_cores}
    fast, stock = runs["fast"].run_dir, runs["stock"].run_dir
    out["identical_tables"] = all(
        pd.read_parquet(fast / f.name).equals(pd.read_parquet(f))
        for f in sorted(stock.glob("*.parquet"))) and \
        (fast / "summary.json").read_text() == (stock / "summary.json").read_text()
    out["speedup"] = out["stock"]["simulation_cpu_s"] / out["fast"]["simulation_cpu_s"]
    out["fast_wall_s_per_simulated_s"] = out["fast"]["wall_s_per_simulated_s"]
    return out


def rdma_twin(r: Runner, run: ScenarioRun) -> dict:
    """One training cell over TCP and the same over RDMA (training.transport
    = "rdma"), side by side: events per simulated second and per CPU second,
    simulated seconds per CPU second. The lossless fabric's target: RDMA
    costs no more events per simulated second than its TCP twin."""
    from dataclasses import replace

    runs = {"tcp": r.harness(run),
            "rdma": r.harness(replace(run, label=run.label + "-rdma", overrides=(
                *run.overrides, 'training.transport="rdma"')))}
    out: dict = {"args": run.args()}
    for transport, h in runs.items():
        simulated, cpu = h.summary["simulated_s"], h.manifest["simulation_cpu_s"]
        out[transport] = {"events": h.manifest["events"], "simulated_s": simulated,
                          "simulation_cpu_s": cpu,
                          "events_per_simulated_s": h.manifest["events"] / simulated,
                          "events_per_cpu_s": h.manifest["events"] / cpu,
                          "simulated_s_per_cpu_s": simulated / cpu,
                          "iterations": h.summary.get("training", {}).get("iterations")}
    out["events_ratio"] = (out["rdma"]["events_per_simulated_s"]
                           / out["tcp"]["events_per_simulated_s"])
    return out


def speed(r: Runner, cfg: BenchConfig) -> dict:
    default, jumbo = cfg.speed
    rows: dict[str, list[dict]] = {run.label: [] for run in cfg.speed}
    for i in range(cfg.speed_reps):      # default and jumbo interleaved
        for run in (default, jumbo):
            rows[run.label].append(_speed_row(r.harness(run, reuse=i == 0)))
    scenarios = {}
    for run in cfg.speed:
        rs = rows[run.label]
        scenarios[run.label] = {
            "args": run.args(), "runs": rs,
            **{k: spread([x[k] for x in rs]) for k in
               ("events_per_s", "sim_s_per_wall_s", "simulation_wall_s", "events_per_payload_mb",
                "events_per_wire_mb", "wall_s_per_payload_mb")}}
    d, j = rows[default.label], rows[jumbo.label]
    wall_d = statistics.median(x["simulation_wall_s"] for x in d)
    wall_j = statistics.median(x["simulation_wall_s"] for x in j)
    all_rows = [x for rs in rows.values() for x in rs]
    return {
        "scenarios": scenarios,
        "tcp_fastpath": tcp_fastpath(r, cfg.thesis_cell),
        **({"rdma_twin": rdma_twin(r, cfg.rdma_twin)} if cfg.rdma_twin else {}),
        "engines": bench_engines.engines_table(r, (cfg.thesis_cell, default), cfg.speed_reps),
        "jumbo": {"wall_speedup": wall_d / wall_j,
                  "events_ratio": d[0]["events"] / j[0]["events"],
                  "fct_mean_s_mtu1500": d[0]["fct_mean_s"], "fct_mean_s_mtu9000": j[0]["fct_mean_s"],
                  "note": "jumbo frames (MTU 9000, 8880 B segments) send ~6x fewer packets "
                          "per byte and each ACK walks a ~6x shorter list of segments in "
                          "flight, hence more than 6x faster; but it is another network "
                          "(serialisation per packet, queue limits in packets, cwnd growth "
                          "per segment): a fidelity trade-off, not a free speed-up"},
        "rule_of_thumb": {
            "events_per_payload_mb": spread([x["events_per_payload_mb"] for x in all_rows
                                             if x["segment_size"] == d[0]["segment_size"]]),
            "events_per_s": spread([x["events_per_s"] for x in all_rows
                                    if x["segment_size"] == d[0]["segment_size"]]),
            "wall_s_per_payload_mb": spread([x["wall_s_per_payload_mb"] for x in all_rows
                                             if x["segment_size"] == d[0]["segment_size"]]),
            "how": "wall time of a run ~ payload MB delivered x wall_s_per_payload_mb "
                   "(= events_per_payload_mb / events_per_s), for MTU 1500; events/s "
                   "falls as TCP windows grow, so use the rate of a similar workload",
        },
    }


# --------------------------------------------------------------------------
# 6. scaling with the fabric


def scaling_row(h: HarnessRun) -> dict:
    """One fabric size: its size, cost, and build time, from the run's files."""
    topo = json.loads((h.run_dir / "config.json").read_text())["topology"]
    m = h.manifest
    return {"hosts": topo["hosts"], "nodes": topo["hosts"] + topo["switches"],
            "links": topo["links"], "events": m["events"],
            "simulation_cpu_s": m["simulation_cpu_s"],
            "events_per_cpu_s": m["events"] / m["simulation_cpu_s"],
            "network_build_s": m["network_build_s"], "startup_s": m["startup_s"],
            "peak_rss_mib": m["peak_rss_mib"], "process_wall_s": h.cost.wall_s,
            "other_busy_cores": h.cost.other_busy_cores}


def scaling_ratios(sizes: dict[str, dict]) -> None:
    """Each size's events/CPU-s over the smallest size's (that ran), in place."""
    ran = [row for row in sizes.values() if "error" not in row]
    if not ran:
        return
    smallest = min(ran, key=lambda row: row["hosts"])
    for row in ran:
        row["events_per_cpu_s_ratio"] = row["events_per_cpu_s"] / smallest["events_per_cpu_s"]


def scaling(r: Runner, cfg: BenchConfig) -> dict:
    """The same scenario on leaf-spine fabrics of growing size: does the cost
    per event stay flat, and how long does building the network take? A size
    that fails is reported as such; the larger ones still run."""
    sizes: dict[str, dict] = {}
    for hosts in sorted(cfg.scaling_hosts):
        run = scaling_run(hosts)
        try:
            sizes[str(hosts)] = {"args": run.args(), **scaling_row(r.harness(run))}
        except Exception as e:  # e.g. out of memory at a size: the rest still say something
            sizes[str(hosts)] = {"args": run.args(), "error": f"{type(e).__name__}: {e}"}
    scaling_ratios(sizes)
    if cfg.scaling_callgrind_window:
        for hosts in sorted(cfg.scaling_hosts):
            try:
                sizes[str(hosts)]["callgrind"] = scaling_callgrind(
                    r, scaling_run(hosts), cfg.scaling_callgrind_window)
            except Exception as e:
                sizes[str(hosts)]["callgrind"] = {"error": f"{type(e).__name__}: {e}"}
        scaling_callgrind_ratios(sizes)
    return {"sizes": sizes,
            "note": "leaf-spine, 4 spines at 40 Gbit/s, 16 hosts per leaf at 10 Gbit/s, "
                    "web-search background at 20 % load, 0.06 s simulated; "
                    "events_per_cpu_s_ratio is over the smallest size"}


def cache_options() -> list[str]:
    """valgrind's cache geometry from this machine's sysfs: L1 data and
    instruction caches and the last level. valgrind's own detection can read a
    virtual machine's CPUID wrongly (384 MiB of L3 on the project's machine,
    against the 32 MiB sysfs reports)."""
    caches: dict[tuple[int, str], str] = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        factor = {"K": 1024, "M": 1024 ** 2}.get(size[-1], 1)
        caches[(level, kind)] = f"{int(size.rstrip('KM')) * factor},{ways},{line}"
    options = []
    if (1, "Data") in caches:
        options.append(f"--D1={caches[(1, 'Data')]}")
    if (1, "Instruction") in caches:
        options.append(f"--I1={caches[(1, 'Instruction')]}")
    unified = [key for key in caches if key[1] == "Unified"]
    if unified:
        options.append(f"--LL={caches[max(unified)]}")
    return options


def scaling_callgrind(r: Runner, run: ScenarioRun, window: tuple[float, float]) -> dict:
    """Instructions and simulated cache misses per event over a window of
    simulated time, in the native program under callgrind: counts that the
    machine's load and its neighbours' use of the caches do not move, so the
    sizes compare on what the code does. The window's cost per event is the
    steady state's; the run stops at its end."""
    if not native.valgrind_available():
        raise RuntimeError("valgrind (with valgrind/callgrind.h) is not installed")
    base = r.fresh_dir(f"callgrind-window-{run.label}")
    base.mkdir(parents=True)
    caches = cache_options()
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
                *caches, f"--callgrind-out-file={base / 'callgrind.out'}",
                f"--log-file={base / 'valgrind.log'}"]
    _, proc = r.measure([*valgrind, *native.command(native.build(), r.recipe(run)),
                         f"--window-from={window[0]:g}", f"--window-to={window[1]:g}"])
    events = native.parse_output(proc.stdout)["window_events"]
    counts = _collected_events(base / "valgrind.log")
    return {"window_s": list(window), "events": events, "caches": caches,
            "instructions_per_event": counts["Ir"] / events,
            "d1_misses_per_event": (counts["D1mr"] + counts["D1mw"]) / events,
            "ll_misses_per_event": (counts["DLmr"] + counts["DLmw"]) / events}


def _collected_events(log: Path) -> dict[str, int]:
    """callgrind's totals by event name (its 'Events' and 'Collected' lines)."""
    names, values = None, None
    for line in log.read_text().splitlines():
        if "Events    :" in line:
            names = line.split(":", 1)[1].split()
        elif "Collected :" in line:
            values = [int(v) for v in line.split(":", 1)[1].split()]
    if names is None or values is None:
        raise RuntimeError(f"no 'Events'/'Collected' lines in {log}")
    return dict(zip(names, values))


def scaling_callgrind_ratios(sizes: dict[str, dict]) -> None:
    """Each size's events per instruction over the smallest counted size's
    (the events/CPU-s ratio's counterpart in instructions), in place."""
    counted = {int(hosts): row["callgrind"] for hosts, row in sizes.items()
               if "instructions_per_event" in row.get("callgrind", {})}
    if not counted:
        return
    smallest = counted[min(counted)]["instructions_per_event"]
    for row in counted.values():
        row["events_per_instruction_ratio"] = smallest / row["instructions_per_event"]


def remove_work(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
