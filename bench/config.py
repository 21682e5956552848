"""What each bench section runs, in the full and the --quick setting."""

from __future__ import annotations

from dataclasses import dataclass

SECTIONS = ("overhead", "startup", "memory", "sweep", "speed", "scaling", "references")


@dataclass(frozen=True)
class ScenarioRun:
    """A `harness run` invocation: scenario (None: the built-in default) and --set values."""

    label: str
    scenario: str | None
    overrides: tuple[str, ...] = ()

    def args(self) -> list[str]:
        out = [self.scenario] if self.scenario else []
        for value in self.overrides:
            out += ["--set", value]
        return out


@dataclass(frozen=True)
class BenchConfig:
    quick: bool
    reps: int                          # A/B pairs (overhead) and warm start-ups
    overhead: ScenarioRun              # the timed scenario, ~10 s of wall time
    check: ScenarioRun | None          # one more agreement check (training + background)
    callgrind: ScenarioRun | None      # exact phase instructions under callgrind (slow)
    startup: ScenarioRun               # a tiny run: start-up is what it measures
    cold_start: bool                   # also a start-up with an empty cache
    sweep_duration: float              # simulated seconds per sweep cell
    sweep_points: int                  # cells = points x arms (same, low)
    speed: tuple[ScenarioRun, ...]     # default, default with jumbo frames
    speed_reps: int                    # repetitions of the default and jumbo runs
    thesis_cell: ScenarioRun           # the reference cell, run with and without the TCP fast path
    memory: ScenarioRun                # the run whose peak RSS is reported
    scaling_hosts: tuple[int, ...]     # leaf-spine fabric sizes, in hosts (scaling_run)
    # simulated seconds [from, to) of each size counted under callgrind
    # (--scaling-callgrind; slow: ~45 minutes at 512 hosts), or None
    scaling_callgrind_window: tuple[float, float] | None = None
    # references: the checks to run (empty: all of references.toml), and
    # whether only their cheap points (--cheap; --quick implies it)
    references: tuple[str, ...] = ()
    references_cheap: bool = False
    # a training cell over TCP, run again with training.transport = "rdma"
    rdma_twin: ScenarioRun | None = None


def _window(duration: float, margin: float) -> tuple[str, ...]:
    return (f"run.duration={duration:g}", f"run.warmup={margin:g}", f"run.cooldown={margin:g}")


TRAINING = ("training.enabled=true", "training.workers=4",
            "training.profile=resnet50-like-2MB", "training.ratio=1")
THESIS_CELL = ("training.ratio=4", "background.rate=92")
#: The RDMA twin: a 4-worker ring of the 2 MB profile alone on the default ToR
#: (docs/model/lossless.md's cost figures), over TCP (as given) and over RDMA.
TWIN = ("background.enabled=false", "training.enabled=true", "training.workers=4",
        "training.profile=resnet50-like-2MB")


# scaling: one scenario on leaf-spine fabrics of growing size (issue 27): 4
# spines at 40 Gbit/s, 16 hosts per leaf at 10 Gbit/s, web-search background
# at 20 % load; only the number of leaves changes
SCALING_HOSTS = (32, 128, 512, 1024)
SCALING_HOSTS_PER_LEAF = 16
# after warm-up, 3 ms of the 60 (5.1 M events at 512 hosts, 0.32 M at 32)
SCALING_CALLGRIND_WINDOW = (0.03, 0.033)
SCALING_FABRIC = ("topology.file=leaf-spine", "topology.spines=4",
                  f"topology.hosts_per_leaf={SCALING_HOSTS_PER_LEAF}",
                  "topology.fabric_link_rate=40Gbps", "background.load=0.2")


def scaling_run(hosts: int) -> ScenarioRun:
    """The scaling scenario with `hosts` hosts (a multiple of 16, >= 32)."""
    leaves = hosts // SCALING_HOSTS_PER_LEAF
    return ScenarioRun(f"leaf-spine-{hosts}-hosts", None,
                       SCALING_FABRIC + (f"topology.leaves={leaves}",) + _window(0.06, 0.01))


