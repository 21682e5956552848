"""The schema (harness.config.schema): one pydantic model per table. Its JSON Schema
is printed by `harness schema` and committed in docs/schema/; every shipped
file validates against it; each architecture takes only its own keys."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.config.scenario import ConfigError, load_scenario
from harness.config.schema import json_schema

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"scenario": ROOT / "workloads" / "scenarios", "grid": ROOT / "workloads" / "sweeps"}


def _text(kind: str) -> str:
    """What `harness schema` prints (`--grid`: for grids)."""
    return json.dumps(json_schema(kind), indent=2) + "\n"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_committed_schema_is_the_generated_one(kind):
    committed = ROOT / "docs" / "schema" / f"{kind}.schema.json"
    assert committed.read_text(encoding="utf-8") == _text(kind), (
        f"{committed.relative_to(ROOT)} is out of date: harness schema"
        f"{' --grid' if kind == 'grid' else ''} > {committed.relative_to(ROOT)}")


@pytest.mark.parametrize("kind", list(KINDS))
def test_harness_schema_prints_it(kind):
    result = CliRunner().invoke(main, ["schema", *(["--grid"] if kind == "grid" else [])])
    assert result.exit_code == 0, result.output
    assert result.output == _text(kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_shipped_file_validates_against_it(kind):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema(kind))
    files = sorted(KINDS[kind].glob("*.toml"))
    assert files
    for path in files:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(data)]
        assert not errors, f"{path.name}: {errors[:3]}"


@pytest.mark.parametrize("data", [
    {"network": {"qdisc": "red"}},
    {"run": {"duration": "3 parsecs"}},
    {"run": {"durration": 3}},
    {"background": {"traffic_class": "low"}},       # the key is `class`
    {"training": {"servers": 2}},                    # a parameter server's key on a ring
    {"training": {"architecture": "ps", "fusion_buffer": 100}},
    {"training": {"straggler": {"distribution": "lognormal"}}},   # sigma is required
    {"tcp": {"buffer_bytes": 2**40}},
])
def test_the_schema_refuses_what_harness_refuses(data):
    jsonschema = pytest.importorskip("jsonschema")
    assert list(jsonschema.Draft202012Validator(json_schema("scenario")).iter_errors(data))
    with pytest.raises(ConfigError):
        from harness.config.scenario import scenario_from_dict
        scenario_from_dict({"background": {"load": 0.1}, **data})


def test_a_ring_job_refuses_parameter_server_settings():
    """Each architecture declares its own keys: server_placement on a ring is
    refused (it was silently accepted), naming the architecture it needs."""
    with pytest.raises(ConfigError) as err:
        load_scenario(None, ["training.enabled=true", 'training.server_placement="colocated"'])
    assert err.value.field == "training.server_placement"
    assert "'ps'" in str(err.value) and "architecture" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_scenario(None, ["training=[{hosts=[0, 1]}, {hosts=[2, 3], pull_barrier=true}]"])
    assert err.value.field == "training[1].pull_barrier"


def test_another_architectures_key_at_its_default_is_left_alone():
    """ps-small moved to a ring (as the seed-claims grid does) keeps its
    base's `servers = 1`: that default says nothing a ring could misread."""
    sc = load_scenario("ps-small", ['training.architecture="ring"'])
    assert sc.training.architecture == "ring" and not hasattr(sc.training, "servers")
    assert sc.to_dict()["training"]["servers"] == 1   # config.json keeps one shape
