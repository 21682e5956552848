"""`python -m bench [--quick] [--only SECTION]... [-o PATH]`: measure the
harness (overhead vs a native ns-3 program, start-up, memory, sweep scaling,
speed, cost as the fabric grows), write a JSON report and print a short table."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from bench import config, procs, reference_suite, sections
from harness.io import outdir

DEFAULT_OUTPUT = sections.REPO_DIR / "results" / "bench" / "report.json"

# (section, path into its result, comparison, limit, what the target is)
TARGETS = (
    ("overhead", ("phase_overhead_pct", "median"), "<=", 2.0,
     "simulation phase vs native (timed), %"),
    ("overhead", ("callgrind", "simulator_run_overhead_pct"), "<=", 2.0,
     "Simulator::Run() vs native (callgrind), %"),
    ("overhead", ("callgrind", "projected_phase_overhead_pct"), "<=", 2.0,
     "simulation phase vs native (callgrind), %"),
    ("overhead", ("process_overhead_pct", "median"), "<=", 10.0, "whole process vs native, %"),
    ("overhead", ("agree",), "==", True, "native and harness runs agree"),
    ("startup", ("warm_startup_s", "median"), "<=", 3.0, "warm start-up, s"),
    ("memory", ("manifest_peak_rss_mib",), "<=", 1024.0, "peak RSS, MiB"),
    ("speed", ("tcp_fastpath", "speedup"), ">=", 3.5, "thesis cell: TCP fast path speed-up, x"),
    ("speed", ("tcp_fastpath", "fast_wall_s_per_simulated_s"), "<=", 100.0,
     "thesis cell: wall s per simulated s"),
    ("speed", ("tcp_fastpath", "identical_tables"), "==", True,
     "thesis cell: same tables with and without"),
    ("speed", ("rdma_twin", "events_ratio"), "<=", 1.0,
     "training over RDMA: events per simulated s vs its TCP twin, x"),
    ("sweep", ("efficiency_local_j2",), ">=", 0.9, "sweep efficiency -j 2 local"),
    ("sweep", ("efficiency_dask_j2",), ">=", 0.9, "sweep efficiency dask -j 2"),
    ("sweep", ("efficiency_dask_processes_j2",), ">=", 0.9,
     "sweep efficiency dask worker processes -j 2"),
    # checked only where the 512-host size ran (not in --quick)
    ("scaling", ("sizes", "512", "events_per_cpu_s_ratio"), ">=", 0.8,
     "512 hosts: events/CPU-s vs the smallest, x"),
    ("scaling", ("sizes", "512", "network_build_s"), "<=", 10.0, "512 hosts: network build, s"),
)


def _host() -> dict:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {"cpus": os.cpu_count(), "cpu_model": model, "machine": platform.machine(),
            "python": platform.python_version(), "load_1min_at_start": os.getloadavg()[0],
            "perf_instructions": procs.perf_instructions_available()}


def _lookup(data: dict, path: tuple[str, ...]):
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def targets(results: dict) -> list[dict]:
    out = []
    for section, path, op, limit, what in TARGETS:
        if section not in results:
            continue
        value = _lookup(results[section], path)
        if value is None:
            continue   # not measured in this setting (e.g. callgrind in --quick)
        if op == "<=":
            met = value <= limit
        elif op == ">=":
            met = value >= limit
        else:
            met = value == limit
        out.append({"section": section, "metric": ".".join(path), "what": what,
                    "value": value, "target": f"{op} {limit}", "met": met})
    return out


def write_report(report: dict, path: Path) -> None:
    """Write the report as JSON, whole (harness.io.outdir's writer)."""
    outdir.write_file(path, json.dumps(report, indent=2, default=str) + "\n")


def _fmt(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def table(report: dict) -> str:
    res = {k: v for k, v in report["sections"].items() if "error" not in v}
    lines = [f"{'metric':<44} {'value':>14}  {'target':>10}  met"]
    for t in report["targets"]:
        lines.append(f"{t['what']:<44} {_fmt(t['value']):>14}  {t['target']:>10}  "
                     f"{'-' if t['met'] is None else ('yes' if t['met'] else 'NO')}")
    if "overhead" in res:
        o = res["overhead"]
        lines.append(f"  overhead measured in {o['measure']}; the harness process "
                     f"costs {o['process_extra_user_s']['median']:.2f} s more user CPU")
        floor = o.get("bindings_floor")
        if floor:
            lines.append(f"  of which {floor['user_s']['median']:.2f} s is the floor of any Python "
                         f"driver (interpreter, pandas, cppyy + ns-3 loaded) = "
                         f"{floor['pct_of_native_process']:.1f}% of the native run")
        agreed = sum(a["agree"] for a in o["agreement"])
        events = sorted({a["native_events"] for a in o["agreement"]})
        lines.append(f"  native vs harness: {agreed}/{len(o['agreement'])} run pairs identical "
                     f"(events, flows, iterations, queues, link bytes); events "
                     + ", ".join(f"{e:,}" for e in events))
        for a in o["agreement"]:
            if not a["agree"]:
                lines.append(f"  DIFFER: events harness {a['harness_events']:,} "
                             f"native {a['native_events']:,}")
        cg = o.get("callgrind")
        if cg:
            lines.append(f"  callgrind ({cg['scenario']['label']}): phase instructions harness "
                         f"{cg['phase_instructions']['harness']:,} native "
                         f"{cg['phase_instructions']['native']:,}; outside Run() the harness "
                         f"adds {cg.get('outside_run_extra_instructions', 0):,} per run")
        if o.get("native_hot_spots"):
            top = o["native_hot_spots"][0]
            lines.append(f"  native hot spot: {top['percent']:.0f}% in {top['symbol']}")
    if "startup" in res and res["startup"]["cold"]:
        lines.append(f"{'cold start-up, s':<44} {_fmt(res['startup']['cold']['startup_s']):>14}")
    if "speed" in res:
        for label, s in res["speed"]["scenarios"].items():
            lines.append(f"{label + ', events/s':<44} {_fmt(s['events_per_s']['median']):>14}")
            lines.append(f"{label + ', sim s per wall s':<44} "
                         f"{_fmt(s['sim_s_per_wall_s']['median']):>14}")
        tcp = res["speed"]["tcp_fastpath"]
        for mode in ("fast", "stock"):
            lines.append(f"{'thesis cell ' + mode + ', events per CPU s':<44} "
                         f"{_fmt(tcp[mode]['events_per_cpu_s']):>14}")
            lines.append(f"{'thesis cell ' + mode + ', wall s per sim s':<44} "
                         f"{_fmt(tcp[mode]['wall_s_per_simulated_s']):>14}")
        twin = res["speed"].get("rdma_twin")
        for transport in ("tcp", "rdma") if twin else ():
            lines.append(f"{'training twin ' + transport + ', events per sim s':<44} "
                         f"{_fmt(twin[transport]['events_per_simulated_s']):>14}")
            lines.append(f"{'training twin ' + transport + ', events per CPU s':<44} "
                         f"{_fmt(twin[transport]['events_per_cpu_s']):>14}")
        eng = res["speed"].get("engines", {})
        for label, s in eng.get("scenarios", {}).items():
            for variant, v in s["variants"].items():
                lines.append(f"{label + ': ' + variant + ', events per CPU s':<70} "
                             f"{_fmt(v['events_per_cpu_s']):>14}")
        if "skipped" in eng:
            lines.append(f"engines: {eng['skipped']}")
        lines.append(f"{'jumbo frames wall speed-up':<44} "
                     f"{_fmt(res['speed']['jumbo']['wall_speedup']):>14}")
        rule = res["speed"]["rule_of_thumb"]
        lines.append(f"{'events per payload MB (MTU 1500)':<44} "
                     f"{_fmt(rule['events_per_payload_mb']['median']):>14}")
        lines.append(f"{'wall s per payload MB (MTU 1500)':<44} "
                     f"{_fmt(rule['wall_s_per_payload_mb']['median']):>14}")
    if "sweep" in res:
        for name, run in res["sweep"]["runs"].items():
            lines.append(f"{'sweep ' + name + ', cells/h':<44} {_fmt(run['cells_per_hour']):>14}")
            if "cpu_s" in run:
                lines.append(f"{'sweep ' + name + ', CPU s per cell':<44} "
                             f"{_fmt(run['cpu_s'] / run['cells']):>14}")
    if "scaling" in res:
        lines += scaling_table(res["scaling"]["sizes"])
    if "references" in res:
        w = res["references"]["within"]
        lines.append(f"references: {w['yes']} within tolerance, {w['no']} not, "
                     f"{w['undecided']} undecided ({res['references']['cpu_s']:.0f} CPU s)")
        lines += reference_suite.table(res["references"]["rows"])
    if report["bench"]["quick"]:
        lines.append("note: --quick runs tiny scenarios: its timings say nothing about the targets")
    load = report["bench"]["other_busy_cores_max"]
    if load is not None and load > 0.25:
        lines.append(f"note: other processes used up to {load:.2f} cores during the runs")
    return "\n".join(lines)


def scaling_table(sizes: dict[str, dict]) -> list[str]:
    """The scaling section's rows, one per fabric size."""
    lines = [f"  {'hosts':>6} {'nodes':>6} {'links':>6} {'events':>11} {'sim CPU s':>9} "
             f"{'events/CPU-s':>12} {'ratio':>6} {'build s':>7} {'RSS MiB':>7}"]
    for row in sizes.values():
        if "error" in row:
            lines.append(f"  {row['args']}: {row['error'].splitlines()[0][:100]}")
            continue
        lines.append(f"  {row['hosts']:>6} {row['nodes']:>6} {row['links']:>6} "
                     f"{row['events']:>11,} {row['simulation_cpu_s']:>9.1f} "
                     f"{row['events_per_cpu_s']:>12,.0f} {row['events_per_cpu_s_ratio']:>6.2f} "
                     f"{row['network_build_s']:>7.2f} {row['peak_rss_mib']:>7.0f}")
    counted = [(row["hosts"], row["callgrind"]) for row in sizes.values()
               if "callgrind" in row and "hosts" in row]
    if counted:
        lines.append(f"  callgrind, per event: {'hosts':>6} {'instructions':>12} {'ratio':>6} "
                     f"{'D1 misses':>9} {'LL misses':>9}")
        for hosts, c in counted:
            if "error" in c:
                lines.append(f"  {hosts}: {c['error'].splitlines()[0][:100]}")
                continue
            lines.append(f"  {'':21} {hosts:>6} {c['instructions_per_event']:>12,.0f} "
                         f"{c.get('events_per_instruction_ratio', float('nan')):>6.2f} "
                         f"{c['d1_misses_per_event']:>9.1f} {c['ll_misses_per_event']:>9.2f}")
    return lines


def _reference_names() -> list[str]:
    from harness.usecases import references

    return list(references.checks())


def _scaling_hosts(value: str) -> tuple[int, ...]:
    try:
        return config.check_scaling_hosts(value)
    except ValueError as e:   # argparse prints it as one line, before anything runs
        raise argparse.ArgumentTypeError(str(e).removeprefix("--scaling-hosts: ")) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="tiny scenarios (a smoke test of the bench, ~1 minute)")
    parser.add_argument("--only", action="append", choices=config.SECTIONS, metavar="NAME",
                        help=f"run only this section (repeatable): {', '.join(config.SECTIONS)}")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT,
                        help=f"report path (default {DEFAULT_OUTPUT.relative_to(sections.REPO_DIR)})")
    parser.add_argument("--keep", action="store_true", help="keep the runs' work directory")
    parser.add_argument("--wait-quiet", type=float, default=None, metavar="SECONDS",
                        help="before each section, wait up to this long for other processes "
                             "to use < 0.5 cores (default 30, --quick 0)")
    parser.add_argument("--scaling-hosts", type=_scaling_hosts, default=None, metavar="N,N,...",
                        help="scaling: the fabric sizes in hosts, multiples of 16 >= 32 "
                             f"(default {','.join(map(str, config.SCALING_HOSTS))}; "
                             f"--quick {','.join(map(str, config.SCALING_HOSTS[:2]))})")
    parser.add_argument("--scaling-callgrind", action="store_true",
                        help="scaling: also count each size's instructions and simulated cache "
                             "misses per event under callgrind, over simulated seconds "
                             f"{config.SCALING_CALLGRIND_WINDOW[0]:g}-"
                             f"{config.SCALING_CALLGRIND_WINDOW[1]:g} (slow: ~45 minutes "
                             "at 512 hosts)")
    parser.add_argument("--reference", action="append", default=None, metavar="CHECK",
                        help="references: run only this check (repeatable; the names of "
                             "workloads/references/references.toml)")
    parser.add_argument("--cheap", action="store_true",
                        help="references: each check's cheap points only (as the tests run them)")
    parser.add_argument("--keep-references", action="store_true",
                        help="references: keep the rows in workloads/findings/references/ (the "
                             "kept results docs/findings/references.md is generated from)")
    args = parser.parse_args(argv)

    cfg = config.quick() if args.quick else config.full()
    if args.scaling_hosts:
        cfg = dataclasses.replace(cfg, scaling_hosts=args.scaling_hosts)
    if args.reference or args.cheap:
        known = _reference_names()
        unknown = [n for n in args.reference or () if n not in known]
        if unknown:
            parser.error(f"--reference: unknown check {unknown[0]!r}; allowed: {', '.join(known)}")
        cfg = dataclasses.replace(cfg, references=tuple(args.reference or ()),
                                  references_cheap=args.cheap)
    if args.scaling_callgrind:
        cfg = dataclasses.replace(cfg, scaling_callgrind_window=config.SCALING_CALLGRIND_WINDOW)
    wait = args.wait_quiet if args.wait_quiet is not None else (0.0 if args.quick else 30.0)
    wanted = [s for s in config.SECTIONS if not args.only or s in args.only]
    started = time.time()
    host = _host()
    work = Path(tempfile.mkdtemp(prefix="ddnn-bench-"))
    runner = sections.Runner(work)
    results: dict = {}
    try:
        for name in wanted:
            quiet = procs.wait_quiet(wait)
            print(f"bench: {name} (other processes busy: {quiet['busy_cores']:.2f} cores)...",
                  file=sys.stderr, flush=True)
            t0 = time.time()
            try:
                results[name] = getattr(sections, name)(runner, cfg)
            except Exception as e:  # a failed section is reported; the others still run
                print(f"bench: {name} failed: {e}", file=sys.stderr)
                results[name] = {"error": f"{type(e).__name__}: {e}"}
            results[name]["section_wall_s"] = time.time() - t0
            results[name]["machine_before"] = quiet
    finally:
        if args.keep:
            print(f"bench: runs kept in {work}", file=sys.stderr)
        else:
            sections.remove_work(work)
    busy = [c.other_busy_cores for c in runner.costs]
    report = {
        "bench": {"version": 1, "quick": cfg.quick, "sections": wanted,
                  "started": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
                  "wall_s": time.time() - started, "host": host,
                  "load_1min_at_end": os.getloadavg()[0],
                  "other_busy_cores_max": max(busy) if busy else None,
                  "other_busy_cores_median": sorted(busy)[len(busy) // 2] if busy else None},
        "sections": results,
    }
    report["targets"] = targets({k: v for k, v in results.items() if "error" not in v})
    if "rows" in results.get("references", {}):
        report["references"] = results["references"]["rows"]
        if args.keep_references:
            from harness.usecases import references
            from harness.findings import kept_references

            known = references.checks()
            digests = {r["check"]: references.check_digest(known[r["check"]])
                       for r in report["references"]}
            kept_references.keep(report["references"], results["references"]["cpu_s"],
                                 results["references"]["cheap"], digests)
    write_report(report, args.output)
    print(table(report))
    print(f"report: {args.output}")
    failed = [k for k, v in results.items() if "error" in v]
    if failed:
        print(f"bench: sections failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
