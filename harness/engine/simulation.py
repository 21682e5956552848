"""One scenario end to end: plan (pure Python, all validation), build and run
in ns-3, collect the tables, write the run directory atomically.

ns-3 objects never leave this module: the Run it returns (harness.analysis.tables, the
one type for a run's tables in memory or on disk) holds DataFrames and dicts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness import training
from harness.analysis import metrics
from harness.engine import memory, recipe
from harness.network import qdisc, routing, scaling, tcp
from harness.io import outdir
from harness.traffic import background
from harness.config.scenario import MAX_UTILIZATION_INTERVALS, ConfigError, NetworkConfig, RunConfig, Scenario
from harness.training import stragglers
from harness.config.units import NS3_TIME_MAX_S
from harness.engine.recipe import APP_BACKGROUND, APP_OTHER, APP_TRAINING
from harness.analysis.tables import Run, read_csv
from harness.network.topology import Topology, load_topology


@dataclass(frozen=True)
class Plan:
    """Everything a run needs, checked, before ns-3 is touched."""

    scenario: Scenario
    topology: Topology              # as simulated: scaled by scenario.scale
    network: NetworkConfig          # as simulated: band limits scaled
    run: RunConfig                  # as simulated: long enough for run.min_iterations
    classes: qdisc.ClassTable
    worst_rtt: float
    tcp_defaults: dict[str, str]
    background_hosts: tuple[int, ...] = ()
    background_rate: float = 0.0
    background_load: float = 0.0
    background_tos: int = 0
    ack_tos: int = -1              # -1: ACKs in the class of their data
    ecn: bool = False              # TCP negotiates ECN; hosts mark data ECN-capable
    flows: pd.DataFrame = field(default_factory=pd.DataFrame)
    job: training.JobPlan | None = None  # the training job as its plug-in planned it
    # [[training]]: every enabled job as planned (`job` is the first of them)
    jobs: tuple[training.JobPlan, ...] = ()
    background_steps: tuple[tuple[float, float], ...] = ()  # (time s, flows/s per host)
    link_changes: tuple[tuple[int, int, float], ...] = ()   # (link, time ns, bit/s as simulated)

    @property
    def all_jobs(self) -> tuple[training.JobPlan, ...]:
        """Every enabled job as planned, in installation order."""
        return self.jobs or ((self.job,) if self.job is not None else ())

    @property
    def architecture(self) -> training.Architecture | None:
        """The plug-in of the training job (None without one)."""
        return None if self.job is None else training.architecture(self.job.config.architecture)

    @property
    def ideal_iteration_s(self) -> float | None:
        """The job's analytic no-contention iteration (None without a job)."""
        return None if self.job is None else self.job.ideal_iteration_s

    @property
    def expected_duration(self) -> float:
        """Simulated seconds the run is expected to last: run.duration, or,
        with run.min_iterations, its N + 1 iterations at the job's
        no-contention pace (the run stops itself then; duration is the cap)."""
        if self.run.min_iterations and self.ideal_iteration_s:
            return min(self.run.duration, self.run.warmup + self.run.cooldown
                       + (self.run.min_iterations + 1) * self.ideal_iteration_s)
        return self.run.duration

    def _queue_settings(self) -> dict:
        """The buffer models as simulated (sizes scaled, default filled in);
        drr quanta and ECN thresholds, when used."""
        out: dict = {"buffer": {
            egress: qdisc.buffer_settings(buf, self.network, self.classes, f"network.{key}")
            for egress, key, buf in (("switches", "buffer", self.network.buffer),
                                     ("hosts", "host_buffer", self.network.hosts_buffer))}}
        if self.network.qdisc == "drr":
            out["drr_quanta_bytes"] = qdisc.drr_quanta(self.network, self.classes)
        if self.network.marks_ecn:
            out["ecn_threshold_packets"] = qdisc.band_ecn_thresholds(self.network, self.classes)
        return out

    def resolved(self) -> dict:
        """The scenario plus what was derived from it, for the run directory."""
        return {
            "scenario": self.scenario.to_dict(),
            "digest": self.scenario.digest(),
            "topology": {"kind": self.topology.kind, "hosts": self.topology.n_hosts,
                         "switches": self.topology.n_switches,
                         "links": len(self.topology.links),
                         "params": {k: v for k, v in self.topology.params.items()}},
            "classes": {"qdisc": self.classes.qdisc, "bands": self.classes.bands,
                        "class_band": self.classes.classes,
                        "band_tos": list(self.classes.band_tos)},
            "scale": self.scenario.scale,
            "run": {"duration": self.run.duration, "warmup": self.run.warmup,
                    "cooldown": self.run.cooldown, "min_iterations": self.run.min_iterations},
            "band_limit_packets": self.network.band_limit_packets,
            **self._queue_settings(),
            "worst_case_rtt_s": self.worst_rtt,
            "tcp_attributes": self.tcp_defaults,
            "background": {"hosts": list(self.background_hosts),
                           "rate_per_host": self.background_rate,
                           "offered_load": self.background_load,
                           "steps": [list(s) for s in self.background_steps],
                           "flows": int(len(self.flows))},
            "link_changes": [{"link": link, "at_ns": at, "rate_bps": bps}
                             for link, at, bps in self.link_changes],
            "training": self.job.resolved() if self.job is not None else dict(training.NO_JOB),
            **({"jobs": [{"name": j.config.name, "job": j.index, "start": j.config.start,
                          **j.resolved()} for j in self.jobs]} if len(self.jobs) > 1 else {}),
        }


