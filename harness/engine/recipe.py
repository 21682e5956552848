"""A plan as the scenario recipe: plain text, one directive per line, that
ns-3's ScenarioRecipe (ns3-modules/scenario/scenario-recipe.h, where the
directives are listed) builds the scenario from. harness.engine.simulation hands it to
ns-3 through cppyy; the bench's native program (bench/native/main.cc) reads
it from a file: one build sequence for both, in the recipe's order.

Each concept writes its own lines: TCP defaults (harness.network.tcp), nodes and
links (harness.network.topology), queue discs (harness.network.qdisc's strategy), addresses
and routes (harness.network.routing), training jobs (their plug-ins,
harness.training), background flows (harness.traffic.background). This module puts
them in order with what belongs to the run: the RNG, the measurement, link
changes, the iteration target and the stop time.

Pure Python: no ns-3 here.
"""

from __future__ import annotations

from pathlib import Path

from harness import training
from harness.network import pfc, qdisc, rdma, routing, tcp, topology
from harness.training.common import recipe_attribute
from harness.traffic import background
from harness.traffic.services import planning as service_planning

FORMAT = "ddnn-recipe 6"   # ScenarioRecipe::FORMAT (6: services as service-app components)

# The random streams of network.loss's error models start here (a Poisson
# source's is its service's place, below 1,000).
LOSS_STREAMS = 1000

# Application classes of the utilisation tracker's ports.
APP_OTHER, APP_BACKGROUND, APP_TRAINING = 0, 1, 2


def _network_lines(p) -> list[str]:
    topo = p.topology
    lines = [f"seed {max(1, p.scenario.seed % (2**32 - 1))}", "run 1",
             *topology.recipe_lines(topo, p.scenario.network.mtu)]
    strategy = qdisc.strategy(p.network, p.classes, p.ecn, p.scenario.tcp.ecn_acks,
                              p.marking_egresses)
    lines += [strategy.recipe_line(i, side, src, dst, host=src < topo.n_hosts)
              for i, side, src, dst in topo.egresses()]
    warmup, window_end = p.run.window
    lines += pfc.recipe_lines(p.network, topo,   # after the queue discs, before addresses
                              (round(warmup * 1e9), round(window_end * 1e9)))
    lines += rdma.recipe_lines(p.scenario, p.classes, p.rdma_hosts)
    lines.append("assign")
    lines += routing.recipe_lines(topo)
    lines += [f"link-rate {link} {at_ns} {round(rate_bps)}"
              for link, at_ns, rate_bps in p.link_changes]
    # each loss its own random stream, numbered after every Poisson source's
    lines += [f"loss {link} {side} {rate!r} {LOSS_STREAMS + i}"
              for i, (link, side, rate) in enumerate(p.losses)]
    return lines


def _measurement_lines(p) -> list[str]:
    port = p.scenario.background.port
    lines = [f"utilization {round(p.run.utilization_interval * 1e9)}",
             f"app-ports {port} {port} {APP_BACKGROUND}"]
    lines += [f"track {i} {side} {a} {b}" for i, side, a, b in p.topology.egresses()]
    if p.queue_samples:   # run.queue_samples: only when asked
        start, stop = p.run.queue_sample_times()
        lines.append(f"queue-sampler {round(p.run.queue_samples.interval * 1e9)} "
                     f"{round(start * 1e9)} {round(stop * 1e9)}")
        lines += [f"sample-queue {link} {side} {a} {b} {','.join(map(str, bands)) or '-'}"
                  for link, side, a, b, bands in p.queue_samples]
    return lines


def _training_lines(p) -> list[str]:
    lines = []
    for job in p.all_jobs:   # installed in this order: ScenarioRecipe's job slots
        lines.append(f"app-ports {job.ports[0]} {job.ports[1]} {APP_TRAINING}")
        own = training.architecture(job.config.architecture).recipe(job, p.ack_tos)
        if job.config.transport == "rdma":
            # every architecture's channels make their sockets through the job
            # (TrainingJob::CreateSocket): one attribute after its `job` line
            own.insert(1, recipe_attribute("Transport", rdma.FACTORY))
        lines += own
    if lines and p.run.min_iterations:
        lines.append(f"target {p.run.min_iterations} {round(p.run.warmup * 1e9)} "
                     f"{round(p.run.cooldown * 1e9)}")
    return lines


def text(p) -> str:
    """The recipe of a plan (harness.engine.planning.Plan)."""
    sc = p.scenario
    lines = [FORMAT, f"# scenario {sc.name} digest {sc.digest()}"]
    lines += tcp.recipe_lines(p.tcp_defaults)
    lines += _network_lines(p)
    lines += _measurement_lines(p)
    lines += _training_lines(p)
    if sc.background.enabled:
        lines += background.recipe_lines(p.flows, p.background_hosts, p.background_tos,
                                         p.ack_tos, sc.background.port)
    warmup, window_end = p.run.window
    if p.services:
        lines += service_planning.recipe_lines(p.services, (round(warmup * 1e9),
                                                            round(window_end * 1e9)))
    else:
        # the run ends once the window's flows are done: the cool-down is at
        # most that (with services it lasts, so that their last requests are answered)
        lines.append(f"window {round(warmup * 1e9)} {round(window_end * 1e9)}")
    lines.append(f"stop {max(1, round(p.run.duration * 1e9))}")
    return "\n".join(lines) + "\n"


def write(p, path: Path) -> Path:
    """The recipe of a plan in a file (for bench/native/main.cc)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(p))
    return path
