"""One scenario in ns-3: a plan (harness.engine.planning) built and run in
ns-3, its tables collected, the run directory written atomically.

ns-3 objects never leave this module: the Run it returns (harness.analysis.tables, the
one type for a run's tables in memory or on disk) holds DataFrames and dicts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from harness import training
from harness.analysis import lossless, metrics
from harness.analysis.tables import Run, read_csv
from harness.config.scenario import RunConfig, Scenario
from harness.engine import memory, recipe
from harness.io.progress import ProgressLines, wants_lines
from harness.engine.planning import Plan, plan
from harness.engine.recipe import APP_BACKGROUND, APP_OTHER, APP_TRAINING
from harness.io import outdir
from harness.network import qdisc, routing
from harness.network.topology import Topology
from harness.training import stragglers


# --------------------------------------------------------------------------
# ns-3


def build_recipe(ns, p: Plan):
    """ns-3's ScenarioRecipe built from the plan's recipe (harness.engine.recipe)
    in an empty simulator: a run is the same whatever ran before it in this
    process (nodes and events that other ns-3 use left behind would join it,
    their events counted, their nodes numbered before ours)."""
    ns.Simulator.Destroy()
    built = ns.CreateObject["ns3::ScenarioRecipe"]()
    built.Apply(recipe.text(p))
    return built


class _Network:
    """The ns-3 side of one run (lives only inside execute()): the scenario
    built by ns-3's ScenarioRecipe from the plan's recipe (build_recipe)."""

    def __init__(self, ns, p: Plan):
        self.recipe = build_recipe(ns, p)
        self.builder = self.recipe.GetTopology()
        self.host_addresses = [self.recipe.GetHostAddress(h).Get()
                               for h in range(p.topology.n_hosts)]
        self.queues = self.recipe.GetQueueTracker()
        self.utilization = self.recipe.GetUtilizationTracker()
        # run.queue_samples only: an ordinary run has no sampler
        self.sampler = self.recipe.GetQueueSampler() if p.queue_samples else None
        self.jobs = [training.architecture(job.config.architecture).installed(self.recipe, slot)
                     for slot, job in enumerate(p.all_jobs)]
        self.job = self.jobs[0] if self.jobs else None
        self.flow_log = self.recipe.GetFlowLog() if p.scenario.background.enabled else None
        self.service_log = self.recipe.GetServiceLog() if p.services else None

    def job_tcp_delays(self, ns, job: training.JobPlan) -> dict | None:
        """A job's TCP connections' delays at the end of the run, summed over
        its hosts' open connections on its ports, counted in ns-3
        (TcpSocketDdnn::SumOnPorts; metrics.job_tcp_delays); None for a job
        over RDMA. Read once: no Python per packet."""
        if job.config.transport != "tcp":
            return None
        first, last = job.ports
        return metrics.job_tcp_delays([ns.TcpSocketDdnn.SumOnPorts(self.builder.GetNode(h),
                                                                   first, last)
                                       for h in job.all_hosts])

    def job_tcp_backoffs(self, ns, job: training.JobPlan) -> np.ndarray | None:
        """A job's TCP connections' back-off spans at the end of the run
        (from_ns, to_ns: each timeout's wait without progress), over the
        same connections as job_tcp_delays, counted in ns-3
        (TcpSocketDdnn::BackoffsOnPorts); None for a job over RDMA."""
        if job.config.transport != "tcp":
            return None
        first, last = job.ports
        text = "".join(str(ns.TcpSocketDdnn.BackoffsOnPorts(self.builder.GetNode(h), first, last))
                       for h in job.all_hosts)
        return metrics.backoff_spans(text)

    def service_records(self, p: Plan) -> dict:
        """Each service's raw records after the run, by its place, as its
        kind reads them from its applications (while ns-3 still holds them)."""
        from harness.config import registry

        apps = self.service_apps()
        return {s.index: registry.service_kind(s.kind).read_records(apps.get(s.index, []))
                for s in p.services}

    def service_apps(self) -> dict[int, list]:
        """Each service's applications, by its place: every `service-app`
        line's application (cppyy gives it its own class), with the bytes
        its `service-note-rx` line noted."""
        from harness.traffic.services.kind import ServiceApp

        out: dict[int, list] = {}
        for i in range(self.recipe.GetNServiceApps()):
            app = self.recipe.GetServiceApp(i)
            received = ((int(self.recipe.GetServiceRx(i, False)),
                         int(self.recipe.GetServiceRx(i, True)))
                        if self.recipe.HasServiceRx(i) else None)
            out.setdefault(int(self.recipe.GetServiceAppService(i)), []).append(
                ServiceApp(str(app.GetInstanceTypeId().GetName()), app, received))
        return out


def _run_with_progress(ns, run: RunConfig, progress: bool | None, job=None,
                       recipe=None) -> dict:
    """Run to `run.duration` in slices, so the user sees simulated time,
    events/s and an ETA. Slices are ~0.5 s of wall time: no per-packet Python.
    With a measurement target set on `job` (run.min_iterations), the job
    stops the simulator a cool-down after it was reached: the run ends there,
    and the measurement window ends where the target was reached (simulated
    times both, whatever the slicing). The scenario (`recipe`, its `window`
    directive) ends the run sooner once every flow that started in the window
    is done: the cool-down is at most `run.cooldown`."""
    sim = ns.Simulator
    duration = run.duration
    bar = None
    if progress or (progress is None and sys.stderr.isatty()):
        from tqdm import tqdm  # only for the bar: its import is ~15 ms of this phase

        bar = tqdm(total=round(duration, 6), unit="sim-s", file=sys.stderr,
                   bar_format="{l_bar}{bar}| {n:.3f}/{total:.3f} sim-s "
                   "[{elapsed}<{remaining}{postfix}]", leave=False)
    # no terminal (a log, a batch job): a line a minute instead of the bar
    lines = (ProgressLines("run", round(duration, 6), "simulated s", fmt=lambda n: f"{n:.3f}")
             if bar is None and progress is None and wants_lines(progress) else None)
    events0, wall0, cpu0 = sim.GetEventCount(), time.perf_counter(), time.process_time()
    end_ns = max(1, round(duration * 1e9))
    step = min(duration, 1e-3)
    now_ns = 0
    events = events0
    slices = 0  # each slice's Stop that ran is an event of ours: not counted
    reached_ns = -1
    while now_ns < end_ns:
        slice_ns = min(max(1, round(step * 1e9)), end_ns - now_ns)
        t0 = time.perf_counter()
        stop = sim.Stop(ns.NanoSeconds(slice_ns))
        sim.Run()
        wall = time.perf_counter() - t0
        if sim.IsExpired(stop):
            slices += 1
        else:
            # the job's or the window's stop ended Run first: take ours out of
            # the queue, or it would end a later slice and count as the
            # model's event (how many depends on the slices, so on wall time)
            sim.Remove(stop)
        new_now_ns, new_events = sim.Now().GetNanoSeconds(), sim.GetEventCount()
        if job is not None and reached_ns < 0 and job.GetTargetReachedNs() >= 0:
            reached_ns = job.GetTargetReachedNs()
            end_ns = min(end_ns, reached_ns + round(run.cooldown * 1e9))
        if recipe is not None and recipe.HasEndedEarly():
            end_ns = new_now_ns
        if bar is not None:
            bar.set_postfix_str(f"{(new_events - events) / max(wall, 1e-9):,.0f} ev/s",
                                refresh=False)
            bar.update((new_now_ns - now_ns) / 1e9)
        if lines is not None:
            lines.update((new_now_ns - now_ns) / 1e9)
            lines.tick()
        now_ns, events = new_now_ns, new_events
        # aim each slice at ~0.5 s of wall time
        step = step * min(4.0, max(0.25, 0.5 / max(wall, 1e-4)))
    if bar is not None:
        bar.close()
    if lines is not None:
        lines.close()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    ours = (slices + bool(job is not None and job.HasStoppedAtTarget())
            + (recipe.GetOwnEvents() if recipe is not None else 0))
    events = sim.GetEventCount() - events0 - ours
    now = now_ns / 1e9
    window_end = reached_ns / 1e9 if reached_ns >= 0 else run.window[1]
    return {"events": int(events), "wall_s": wall, "cpu_s": cpu, "simulated_s": now,
            "window": (run.warmup, window_end), "target_reached": reached_ns >= 0,
            "events_per_s": events / wall if wall else None,
            "sim_s_per_wall_s": now / wall if wall else None}


def execute(p: Plan, progress: bool | None = False, quiet: bool = False,
            on_phase: contextlib.AbstractContextManager | None = None) -> Run:
    """Build the planned network in ns-3, run it, return the tables.
    progress: show a progress bar (None: when stderr is a terminal).
    on_phase: a context manager entered right before the simulation phase (the
    Simulator::Stop/Run slices) and exited right after it, e.g. to read cost
    counters around it (python -m bench); the manifest has the phase's wall and
    CPU time either way."""
    from harness.engine import ns3

    started = time.time()
    ns = ns3.load(quiet=quiet)
    # whatever stops the run (an error, an interrupt), the simulator is left
    # empty: a later run in this process (a sweep's next cell) starts clean
    try:
        built = time.perf_counter()
        net = _Network(ns, p)
        # the network alone (recipe text, routes, ns-3 nodes): what grows with
        # the fabric, apart from Python and ns-3 start-up
        network_build_s = time.perf_counter() - built
        startup_s = time.time() - _process_start()
        with on_phase or contextlib.nullcontext():
            timing = _run_with_progress(ns, p.run, progress,
                                        net.job if p.run.min_iterations else None, net.recipe)
        raw_flows = read_csv(net.flow_log.ToCsv()) if net.flow_log is not None else None
        raw_queues = read_csv(net.queues.ToCsv())
        raw_util = read_csv(net.utilization.ToCsv())
        raw_samples = read_csv(net.sampler.ToCsv()) if net.sampler is not None else None
        lossless_raw = _read_lossless(net, p)
        services_raw = None
        if net.service_log is not None:
            services_raw = (read_csv(net.service_log.ToCsv()), net.service_records(p))
        job_tables = None
        if net.job is not None:
            job_tables = [dataclasses.replace(
                training.architecture(job.config.architecture).collect(
                    ns_job, job, p.classes.class_of_tos()),
                tcp_delays=net.job_tcp_delays(ns, job),
                tcp_backoffs=net.job_tcp_backoffs(ns, job))
                for ns_job, job in zip(net.jobs, p.all_jobs)]
            job_tables = job_tables[0] if len(job_tables) == 1 else job_tables
    finally:
        ns.Simulator.Destroy()
    del net

    result = collect(p, raw_flows, raw_queues, raw_util, timing, job_tables, services_raw,
                     raw_samples, lossless_raw)
    result.manifest.update(startup_s=startup_s, network_build_s=network_build_s,
                           run_wall_s=time.time() - started,
                           simulation_cpu_s=timing["cpu_s"], peak_rss_mib=_peak_rss_mib(),
                           tcp_fastpath=ns3.tcp_fastpath().report(),
                           engine=ns3.find_engine().describe(),
                           heap_huge_pages=memory.heap_on_huge_pages())
    return result


def _read_lossless(net: _Network, p: Plan) -> tuple[list[dict] | None, list[dict] | None]:
    """The PFC ports' and the RDMA queue pairs' counters after the run (None:
    the run has none), as rows of harness.analysis.lossless's tables."""
    recipe = net.recipe
    pfc_rows = None
    if p.network.pfc is not None:
        band_classes = p.classes.band_names()
        lossless = qdisc.lossless_bands(p.network, p.classes)
        pfc_rows = []
        for i, (link, side, src, dst) in enumerate(p.topology.egresses()):   # the recipe's order
            port = recipe.GetPfcPort(i)
            for band in range(int(port.GetNBands())):
                pfc_rows.append(dict(
                    link=link, side=side, from_node=src, to_node=dst, band=band,
                    traffic_class=band_classes[band], lossless=lossless[band],
                    pause_frames_sent=int(port.GetPauseFramesSent(band)),
                    pause_frames_received=int(port.GetPauseFramesReceived(band)),
                    paused_s=port.GetPausedTime(band).GetSeconds(),
                    pausing_s=port.GetPausingTime(band).GetSeconds(),
                    max_headroom_bytes=int(port.GetMaxHeadroom(band)),
                    max_ingress_bytes=int(port.GetMaxIngressBytes(band))))
    rdma_rows = None
    if recipe.GetNRdmaStacks():
        host_of = {addr: h for h, addr in enumerate(net.host_addresses)}
        rdma_rows = []
        for i in range(int(recipe.GetNRdmaStacks())):
            host = int(recipe.GetRdmaStackHost(i))
            for socket in recipe.GetRdmaStack(i).GetSockets():
                if socket.IsListening():
                    continue
                rate = socket.GetRateControl()
                rdma_rows.append(dict(
                    host=host, peer_host=host_of.get(socket.GetPeerAddress().Get(), -1),
                    accepted=bool(socket.IsAccepted()), bytes_sent=int(socket.GetBytesSent()),
                    bytes_acknowledged=int(socket.GetBytesAcknowledged()),
                    bytes_received=int(socket.GetBytesReceived()),
                    cnps_sent=int(socket.GetCnpsSent()),
                    cnps_received=int(socket.GetCnpsReceived()),
                    rate_cuts=int(rate.GetRateCuts()) if rate else 0,
                    retransmitted_packets=int(socket.GetRetransmissions()),
                    go_backs=int(socket.GetGoBacks())))
    return pfc_rows, rdma_rows


def collect(p: Plan, raw_flows, raw_queues, raw_util, timing: dict,
            job_tables: training.JobTables | None = None, services_raw=None,
            raw_samples=None, lossless_raw=(None, None)) -> Run:
    """Turn the raw C++ tables into the run's tables, summary and manifest
    (services_raw: the ServiceLog's requests, and each service's own
    records by its place, ServiceKind.read_records'; raw_samples: the queue
    sampler's, run.queue_samples)."""
    sc, topo = p.scenario, p.topology
    tos_class = p.classes.class_of_tos()
    if raw_flows is not None:
        ideal = _ideal_fct(topo, raw_flows)
        flows = metrics.flow_table(raw_flows, timing["window"], ideal, tos_class, sc.scale)
    else:
        flows = metrics.flow_table(_empty_flow_log(), (0, 0), pd.Series(dtype=float), tos_class)
    band_classes = p.classes.band_names()
    rates = {i: link.rate_bps for i, link in enumerate(topo.links)}
    queues = metrics.with_places(metrics.with_starvation(
        raw_queues.assign(traffic_class=raw_queues["band"].map(band_classes)), rates),
        topo.n_hosts)
    samples = (None if raw_samples is None else
               raw_samples.assign(traffic_class=raw_samples["band"].map(band_classes)))
    util = metrics.utilization_table(
        raw_util, p.run.utilization_interval, rates,
        tos_class, {APP_OTHER: "other", APP_BACKGROUND: "background", APP_TRAINING: "training"})
    iterations = transfers = compute = scheduler = None
    per_job: list[tuple[training.JobPlan, training.JobTables]] = []
    if job_tables is not None:
        several = isinstance(job_tables, list)
        per_job = [(job, _job_tables(job, t, timing["window"], several)) for job, t in
                   zip(p.all_jobs, job_tables if several else [job_tables])]
        tables = [t for _, t in per_job]
        iterations, transfers, compute = (
            pd.concat([getattr(t, name) for t in tables], ignore_index=True)
            if several else getattr(tables[0], name)
            for name in ("iterations", "transfers", "compute"))
        scheduler = [t.scheduler for t in tables if t.scheduler is not None]
        scheduler = (None if not scheduler else
                     pd.concat(scheduler, ignore_index=True) if several else scheduler[0])
    summary = {
        "scenario": sc.name, "seed": sc.seed, "digest": sc.digest(),
        "fct": metrics.fct_summary(flows),
        **metrics.completion(flows),
        "tcp_delays": metrics.tcp_delays(flows),
        "queues": metrics.band_totals(queues).to_dict(orient="records"),
        "losses": metrics.losses(queues).to_dict(orient="records"),
        "host_uplink_utilization": metrics.host_uplink_utilization(
            util, topo.n_hosts, timing["window"], p.run.utilization_interval),
        **{k: timing[k] for k in ("events", "simulated_s")},
        "window_s": list(timing["window"]),
    }
    if p.network.marks_ecn:
        # CE marks per band over every egress, by the band's classes
        names = queues.drop_duplicates("band").set_index("band")["traffic_class"]
        summary["ecn_marks"] = {f"{band} ({names.get(band, '')})": int(n) for band, n in
                                queues.groupby("band")["marked_packets"].sum().items()}
    pfc_rows, rdma_rows = lossless_raw
    pfc = None if pfc_rows is None else lossless.pfc_table(pfc_rows)
    rdma = None if rdma_rows is None else lossless.rdma_table(rdma_rows)
    if pfc is not None or rdma is not None:
        summary["lossless"] = lossless.summary(
            pfc, rdma, queues, qdisc.lossless_bands(p.network, p.classes), topo.n_hosts,
            timing["window"][1] - timing["window"][0])
    service_tables = (None, None)
    if services_raw is not None:
        requests_raw, apps = services_raw
        from harness.traffic.services import results as service_results

        *service_tables, summary["services"] = service_results.collect(
            p, requests_raw, apps, timing["window"])
    if per_job:
        summary["training"] = _job_summary(*per_job[0])
        if len(per_job) > 1:
            summary["jobs"] = [_job_summary(job, t) for job, t in per_job]
    manifest = {
        "versions": _versions(),
        "seed": sc.seed,
        "digest": sc.digest(),
        "command": sys.argv,
        "events": timing["events"],
        # timings here only: summary.json is identical for identical inputs
        "simulation_wall_s": timing["wall_s"],
        "events_per_s": timing["events_per_s"],
        "sim_s_per_wall_s": timing["sim_s_per_wall_s"],
    }
    return Run(summary=summary, manifest=manifest, config=p.resolved(), flows=flows,
               queues=queues, utilization=util, iterations=iterations, transfers=transfers,
               compute=compute, scheduler=scheduler, services=service_tables[0],
               streams=service_tables[1], queue_samples=samples, pfc=pfc, rdma=rdma, plan=p)


def _job_tables(job: training.JobPlan, t: training.JobTables, window,
                several: bool) -> training.JobTables:
    """One job's tables as written: iteration times, whether each iteration is
    measured, the end spread, the stragglers' factors; with several jobs the
    scheduler table gets the `job` column the others have."""
    it = t.iterations.assign(
        iteration_s=(t.iterations["end_ns"] - t.iterations["start_ns"]) / 1e9,
        measured=(t.iterations["start_ns"] / 1e9 >= window[0])
        & (t.iterations["end_ns"] / 1e9 <= window[1]))
    it = metrics.with_end_spread(it)
    it = metrics.with_iteration_parts(it, t.compute, t.tcp_backoffs)
    if job.config.straggler is not None:
        it = stragglers.with_factors(it, job.compute_factors)
    scheduler = t.scheduler
    if several and scheduler is not None:
        scheduler = scheduler.assign(job=job.index)
    return dataclasses.replace(t, iterations=it, scheduler=scheduler)


def _job_summary(job: training.JobPlan, t: training.JobTables) -> dict:
    """summary.json's part for one job (summary["training"] for the first;
    with several, one entry of summary["jobs"] each, with its name, start and
    analytic no-contention iteration: slowdown_vs_ideal = mean / ideal)."""
    cfg = job.config
    out = {**metrics.iteration_summary(t.iterations), **metrics.spread_summary(t.iterations),
           "architecture": cfg.architecture, "policy": cfg.policy,
           "socket_errors": t.errors.strip()}
    if cfg.straggler is not None:
        out["compute_factor_mean"] = stragglers.mean_factor(job.compute_factors)
    if t.tcp_delays is not None:
        out["tcp_delays"] = t.tcp_delays
    if t.scheduler is not None and len(t.scheduler):
        out["scheduler_state"] = str(t.scheduler["state"].iloc[-1])
    if cfg.name:
        mean = out.get("mean_iteration_s")
        out.update(name=cfg.name, job=job.index, start_s=cfg.start,
                   ideal_iteration_s=job.ideal_iteration_s,
                   slowdown_vs_ideal=(mean / job.ideal_iteration_s
                                      if mean and job.ideal_iteration_s else None))
    return out


def _empty_flow_log() -> pd.DataFrame:
    cols = ["id", "src_node", "dst_node", "size", "tos", "start_ns", "end_ns",
            "received_bytes", "timeouts", "spurious_timeouts", "timeout_wait_ns",
            "fast_retransmits", "error"]
    return pd.DataFrame({c: pd.Series(dtype="int64" if c != "error" else "object") for c in cols})


def _ideal_fct(topo: Topology, raw: pd.DataFrame) -> pd.Series:
    """size / bottleneck rate + base RTT, per flow (paths are memoised per pair)."""
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    table = None  # the ECMP table, computed once (not per pair: that grew as hosts^3)
    out = []
    for src, dst, size in zip(raw["src_node"], raw["dst_node"], raw["size"]):
        if (src, dst) not in cache:
            if table is None:
                table = routing.next_hops(topo)
            links = [topo.links[i] for i in routing.path_links(topo, src, dst, table)]
            cache[(src, dst)] = (min(l.rate_bps for l in links), 2 * sum(l.delay_s for l in links))
        rate, rtt = cache[(src, dst)]
        out.append(size * 8 / rate + rtt)
    return pd.Series(out, index=raw.index, dtype=float)


def _process_start() -> float:
    """When this process's harness started (epoch seconds): the `harness`
    program's own mark (harness.engine.memory.started_at), else when the
    process started, to a clock tick. Linux: /proc/self/stat counts from
    boot, read against CLOCK_BOOTTIME (psutil adds the boot time, which
    /proc/stat rounds to whole seconds: up to 1 s off)."""
    from harness.engine import memory

    marked = memory.started_at()
    if marked is not None:
        return marked
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age
    except (OSError, AttributeError, ValueError, IndexError):
        import psutil
        return psutil.Process().create_time()


def _peak_rss_mib() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": sys.version.split()[0]}
    for pkg in ("ddnn-harness", "ns3", "cppyy", "numpy", "pandas", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


# --------------------------------------------------------------------------
# run directory


def write_run_dir(result: Run, out_dir: Path, extra_json: dict | None = None) -> Path:
    """Write the run's files into a temporary directory, then rename it into
    place (harness.io.outdir.write_dir): a reader never sees a half-written run,
    and an existing directory is replaced only if it is empty or an earlier
    run directory. extra_json: more files ({name: data}) to write alongside,
    e.g. a sweep cell's cell.json. Sets and returns the run's `dir`."""
    result.dir = outdir.write_dir(Path(out_dir), lambda tmp: result.write_files(tmp, extra_json))
    return result.dir


def run_scenario(scenario: Scenario, progress: bool | None = False,
                 quiet: bool = False) -> Run:
    """The Python API: plan, run, and return the tables as DataFrames."""
    return execute(plan(scenario), progress=progress, quiet=quiet)