def plan(scenario: Scenario) -> Plan:
    k = scenario.scale
    reference_topo = load_topology(scenario.topology)
    topo = scaling.topology(reference_topo, k)
    network = scaling.network(scenario.network, k)
    classes = qdisc.class_table(scenario.network)
    qdisc.check_scaled_marking(network, classes, k)
    if scenario.tcp.segment_size + 60 > scenario.network.mtu:
        raise ConfigError("tcp.segment_size", f"{scenario.tcp.segment_size} B plus TCP/IP "
                          f"headers (60 B) exceeds network.mtu {scenario.network.mtu} B")
    if k > 1 and min(link.rate_bps for link in topo.links) < 1:
        raise ConfigError("scale", f"{k} leaves a link below 1 bit/s, ns-3's resolution")
    # TCP timers from the network as written: a scaled-down one has the same
    # queueing times (harness.network.scaling), and keeps them exactly.
    worst = tcp.worst_case_rtt(reference_topo, scenario.network, classes.bands)
    extra: dict = {}
    jobs = _plan_jobs(scenario, topo, classes, k)
    if jobs:
        extra.update(job=jobs[0], jobs=jobs)
    run = _run_window(scenario.run, jobs[0].ideal_iteration_s if jobs else None)
    _check_run(run, scenario, topo)
    if any(job.config.straggler is not None for job in jobs):
        extra["jobs"] = jobs = tuple(dataclasses.replace(job, compute_factors=stragglers.plan(
            job.config.straggler, len(job.hosts), job.profile.compute_ms / 1e3, run.duration,
            scenario.seed, job.index)) for job in jobs)
        extra["job"] = jobs[0]
    bg = scenario.background
    if scenario.network.ack_class != "data":
        extra["ack_tos"] = classes.tos(scenario.network.ack_class, "network.ack_class")
    if bg.enabled:
        hosts = bg.hosts or tuple(range(topo.n_hosts))
        for i, h in enumerate(hosts):
            topo.check_host(h, f"background.hosts[{i}]")
        cdf = scaling.cdf(background.load_cdf(bg.workload), k)
        host_bps = min(topo.host_link(h).rate_bps for h in hosts)
        rate = background.rate_per_host(bg, cdf, host_bps)
        steps = background.step_rates(bg, cdf, host_bps)
        # named after the rate that is largest: the base or a step's
        fields = ["background.rate" if bg.rate is not None else "background.load",
                  *(f"background.steps[{i}].{'rate' if st.rate is not None else 'load'}"
                    for i, st in enumerate(bg.steps))]
        rates = [rate, *(r for _, r in steps)]
        peak = max(range(len(rates)), key=rates.__getitem__)
        background.check_flow_count(rates[peak], len(hosts), run.duration, fields[peak])
        extra.update(
            background_hosts=hosts, background_rate=rate,
            background_load=background.offered_load(rate, cdf, host_bps),
            background_tos=classes.tos(bg.traffic_class, "background.class"),
            background_steps=steps,
            flows=background.schedule(hosts, rate, run.duration, cdf, scenario.seed, steps))
    extra["link_changes"] = _link_changes(scenario.network.link_changes, topo, k)
    _check_dctcp_marks(scenario, classes, extra.get("background_tos"), jobs)

    ecn = tcp.ecn_on(scenario.tcp, scenario.network)
    return Plan(scenario, topo, network, run, classes, worst,
                tcp.attribute_defaults(scenario.tcp, worst, ecn), ecn=ecn, **extra)


