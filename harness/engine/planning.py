"""Planning one scenario: everything a run needs, computed and checked in
pure Python before ns-3 is touched (the Plan: topology and network as
simulated, the class table, TCP defaults, the background's schedule, the
jobs as their plug-ins planned them, the run's window), and what a plan
predicts of its output (output_bytes, short_window)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pandas as pd

from harness import training
from harness.config.scenario import MAX_UTILIZATION_INTERVALS, ConfigError, NetworkConfig, RunConfig, Scenario
from harness.config.units import NS3_TIME_MAX_S
from harness.engine import scaling
from harness.network import pfc, qdisc, tcp
from harness.network.topology import Topology, load_topology
from harness.traffic import background
from harness.training import stragglers


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
    losses: tuple[tuple[int, int, float], ...] = ()   # (link, receiving side, loss probability)
    # run.queue_samples: (link, side, from node, to node, bands; () = every band) per egress
    queue_samples: tuple[tuple[int, int, int, int, tuple[int, ...]], ...] = ()
    # network.ecn_profile.egresses: the (link, side) ends that mark; None: every one
    marking_egresses: frozenset[tuple[int, int]] | None = None
    services: tuple = ()   # [[service]]: a harness.traffic.services.ServicePlan each

    @property
    def all_jobs(self) -> tuple[training.JobPlan, ...]:
        """Every enabled job as planned, in installation order."""
        return self.jobs or ((self.job,) if self.job is not None else ())

    @property
    def rdma_hosts(self) -> list[int]:
        """The hosts whose RDMA stack a job or a service uses, ascending."""
        return rdma_hosts(self.all_jobs, self.services)

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
            **({"losses": [{"link": link, "side": side, "rate": rate}
                           for link, side, rate in self.losses]} if self.losses else {}),
            **({"queue_samples": [{"link": link, "side": side, "from": a, "to": b,
                                   "bands": list(bands)}
                                  for link, side, a, b, bands in self.queue_samples]}
               if self.queue_samples else {}),
            "training": self.job.resolved() if self.job is not None else dict(training.NO_JOB),
            **({"jobs": [{"name": j.config.name, "job": j.index, "start": j.config.start,
                          **j.resolved()} for j in self.jobs]} if len(self.jobs) > 1 else {}),
            **({"services": [s.resolved() for s in self.services]} if self.services else {}),
        }


def plan(scenario: Scenario) -> Plan:
    k = scenario.scale
    reference_topo = load_topology(scenario.topology)
    topo = scaling.topology(reference_topo, k)
    network = scaling.network(scenario.network, k)
    classes = qdisc.class_table(scenario.network)
    qdisc.check_scaled_marking(network, classes, k)
    pfc.check(network, topo, k)
    if scenario.tcp.segment_size + tcp.DATA_HEADER_BYTES > scenario.network.mtu:
        raise ConfigError("tcp.segment_size", f"{scenario.tcp.segment_size} B plus the TCP/IP "
                          f"headers of a data segment as ns-3 sends it ({tcp.DATA_HEADER_BYTES} "
                          f"B) exceeds network.mtu {scenario.network.mtu} B: at most "
                          f"{scenario.network.mtu - tcp.DATA_HEADER_BYTES} B")
    if k > 1 and min(link.rate_bps for link in topo.links) < 1:
        raise ConfigError("scale", f"{k} leaves a link below 1 bit/s, ns-3's resolution")
    # TCP timers from the network as written: a scaled-down one has the same
    # queueing times (harness.engine.scaling), and keeps them exactly.
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
    extra["losses"] = _losses(scenario.network.loss, topo)
    extra["queue_samples"] = _queue_samples(scenario.run.queue_samples, topo, classes)
    extra["marking_egresses"] = _marking_egresses(network.ecn_profile, topo)
    _check_sample_memory(extra["queue_samples"], run, classes.bands)   # the run as simulated
    if scenario.services:
        from harness.traffic.services import planning as service_planning

        _check_ports(scenario, jobs)

        def cdf(name: str, where: str):   # a [[service]]'s size CDF, scaled as the rest
            return scaling.cdf(background.load_cdf(name, where), k)
        extra["services"] = service_planning.plan(scenario, topo, classes, run.duration, cdf)
    _check_dctcp_marks(scenario, classes, extra.get("background_tos"), jobs)
    _check_rdma(scenario, topo, classes, jobs, extra.get("services", ()))

    ecn = tcp.ecn_on(scenario.tcp, scenario.network)
    return Plan(scenario, topo, network, run, classes, worst,
                tcp.attribute_defaults(scenario.tcp, worst, ecn), ecn=ecn, **extra)


def rdma_hosts(jobs: tuple, services: tuple) -> list[int]:
    """The hosts of every job whose transport is RDMA and of every service
    that runs over it (its kind's rdma_hosts), ascending."""
    from harness.config import registry

    hosts = {h for job in jobs if job.config.transport == "rdma" for h in job.all_hosts}
    hosts |= {h for s in services for h in registry.service_kind(s.kind).rdma_hosts(s)}
    return sorted(hosts)


def _check_rdma(scenario: Scenario, topo: Topology, classes, jobs: tuple,
                services: tuple) -> None:
    """[rdma] against the run's RDMA jobs and services as simulated: a CNP
    class the queues have, a minimum rate below every host link's (both / scale)."""
    hosts = rdma_hosts(jobs, services)
    if not hosts:
        return
    cfg, k = scenario.rdma, scenario.scale
    if cfg.cnp_class is not None:
        classes.band(cfg.cnp_class, "rdma.cnp_class")
    slowest = min(topo.host_link(h).rate_bps for h in hosts)
    if cfg.min_rate / k >= slowest:
        raise ConfigError("rdma.min_rate", f"{cfg.min_rate:.4g} bit/s is not below the slowest "
                          f"host link of RDMA traffic ({slowest * k:.4g} bit/s as written): a "
                          "cut could not lower the rate; allowed: below it")
    for name in ("additive_increase", "hyper_increase"):
        if getattr(cfg, name) / k > slowest:
            raise ConfigError(f"rdma.{name}", f"{getattr(cfg, name):.4g} bit/s is above the "
                              f"slowest host link of RDMA traffic ({slowest * k:.4g} bit/s as "
                              "written): one step would jump past the line rate; allowed: "
                              "at most it")


def _check_ports(scenario: Scenario, jobs: tuple) -> None:
    """A service's ports apart from the background's (its sinks listen on
    every background host) and the jobs' (two listeners on one port abort
    ns-3 after the run has started); the jobs' among themselves and against
    the background are their plug-ins' checks, the services' among
    themselves the schema's."""
    from harness.config import registry

    others = []   # (field, ports, what listens)
    if scenario.background.enabled:
        port = scenario.background.port
        others.append(("background.port", range(port, port + 1), "the background's flow sinks"))
    for job in jobs:
        lo, hi = job.ports
        others.append((f"training[{job.index}].port" if len(jobs) > 1 else "training.port",
                       range(lo, hi + 1), f"training job {job.config.name or job.index}"))
    for i, s in enumerate(scenario.services):
        field, ports = f"service[{i}].port", registry.service_kind(s.kind).ports(s, i)
        for other, theirs, whose in others:
            common = sorted(set(ports) & set(theirs))
            if common:
                span = str(theirs[0]) if len(theirs) == 1 else f"{theirs[0]}..{theirs[-1]}"
                raise ConfigError(field, f"port {common[0]} is taken by {whose} ({other}: "
                                  f"{span}); give each its own port")


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
    marking = qdisc.marking_bands(scenario.network, classes)
    names = classes.class_of_tos()
    for tos, who in used.items():
        band = classes.band_tos.index(tos)
        if not marking[band]:
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


def _losses(loss, topo: Topology) -> tuple[tuple[int, int, float], ...]:
    """(link index, receiving side, probability) for network.loss: the
    devices that receive over its hosts' links in its direction (a host is
    side 0 of its link)."""
    if loss is None:
        return ()
    for j, h in enumerate(loss.hosts):
        topo.check_host(h, f"network.loss.hosts[{j}]")
    sides = {"to_host": (0,), "from_host": (1,), "both": (0, 1)}[loss.direction]
    return tuple((topo.host_link_index(h), side, loss.rate)
                 for h in (loss.hosts or range(topo.n_hosts)) for side in sides)


def _queue_samples(q, topo: Topology, classes) -> tuple:
    """(link, side, from node, to node, bands) for run.queue_samples: the
    egresses of its hosts' links in its direction (side 0 of a host's link
    is the host's egress, side 1 the switch's towards the host), the bands
    of its classes (() = every band)."""
    if q is None:
        return ()
    for j, h in enumerate(q.hosts):
        topo.check_host(h, f"run.queue_samples.hosts[{j}]")
    bands = tuple(sorted({classes.band(name, f"run.queue_samples.classes[{j}]")
                          for j, name in enumerate(q.classes)}))
    sides = {"to_host": (1,), "from_host": (0,), "both": (0, 1)}[q.direction]
    out = []
    for h in q.hosts or (() if q.egresses else range(topo.n_hosts)):
        i = topo.host_link_index(h)
        out += [(*topo.egress(i, side), bands) for side in sides]
    out += [(i, side, a, b, bands) for i, side, a, b in
            _sampled_egresses(q.egresses, topo, "run.queue_samples.egresses")
            if (i, side, a, b, bands) not in out]
    return tuple(out)


#: what the queue sampler may hold in memory over a run, all egresses together
#: (it keeps every sample until the run ends: 8 bytes of time and 8 per band)
QUEUE_SAMPLE_BUDGET_BYTES = 2 * 1024**3


def _check_sample_memory(sampled: tuple, run: RunConfig, bands: int) -> None:
    """The sampler's memory over the whole run, every egress and band
    together, within QUEUE_SAMPLE_BUDGET_BYTES (the per-egress limit of the
    schema let hosts x directions x bands multiply past memory)."""
    if not sampled:
        return
    q = run.queue_samples
    start, stop = run.queue_sample_times()
    samples = (stop - start) / q.interval + 1
    size = sum(samples * (8 + 8 * (len(b) or bands)) for *_, b in sampled)
    if size > QUEUE_SAMPLE_BUDGET_BYTES:
        least = q.interval * size / QUEUE_SAMPLE_BUDGET_BYTES
        raise ConfigError("run.queue_samples.interval", f"{len(sampled)} egresses sampled "
                          f"every {q.interval:g} s for {stop - start:g} s would hold "
                          f"{size / 1024**3:.1f} GiB in memory, more than the "
                          f"{QUEUE_SAMPLE_BUDGET_BYTES / 1024**3:g} GiB the sampler may; use an "
                          f"interval of at least {least:.3g} s, or sample fewer egresses "
                          "(hosts, egresses, direction) or bands (classes)")


def _sampled_egresses(egresses, topo: Topology, field: str) -> list[tuple[int, int, int, int]]:
    """(link, side, from node, to node) of the egresses a setting (`field`)
    names: the [from, to] pairs named, or "fabric", every switch-to-switch
    egress."""
    if egresses == "fabric":
        return [e for e in topo.egresses() if e[2] >= topo.n_hosts and e[3] >= topo.n_hosts]
    names = {topo.node_name(n): n for n in range(topo.n_nodes)}
    out = []
    for j, pair in enumerate(egresses):
        where = f"{field}[{j}]"
        for name in pair:
            if name not in names:
                raise ConfigError(where, f"no node {name!r}; the topology's nodes are h0.."
                                  f"h{topo.n_hosts - 1} and s0..s{topo.n_switches - 1}")
        a, b = names[pair[0]], names[pair[1]]
        link = next(((i, l) for i, l in enumerate(topo.links) if {l.a, l.b} == {a, b}), None)
        if link is None:
            raise ConfigError(where, f"no link joins {pair[0]} and {pair[1]}; an egress is "
                              "one end of a link, towards its other end")
        i, l = link
        out.append(topo.egress(i, 0 if l.a == a else 1))
    return out


def _marking_egresses(profile, topo: Topology) -> frozenset[tuple[int, int]] | None:
    """network.ecn_profile.egresses as the (link, side) ends that mark; None
    where every egress does (or there is no profile)."""
    if profile is None or profile.egresses == "all":
        return None
    if profile.egresses == "switches":
        chosen = [e for e in topo.egresses() if e[2] >= topo.n_hosts]
    elif profile.egresses == "hosts":
        chosen = [e for e in topo.egresses() if e[2] < topo.n_hosts]
    else:
        chosen = _sampled_egresses(profile.egresses, topo, "network.ecn_profile.egresses")
    return frozenset((link, side) for link, side, *_ in chosen)


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


def output_bytes(p: Plan) -> int:
    """A rough (generous) size of the run directory p writes, for the free-space
    check made before the run (harness.io.outdir.check_space): JSON files and
    Parquet overheads, a row per background flow, per link, interval and
    class of the utilisation, and per worker, iteration and layer of a
    training job's compute and transfer tables (measured: ~7-60 B a row)."""
    duration = p.expected_duration
    intervals = max(1.0, duration / p.run.utilization_interval)
    rows = len(p.flows) * 4 + len(p.topology.links) * 2 * intervals * 2
    if p.services:
        from harness.traffic.services import planning as service_planning
        rows += service_planning.table_rows(p.services, duration)
    for job in p.all_jobs:
        iterations = duration * 1e3 / max(job.profile.compute_ms, job.network_ms, 1e-3)
        workers = len(job.hosts)
        rows += iterations * workers * job.profile.n_layers * (2 + 2 * workers)
    return int(128 * 1024 + 8 * rows)