def check_scaling_hosts(value: str) -> tuple[int, ...]:
    """--scaling-hosts: comma-separated host counts, each a multiple of 16 >= 32."""
    try:
        sizes = tuple(int(v) for v in value.split(","))
    except ValueError:
        sizes = ()
    if not sizes or any(h < 2 * SCALING_HOSTS_PER_LEAF or h % SCALING_HOSTS_PER_LEAF
                        for h in sizes):
        raise ValueError(f"--scaling-hosts: expected comma-separated host counts, each a "
                         f"multiple of {SCALING_HOSTS_PER_LEAF} and >= "
                         f"{2 * SCALING_HOSTS_PER_LEAF} (e.g. 32,128); got {value!r}")
    return sizes


def full() -> BenchConfig:
    default = ScenarioRun("default", None)
    return BenchConfig(
        quick=False, reps=5,
        # ~10 s of native simulation (the default scenario runs ~0.35 simulated
        # s per wall s with the TCP fast path; 0.4 s took as long before it)
        overhead=ScenarioRun("default-3.5s", None, _window(3.5, 0.25)),
        check=ScenarioRun("default-training-0.1s", None, _window(0.1, 0.01) + TRAINING),
        callgrind=ScenarioRun("default-0.05s", None, _window(0.05, 0.01)),
        startup=ScenarioRun("default-0.02s", None, _window(0.02, 0.005)),
        cold_start=True,
        sweep_duration=3.0, sweep_points=6,   # cells of ~10 s, as before the fast path
        speed=(default,
               ScenarioRun("default-jumbo", None, ("network.mtu=9000",))),
        speed_reps=2,
        thesis_cell=ScenarioRun("thesis-cell-0.5s", "thesis", _window(0.5, 0.1) + THESIS_CELL),
        rdma_twin=ScenarioRun("ring-twin-1s", None, _window(1.0, 0.1) + TWIN),
        memory=default,
        scaling_hosts=SCALING_HOSTS,
    )


def quick() -> BenchConfig:
    tiny = ScenarioRun("default-training-0.1s", None, _window(0.1, 0.01) + TRAINING)
    return BenchConfig(
        quick=True, reps=1,
        overhead=tiny, check=None, callgrind=None, startup=tiny, cold_start=False,
        sweep_duration=0.03, sweep_points=1,
        speed=(ScenarioRun("default-0.05s", None, _window(0.05, 0.01)),
               ScenarioRun("default-jumbo-0.05s", None,
                           _window(0.05, 0.01) + ("network.mtu=9000",))),
        speed_reps=1,
        thesis_cell=ScenarioRun("thesis-0.005s", "thesis", _window(0.005, 0.001) + THESIS_CELL),
        rdma_twin=ScenarioRun("ring-twin-0.05s", None, _window(0.05, 0.01) + TWIN),
        memory=tiny,
        scaling_hosts=SCALING_HOSTS[:2],
    )


SWEEP_GRID = """\
name = "bench"
scenario = "default"
timeout = "30min"
[set]
"run.duration" = {duration}
"run.warmup" = {margin}
"run.cooldown" = {margin}
"training.enabled" = true
"training.workers" = 4
"training.profile" = "resnet50-like-2MB"
"training.ratio" = 2
[axes]
"training.port" = {ports}
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
"""


def sweep_grid(cfg: BenchConfig) -> str:
    """A grid of points x 2 arms cells. The points differ only in the training
    job's port: distinct scenarios with the same seed, hence the same events,
    so the section measures the executors' scaling. (Over seeds, cells of this
    scenario took 8-62 s: one long cell at the end then dominates, whatever
    the executor; see docs/performance/sweep-cost.md.)"""
    return SWEEP_GRID.format(duration=cfg.sweep_duration, margin=cfg.sweep_duration / 10,
                             ports=[6000 + 10 * i for i in range(cfg.sweep_points)])