def _check_dctcp_marks(scenario: Scenario, classes, background_tos: int | None,
                       jobs: tuple) -> None:
    """DCTCP's only congestion signal is the ECN mark: every band its traffic
    uses must mark (a threshold on some class none of the run's traffic uses
    leaves it without one). config checks that something marks at all."""
    if scenario.tcp.congestion_control != "dctcp":
        return
    used: dict[int, str] = {}
    if background_tos is not None:
        used.setdefault(background_tos, "background")
    for job in jobs:
        for tos in sorted(job.tos_used()):
            used.setdefault(tos, f"training job {job.index}" if len(jobs) > 1 else "training")
    thresholds = qdisc.band_ecn_thresholds(scenario.network, classes)
    names = classes.class_of_tos()
    for tos, who in used.items():
        band = classes.band_tos.index(tos)
        if thresholds[band] == 0:
            name = names.get(tos, f"band {band}")
            raise ConfigError("network.ecn_threshold", f"tcp.congestion_control = \"dctcp\" "
                              f"but class {name!r} (band {band}), which the {who} traffic "
                              f"uses, does not mark ECN: DCTCP would run there without its "
                              f"congestion signal; give it a threshold, e.g. {{ {name} = 20 }}, "
                              "or one threshold for every band (e.g. 20)")


def _plan_jobs(scenario: Scenario, topo: Topology, classes, k: int) -> tuple:
    """Every enabled job, placed (harness.training.placement) and planned
    by its plug-in; errors name the job (training[1].hosts) when there are
    several."""
    from harness.config.scenario import job_fields
    from harness.training import placement

    n = len(scenario.jobs)
    if sum(cfg.enabled for cfg in scenario.jobs) > 1 and scenario.run.min_iterations:
        raise ConfigError("run.min_iterations", "counts one job's iterations; with several "
                          "jobs give run.duration instead")
    # every job is placed, enabled or not: a job alone keeps the hosts it has beside the others
    placed = placement.place([(i, scaling.training(cfg, k)) for i, cfg in
                              enumerate(scenario.jobs)], topo, n)
    planned = []
    for i, cfg in enumerate(placed):
        if not cfg.enabled:
            continue
        with job_fields(i, n):
            job = training.architecture(cfg.architecture).plan(
                cfg, topo, classes, scenario.background, k)
        planned.append((i, dataclasses.replace(job, index=i)))
    placement.check_apart(planned, n)
    return tuple(job for _, job in planned)


def _check_run(run: RunConfig, scenario: Scenario, topo: Topology) -> None:
    """The run as simulated (min_iterations may lengthen it, scale slows the
    links) against what ns-3 and the utilisation tracker take."""
    if run.duration > NS3_TIME_MAX_S:
        raise ConfigError("run.min_iterations", f"{run.min_iterations} iterations need "
                          f"{run.duration:.3g} s, beyond ns-3's time range "
                          f"({NS3_TIME_MAX_S:.3g} s)")
    interval = run.utilization_interval
    if run.duration / interval > MAX_UTILIZATION_INTERVALS:
        raise ConfigError("run.utilization_interval", f"{run.duration:g} s in intervals of "
                          f"{interval:g} s are more than the utilisation tracker's "
                          f"{MAX_UTILIZATION_INTERVALS:,} intervals; use at least "
                          f"{run.duration / MAX_UTILIZATION_INTERVALS:.3g} s")
    # The tracker counts a packet in the interval its transmission starts: an
    # interval shorter than one packet's time on a link shows more than 100 %.
    frame_s = max((scenario.network.mtu + tcp.PPP_HEADER) * 8 / link.rate_bps
                  for link in topo.links)
    if interval < frame_s:
        raise ConfigError("run.utilization_interval", f"{interval:g} s is shorter than one "
                          f"{scenario.network.mtu} B packet on the slowest link "
                          f"({frame_s:.3g} s), which would show as more than 100 % "
                          f"utilisation; use at least {frame_s:.3g} s")


#: run.min_iterations: a job this many times slower than its no-contention
#: pace measures fewer iterations than asked before the run's cap. Measured:
#: training in the low band at R = 2 with 25 % background runs at ~5x its
#: pace under a shared buffer (quick's setting), so 4 left it 3 iterations.
STALL_FACTOR = 8.0


