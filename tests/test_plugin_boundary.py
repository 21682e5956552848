"""A new training architecture touches only its own files (issue 26).

A copy of the package gets one new module, harness/training/toy.py: a ring
allreduce under another name with one key of its own, on the ring's C++ job
(so no C++ is needed). In a fresh interpreter on that copy the harness lists
it, checks its settings, keeps every existing scenario's digest, and runs it
in ns-3."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config.scenario import ARCHITECTURES, load_scenario
from harness.config.paths import PACKAGE_DIR, SCENARIOS_DIR, builtin_names

REPO = PACKAGE_DIR.parent

TOY = '''"""A toy architecture: a ring allreduce under another name, with a key of its own."""

from typing import Literal

from pydantic import Field

from harness.config.schema.base import Int
from harness.training.ring import Ring, RingSettings


class ToySettings(RingSettings):
    architecture: Literal["toy"] = Field(description="`toy`")
    toy_knob: Int(0, 10) = Field(0, description="toy: a key only it takes")


class Toy(Ring):
    name = "toy"
    summary = "toy"
    settings = ToySettings


ARCHITECTURE = Toy()
'''

# What the fresh interpreter reports, as one JSON object.
PROBE = '''
import json, sys
import harness
from harness import training
from harness.config.scenario import ConfigError, load_scenario
from harness.config.paths import SCENARIOS_DIR, builtin_names

JOB = ["training.enabled=true", 'training.architecture="toy"', "training.workers=2",
       'training.profile="resnet50-like-2MB"']


def verdict(overrides):
    try:
        load_scenario(None, JOB + overrides)
        return "ok"
    except ConfigError as e:
        return str(e)


out = {"package": harness.__file__, "architectures": list(training.ARCHITECTURES),
       "own_key": verdict(["training.toy_knob=3"]),
       "bad_value": verdict(["training.toy_knob=11"]),
       "unknown_key": verdict(["training.no_such_key=1"]),
       "ps_key": verdict(["training.servers=2"]),
       "ring_key": verdict(["training.fusion_buffer=3000000"]),
       "digests": {name: load_scenario(name).digest()
                   for name in builtin_names(SCENARIOS_DIR, ".toml")}}
if "--run" in sys.argv:
    from harness.engine.simulation import execute
    from harness.engine.planning import plan
    result = execute(plan(load_scenario(None, JOB + [
        "run.duration=0.05", "run.warmup=0", "run.cooldown=0", "training.ratio=1"])),
        progress=False, quiet=True)
    out["iterations"] = int(len(result.iterations))
print(json.dumps(out))
'''


def _package_with(root: Path, module: str, text: str) -> Path:
    """A copy of the package with one module added (`module`: its path under
    harness/; the data folders linked, where harness.config.paths looks for
    them in a checkout)."""
    shutil.copytree(PACKAGE_DIR, root / "harness",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "harness" / module).write_text(text)
    for folder in ("ns3-modules", "topologies", "workloads"):
        (root / folder).symlink_to(REPO / folder)
    return root


def _probe(root: Path, *args: str, probe: str = PROBE) -> dict:
    """What a fresh interpreter on the copy reports (the probe's last line, JSON)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", probe, *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def toy_root(tmp_path_factory) -> Path:
    return _package_with(tmp_path_factory.mktemp("toy"), "training/toy.py", TOY)


def test_a_new_architecture_is_one_new_module(toy_root):
    out = _probe(toy_root)
    assert Path(out["package"]).resolve().is_relative_to(toy_root.resolve())
    assert out["architectures"] == [*ARCHITECTURES, "toy"]   # the default first, then by name
    assert out["own_key"] == "ok"
    assert out["ring_key"] == "ok"    # it is a ring underneath
    assert out["bad_value"].startswith("training.toy_knob:")
    assert out["unknown_key"].startswith("training.no_such_key: unknown key")
    assert "toy_knob" in out["unknown_key"]    # its own key is listed as allowed
    assert out["ps_key"] == ("training.servers: applies to architecture = 'ps' only, not "
                             "'toy': leave it out or set architecture = 'ps'")


def test_a_new_architecture_keeps_every_digest(toy_root):
    out = _probe(toy_root)
    assert out["digests"] == {name: load_scenario(name).digest()
                              for name in builtin_names(SCENARIOS_DIR, ".toml")}


def test_a_new_architecture_runs_in_ns3(toy_root):
    pytest.importorskip("cppyy")
    out = _probe(toy_root, "--run")
    assert out["iterations"] > 0


# --------------------------------------------------------------------------
# A new service kind touches only its own files (issue 60): one module of
# harness/traffic/services/ (here on the stream's C++ applications, so no C++
# is needed), found by the registry, read by every reader of results.

BEACON = '''"""A toy service kind: a constant-bitrate stream in bursts, with a key of its own."""

from typing import Literal

from pydantic import Field

from harness.analysis.services import ServiceStat
from harness.config.schema.base import Int
from harness.config.schema.service import KIND_DESCRIPTION
from harness.traffic.services.stream import Stream, StreamService


class BeaconService(StreamService):
    kind: Literal["beacon"] = Field(description=KIND_DESCRIPTION)
    burst: Int(1, 8) = Field(1, description="beacon: the stream's rate x this")


class Beacon(Stream):
    name = "beacon"
    order = 90
    summary = "beacon: a stream in bursts"
    settings = BeaconService
    stats = (ServiceStat("beacon", "delay_p99", "p99_delay_s", "s", "beacon delay p99",
                         change="p99"),)

    def plan(self, base, cfg, at, pool, ctx):
        plan = super().plan(base, cfg, at, pool, ctx)
        return type(plan)(**{**plan.__dict__, "rate_bps": plan.rate_bps * cfg.burst})


KIND = Beacon()
'''

BEACON_PROBE = '''
import json, sys
import harness
from harness.config import registry
from harness.config.scenario import ConfigError, load_scenario
from harness.config.paths import SCENARIOS_DIR, builtin_names

SERVICE = ['topology.file="single-tor-1g"', "run.duration=0.2", "run.warmup=0.05",
           "run.cooldown=0.05", "background.enabled=false"]


def verdict(table):
    try:
        load_scenario(None, SERVICE + [f"service=[{table}]"])
        return "ok"
    except ConfigError as e:
        return str(e)


out = {"package": harness.__file__, "kinds": list(registry.service_kinds()),
       "own_key": verdict('{kind="beacon", bitrate="1Mbps", burst=3}'),
       "bad_value": verdict('{kind="beacon", bitrate="1Mbps", burst=9}'),
       "query_key": verdict('{kind="beacon", bitrate="1Mbps", rate=3}'),
       "digests": {name: load_scenario(name).digest()
                   for name in builtin_names(SCENARIOS_DIR, ".toml")}}
if "--run" in sys.argv:
    from harness.analysis.services import flat_columns
    from harness.cli import service_line
    from harness.engine.planning import plan
    from harness.engine.simulation import execute
    from harness.sweeps.cost import predicted_bytes
    p = plan(load_scenario(None, SERVICE + [
        'service=[{kind="beacon", source=0, destination=1, bitrate="1Mbps", burst=2}]']))
    result = execute(p, progress=False, quiet=True)
    entry = result.summary["services"]["beacon0"]
    out.update(rate=p.services[0].rate_bps, bytes=predicted_bytes(p),
               line=service_line("beacon0", entry), received=entry["received"],
               columns=sorted(flat_columns(result.summary["services"])))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def beacon_root(tmp_path_factory) -> Path:
    return _package_with(tmp_path_factory.mktemp("beacon"), "traffic/services/beacon.py", BEACON)


def test_a_new_service_kind_is_one_new_module(beacon_root):
    from harness.config import registry

    out = _probe(beacon_root, probe=BEACON_PROBE)
    assert Path(out["package"]).resolve().is_relative_to(beacon_root.resolve())
    assert out["kinds"] == [*registry.service_kinds(), "beacon"]   # by `order`
    assert out["own_key"] == "ok"
    assert out["bad_value"].startswith("service[0].burst:")
    assert out["query_key"].startswith("service[0].rate: applies to kind = 'query' only, "
                                       "not 'beacon'")
    assert out["digests"] == {name: load_scenario(name).digest()
                              for name in builtin_names(SCENARIOS_DIR, ".toml")}


def test_a_new_service_kind_runs_and_every_reader_reads_it(beacon_root):
    pytest.importorskip("cppyy")
    out = _probe(beacon_root, "--run", probe=BEACON_PROBE)
    assert out["rate"] == 2e6                      # its own key planned it
    assert out["bytes"] == pytest.approx(2e6 / 8 * 0.2, rel=0.3)   # its cost: its own bytes
    assert out["received"] > 0
    assert out["line"].startswith("beacon0 (beacon): ")
    assert "beacon_delay_p99_s" in out["columns"]  # its statistic in summary.parquet
