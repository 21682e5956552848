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


def _package_with_toy(root: Path) -> Path:
    """A copy of the package with harness/training/toy.py added (the data
    folders linked, where harness.config.paths looks for them in a checkout)."""
    shutil.copytree(PACKAGE_DIR, root / "harness",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "harness" / "training" / "toy.py").write_text(TOY)
    for folder in ("ns3-modules", "topologies", "workloads"):
        (root / folder).symlink_to(REPO / folder)
    return root


def _probe(root: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def toy_root(tmp_path_factory) -> Path:
    return _package_with_toy(tmp_path_factory.mktemp("toy"))


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