def _link_changes(changes, topo: Topology, k: int) -> tuple[tuple[int, int, float], ...]:
    """(link index, time ns, rate as simulated) for every link each change
    names: its hosts' links, or every link of the topology."""
    out = []
    for i, change in enumerate(changes):
        for j, h in enumerate(change.hosts):
            topo.check_host(h, f"network.link_changes[{i}].hosts[{j}]")
        links = ([topo.host_link_index(h) for h in change.hosts] if change.hosts
                 else range(len(topo.links)))
        if round(change.rate_bps / k) < 1:  # ns-3 would abort on a 0 bit/s link
            raise ConfigError(f"network.link_changes[{i}].rate", f"scale = {k} makes "
                              f"{change.rate_bps:g} bit/s {change.rate_bps / k:.3g} bit/s as "
                              "simulated, below ns-3's 1 bit/s; raise the rate or lower scale")
        out += [(link, round(change.at * 1e9), change.rate_bps / k) for link in links]
    return tuple(out)


def _run_window(run: RunConfig, iteration_s: float | None) -> RunConfig:
    """The run as simulated. With run.min_iterations = N the run ends once
    every worker has completed N iterations that started after warm-up (then
    the cool-down; the job stops the simulator, execute() measures up to
    there), and `duration` is the cap: lengthened, if shorter, to N + 1
    iterations (the one under way at warm-up) at STALL_FACTOR x the job's
    no-contention pace."""
    if not run.min_iterations or iteration_s is None:
        return run
    cap = run.warmup + (run.min_iterations + 1) * iteration_s * STALL_FACTOR + run.cooldown
    return run.model_copy(update={"duration": max(run.duration, round(cap, 6))})


def short_window(p: Plan) -> ConfigError | None:
    """Why the run cannot measure one training iteration, or None: a job's
    measurement window (iterations starting in [run.warmup, run.duration -
    run.cooldown], from the job's start) shorter than one iteration at its
    no-contention pace (the analytic model, the fastest it can go), so
    that at most one iteration, by luck of phase, and usually none is measured
    (the cell ends `stalled`). With run.min_iterations the run is lengthened
    to measure them (_run_window): never short. The CLI and the API refuse
    such a run unless told to run it anyway (--allow-short, allow_short=True)."""
    if p.run.min_iterations:
        return None
    end = p.run.duration - p.run.cooldown
    several = len(p.all_jobs) > 1
    for job in p.all_jobs:
        pace = job.ideal_iteration_s
        begin = max(p.run.warmup, job.config.start)
        if not pace or end - begin >= pace:
            continue
        who = f" of job {job.config.name!r}" if several else ""
        need = p.run.warmup + p.run.cooldown + pace + max(0.0, job.config.start - p.run.warmup)
        return ConfigError("run.duration", (
            f"the measurement window{who} [{begin:g}, {end:g}] s ({max(0.0, end - begin):.3g} s) "
            f"is shorter than one training iteration at its no-contention pace "
            f"({pace * 1e3:.3g} ms): no iteration can be measured reliably; set run.duration "
            f">= {_round_up(need)} s, shorten run.warmup or run.cooldown, lower training.ratio, "
            "or set run.min_iterations (the run then lasts until they are measured)"))
    return None


def _round_up(seconds: float) -> str:
    """`seconds` rounded up to 3 significant digits, as text."""
    import math

    digits = 3 - int(math.floor(math.log10(abs(seconds)))) - 1 if seconds > 0 else 3
    return f"{math.ceil(seconds * 10**digits - 1e-9) / 10**digits:g}"


# --------------------------------------------------------------------------
# ns-3


