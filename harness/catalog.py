"""What the harness has built in: scenarios, sweep presets, topologies,
background workloads, model profiles and scheduling policies, each with a
one-line description (`harness list`, and the names in `--help`).

Names come from the files in workloads/ and topologies/ (a new file is a new
entry); descriptions from each file's leading comment, or from its content
for the CSVs. It reads the built-ins of every layer (traffic's workloads and
profiles, the training plug-ins, sweeps' cached cells), so it sits
above them, beside the service layer, not in harness.config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.config.scenario import (CDF_DIR, SCENARIOS_DIR, SWEEPS_DIR, TOPOLOGIES_DIR,
                                     WORKLOADS_DIR, builtin_names)

PROFILES_DIR = WORKLOADS_DIR / "profiles"


@dataclass(frozen=True)
class Entry:
    name: str
    description: str


@dataclass(frozen=True)
class Section:
    title: str
    how: str                 # how a user picks one
    entries: tuple[Entry, ...]


def _first_sentence(path: Path, limit: int = 110, whole: bool = False) -> str:
    """The file's leading comment, up to its first full stop (whole: all of
    it, uncut: `harness list --long`)."""
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" ").rstrip())
    if whole:
        return _paragraphs(lines)
    text = " ".join(line.strip() for line in lines)
    end = text.find(". ")
    text = text[:end + 1] if end >= 0 else text
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def _paragraphs(lines: list[str]) -> str:
    """A comment's paragraphs (blank lines apart), one line each; an indented
    line (a list, a table of arms) stays a line of its own, indented."""
    out: list[str] = []
    para: list[str] = []
    for line in lines + [""]:
        if line.startswith("  ") or not line.strip():
            if para:
                out.append(" ".join(" ".join(para).split()))
                para = []
            if line.strip():
                out.append("  " + line.strip())
            continue
        para.append(line)
    return "\n".join(out)


def scenario_names() -> list[str]:
    return builtin_names(SCENARIOS_DIR, ".toml")


def sweep_names() -> list[str]:
    return builtin_names(SWEEPS_DIR, ".toml")


def _files(directory: Path, suffix: str, whole: bool = False) -> tuple[Entry, ...]:
    return tuple(Entry(name, _first_sentence(directory / f"{name}{suffix}", whole=whole))
                 for name in builtin_names(directory, suffix))


def _workloads() -> tuple[Entry, ...]:
    from harness.traffic.background import load_cdf

    out = []
    for name in builtin_names(CDF_DIR, ".csv"):
        cdf = load_cdf(name)
        source = _first_sentence(CDF_DIR / f"{name}.csv").split(",")[0]  # "Web search flow sizes (...)"
        out.append(Entry(name, f"{source}: mean {cdf.mean:,.0f} B, up to {cdf.sizes[-1]:,.0f} B"))
    return tuple(out)


def _profiles() -> tuple[Entry, ...]:
    from harness.traffic.profiles import load_profile

    out = []
    for name in builtin_names(PROFILES_DIR, ".csv"):
        prof = load_profile(PROFILES_DIR / f"{name}.csv")
        out.append(Entry(name, f"{prof.n_layers} layers, {prof.model_bytes:,} B, compute "
                               f"{prof.compute_ms:.3g} ms per iteration (rescaled by "
                               "training.ratio)"))
    return tuple(out)


def _policies() -> tuple[Entry, ...]:
    from harness import training
    from harness.traffic.schedulers import POLICIES

    return tuple(Entry(p.name, " or ".join(training.architectures_taking(p)) + ": " + p.summary)
                 for p in POLICIES.values())


def _cached_cells() -> tuple[Entry, ...]:
    from harness.sweeps import cell_cache

    out = []
    for name in cell_cache.builtin():
        index = cell_cache.read_index(cell_cache.resolve(name))
        commit = str(index.get("commit", "?"))[:12]
        out.append(Entry(name, f"{len(index['cells'])} cells of grid {index['grid']!r} at "
                               f"scale {index['scale']}, made at {commit}"))
    return tuple(out)


def sections(whole: bool = False) -> list[Section]:
    """Every section of `harness list`; whole: each file's whole leading
    comment as its description, not its first sentence cut to a line."""
    from harness import training
    from harness.config.registry import service_kinds
    from harness.config.scenario import ARCHITECTURES, CONGESTION_CONTROLS, QDISCS

    return [
        Section("scenarios", "harness run NAME, harness check NAME",
                _files(SCENARIOS_DIR, ".toml", whole)),
        Section("sweeps", "harness sweep NAME, harness check --sweep NAME",
                _files(SWEEPS_DIR, ".toml", whole)),
        Section("cached cells", "harness sweep GRID --cached NAME (its cells not run)",
                _cached_cells()),
        Section("topologies", "--set topology.file=NAME",
                _files(TOPOLOGIES_DIR, ".toml", whole)),
        Section("workloads", "--set background.workload=NAME (background flow sizes)",
                _workloads()),
        Section("profiles", "--set training.profile=NAME (model layers and compute)",
                _profiles()),
        Section("policies", "--set training.policy=NAME (communication scheduling)",
                _policies()),
        Section("service kinds", "[[service]] kind = NAME (latency-critical traffic beside training)",
                tuple(Entry(name, kind.summary) for name, kind in service_kinds().items())),
        Section("other choices", "--set FIELD=NAME", (
            Entry("training.architecture", ", ".join(ARCHITECTURES)),
            *(Entry(field, ", ".join(values)) for a in training.ARCHITECTURES.values()
              for field, values in a.choices),
            Entry("network.qdisc", ", ".join(QDISCS)),
            Entry("tcp.congestion_control", ", ".join(CONGESTION_CONTROLS)),
        )),
    ]
