"""A harness Plan as a plain-text recipe that bench/native/main.cc replays.

The recipe lists, in order, exactly the ns-3 calls harness/run.py's _Network
makes for the plan (TCP defaults, RNG, nodes, links, queue discs, addresses,
routes, utilisation tracker, training job, background flows) and the stop
time. One directive per line, tokens separated by spaces; `#` starts a
comment line. The directives and their arguments:

    default NAME VALUE                     Config::SetDefault(NAME, StringValue(VALUE))
    seed SEED / run RUN                    RngSeedManager::SetSeed / SetRun (+ ResetNextStreamIndex)
    nodes N                                TopologyBuilder::CreateNodes(N)
    link A B RATE_BPS DELAY_NS MTU         TopologyBuilder::AddLink
    prio LINK SIDE FROM TO BANDS LIMIT P0..P15
                                           QueueDiscInstaller::InstallPrio + QueueTracker::TrackPrio
    assign                                 TopologyBuilder::AssignAddresses
    host H LINK                            host H's address is side 0 of LINK
    route NODE HOST LINK                   TopologyBuilder::AddRoute
    utilization INTERVAL_NS                a LinkUtilizationTracker with that Interval
    app-ports LO HI APP                    LinkUtilizationTracker::AddApplicationPorts
    track LINK SIDE FROM TO                LinkUtilizationTracker::Track
    job-layers BYTES,.. FP_NS,.. BP_NS,..  RingAllreduceHelper::SetLayers
    job-layer-classes TOS,..               RingAllreduceHelper::SetLayerClasses
    job-buffers FIRST,.. LAST,.. BYTES,.. TOS,..
                                           RingAllreduceHelper::SetBuffers (the planned buffers)
    job-scheduler TYPEID [NAME=VALUE..]    RingAllreduceHelper::SetScheduler (the policy)
    job-attribute NAME VALUE               RingAllreduceHelper::SetJobAttribute(StringValue)
    job-install HOST..                     RingAllreduceHelper::Install (rank r on HOST r)
    flow-apps PORT                         a FlowLog and FlowAppHelper(log, PORT)
    flow-host HOST ACK_TOS LISTEN_TOS      InstallSink + InstallSender on HOST
    flow ID SRC DST SIZE TOS START_NS      FlowLog::AddFlow + the sender's AddFlow
    stop DURATION_NS                       Simulator::Stop + Run
"""

from __future__ import annotations

from pathlib import Path

from harness import qdisc, routing, schedulers
from harness.training import ring
from harness.run import APP_BACKGROUND, APP_TRAINING, Plan

FORMAT = "ddnn-recipe 1"


def _tokens_ok(value: str) -> str:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"recipe value {value!r} is empty or contains white space")
    return value


def _network_lines(p: Plan) -> list[str]:
    sc, topo = p.scenario, p.topology
    lines = [f"default {_tokens_ok(k)} {_tokens_ok(v)}" for k, v in p.tcp_defaults.items()]
    lines += [f"seed {max(1, sc.seed % (2**32 - 1))}", "run 1", f"nodes {topo.n_nodes}"]
    lines += [f"link {l.a} {l.b} {int(l.rate_bps)} {int(round(l.delay_s * 1e9))} "
              f"{sc.network.mtu}" for l in topo.links]
    strategy = qdisc.strategy(p.network)
    if not isinstance(strategy, qdisc.Prio):
        raise ValueError(f"recipe: unsupported queue-disc strategy {type(strategy).__name__}")
    for i, link in enumerate(topo.links):
        for side, (src, dst) in enumerate(((link.a, link.b), (link.b, link.a))):
            lines.append(f"prio {i} {side} {src} {dst} {strategy.bands} {strategy.band_limit} "
                         f"{strategy.priomap}")
    lines.append("assign")
    lines += [f"host {h} {topo.host_link_index(h)}" for h in range(topo.n_hosts)]
    lines += [f"route {node} {host} {link}"
              for (node, host), links in routing.next_hops(topo).items() for link in links]
    return lines


def _measurement_lines(p: Plan) -> list[str]:
    sc, topo = p.scenario, p.topology
    lines = [f"utilization {round(p.run.utilization_interval * 1e9)}",
             f"app-ports {sc.background.port} {sc.background.port} {APP_BACKGROUND}"]
    for i, link in enumerate(topo.links):
        lines.append(f"track {i} 0 {link.a} {link.b}")
        lines.append(f"track {i} 1 {link.b} {link.a}")
    return lines


def _training_lines(p: Plan) -> list[str]:
    job = p.job
    tr, prof = job.config, job.profile
    lines = [f"app-ports {job.ports[0]} {job.ports[1]} {APP_TRAINING}",
             "job-layers " + " ".join(",".join(map(str, v)) for v in (
                 list(prof.layer_bytes), [round(t * 1e6) for t in prof.fp_ms],
                 [round(t * 1e6) for t in prof.bp_ms]))]
    lines.append("job-layer-classes " + ",".join(map(str, job.layer_tos)))
    lines.append("job-buffers " + " ".join(",".join(map(str, v)) for v in
                                           ring.buffer_arguments(job.buffers, job.layer_tos)))
    type_id, attrs = schedulers.attributes(tr.policy, tr.scheduler_params, "push", job.link_bps)
    lines.append(" ".join(["job-scheduler", type_id, *map(_tokens_ok, attrs)]))
    attributes = {"Barrier": "true" if tr.barrier else "false",
                  "Port": str(tr.port), "DefaultTos": str(job.tos),
                  "AckTos": str(p.ack_tos)}
    lines += [f"job-attribute {k} {_tokens_ok(v)}" for k, v in attributes.items()]
    lines.append("job-install " + " ".join(map(str, job.hosts)))
    return lines


def _background_lines(p: Plan) -> list[str]:
    lines = [f"flow-apps {p.scenario.background.port}"]
    lines += [f"flow-host {h} {p.ack_tos} {p.background_tos}" for h in p.background_hosts]
    flows = p.flows
    tos = flows["tos"] if "tos" in flows else [p.background_tos] * len(flows)
    for row, t in zip(flows.itertuples(index=False), tos):
        lines.append(f"flow {row.id} {row.src} {row.dst} {row.size} {int(t)} {row.start_ns}")
    return lines


def recipe(p: Plan) -> str:
    """The recipe text of a plan (see the module docstring)."""
    sc = p.scenario
    if p.run.min_iterations:
        raise ValueError("recipe: run.min_iterations (a run that stops itself) is not replayed")
    lines = [FORMAT, f"# scenario {sc.name} digest {sc.digest()}"]
    lines += _network_lines(p)
    lines += _measurement_lines(p)
    if sc.training.enabled:
        lines += _training_lines(p)
    if sc.background.enabled:
        lines += _background_lines(p)
    lines.append(f"stop {max(1, round(p.run.duration * 1e9))}")
    return "\n".join(lines) + "\n"


def write_recipe(p: Plan, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(recipe(p))
    return path