class _Network:
    """The ns-3 side of one run (lives only inside execute()): the scenario
    built by ns-3's ScenarioRecipe from the plan's recipe (harness.engine.recipe)."""

    def __init__(self, ns, p: Plan):
        self.recipe = ns.CreateObject["ns3::ScenarioRecipe"]()
        self.recipe.Apply(recipe.text(p))
        self.builder = self.recipe.GetTopology()
        self.host_addresses = [self.recipe.GetHostAddress(h).Get()
                               for h in range(p.topology.n_hosts)]
        self.queues = self.recipe.GetQueueTracker()
        self.utilization = self.recipe.GetUtilizationTracker()
        self.jobs = [training.architecture(job.config.architecture).installed(self.recipe, slot)
                     for slot, job in enumerate(p.all_jobs)]
        self.job = self.jobs[0] if self.jobs else None
        self.flow_log = self.recipe.GetFlowLog() if p.scenario.background.enabled else None


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
        sim.Stop(ns.NanoSeconds(slice_ns))
        sim.Run()
        wall = time.perf_counter() - t0
        new_now_ns, new_events = sim.Now().GetNanoSeconds(), sim.GetEventCount()
        slices += new_now_ns == now_ns + slice_ns   # else the job's stop ended Run first
        if job is not None and reached_ns < 0 and job.GetTargetReachedNs() >= 0:
            reached_ns = job.GetTargetReachedNs()
            end_ns = min(end_ns, reached_ns + round(run.cooldown * 1e9))
        if recipe is not None and recipe.HasEndedEarly():
            end_ns = new_now_ns
        if bar is not None:
            bar.set_postfix_str(f"{(new_events - events) / max(wall, 1e-9):,.0f} ev/s",
                                refresh=False)
            bar.update((new_now_ns - now_ns) / 1e9)
        now_ns, events = new_now_ns, new_events
        # aim each slice at ~0.5 s of wall time
        step = step * min(4.0, max(0.25, 0.5 / max(wall, 1e-4)))
    if bar is not None:
        bar.close()
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
    job_tables = None
    if net.job is not None:
        job_tables = [training.architecture(job.config.architecture).collect(
            ns_job, job, p.classes.class_of_tos())
            for ns_job, job in zip(net.jobs, p.all_jobs)]
        job_tables = job_tables[0] if len(job_tables) == 1 else job_tables
    ns.Simulator.Destroy()
    del net

    result = collect(p, raw_flows, raw_queues, raw_util, timing, job_tables)
    result.manifest.update(startup_s=startup_s, network_build_s=network_build_s,
                           run_wall_s=time.time() - started,
                           simulation_cpu_s=timing["cpu_s"], peak_rss_mib=_peak_rss_mib(),
                           tcp_fastpath=ns3.tcp_fastpath().report(),
                           heap_huge_pages=memory.heap_on_huge_pages())
    return result


def collect(p: Plan, raw_flows, raw_queues, raw_util, timing: dict,
            job_tables: training.JobTables | None = None) -> Run:
    """Turn the raw C++ tables into the run's tables, summary and manifest."""
    sc, topo = p.scenario, p.topology
    tos_class = p.classes.class_of_tos()
    if raw_flows is not None:
        ideal = _ideal_fct(topo, raw_flows)
        flows = metrics.flow_table(raw_flows, timing["window"], ideal, tos_class, sc.scale)
    else:
        flows = metrics.flow_table(_empty_flow_log(), (0, 0), pd.Series(dtype=float), tos_class)
    queues = raw_queues.assign(traffic_class=raw_queues["band"].map(
        {b: ",".join(n for n, bb in p.classes.classes.items() if bb == b)
         for b in range(p.classes.bands)}))
    util = metrics.utilization_table(
        raw_util, p.run.utilization_interval, {i: l.rate_bps for i, l in enumerate(topo.links)},
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
        "queues": metrics.band_totals(queues).to_dict(orient="records"),
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
               compute=compute, scheduler=scheduler, plan=p)


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
            "received_bytes", "error"]
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
    """When this process started (epoch seconds), to a clock tick. Linux:
    /proc/self/stat counts from boot, read against CLOCK_BOOTTIME (psutil adds
    the boot time, which /proc/stat rounds to whole seconds: up to 1 s off)."""
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


def output_bytes(p: Plan) -> int:
    """A rough (generous) size of the run directory p writes, for the free-space
    check made before the run (harness.io.outdir.check_space): JSON files and
    Parquet overheads, a row per background flow, per link, interval and
    class of the utilisation, and per worker, iteration and layer of a
    training job's compute and transfer tables (measured: ~7-60 B a row)."""
    duration = p.expected_duration
    intervals = max(1.0, duration / p.run.utilization_interval)
    rows = len(p.flows) * 4 + len(p.topology.links) * 2 * intervals * 2
    for job in p.all_jobs:
        iterations = duration * 1e3 / max(job.profile.compute_ms, job.network_ms, 1e-3)
        workers = len(job.hosts)
        rows += iterations * workers * job.profile.n_layers * (2 + 2 * workers)
    return int(128 * 1024 + 8 * rows)


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
