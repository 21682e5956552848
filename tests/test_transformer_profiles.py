"""Profiles from a model's architecture (issue 61, deliverable 1):
parameters counted against the published totals, FLOPs by hand, the
profile's shape, `harness profile --model` and its refusals, and a ring
training on a generated profile in ns-3 at the analytic time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from harness.config.errors import ConfigError
from harness.config.paths import ACCELERATORS_DIR, MODELS_DIR
from harness.config.schema.model import AcceleratorConfig, TransformerConfig, read
from harness.traffic import profiles, transformer

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy")


def model(name: str) -> TransformerConfig:
    return read(TransformerConfig, name, MODELS_DIR, "--model")


def test_parameters_are_the_published_counts():
    assert transformer.parameters(model("gpt2-125m")) == 124_439_808     # GPT-2 small
    assert transformer.parameters(model("llama-7b")) == 6_738_415_616    # LLaMA-7B
    # GPT-3 XL's shape by the formula: 12 h^2 + 13 h a block, V h + s h, the final norm
    h, L, V, s = 2048, 24, 50257, 2048
    assert transformer.parameters(model("gpt-1.3b")) == L * (12 * h * h + 13 * h) + V * h \
        + s * h + 2 * h


def test_a_block_s_flops_and_the_mixture_of_experts_by_hand():
    m = model("gpt2-125m")
    h, f, s, b = 768, 3072, 1024, 8
    costs = transformer.layer_costs(m)
    assert [c.name for c in costs][:2] == ["embedding", "block 0"] and costs[-1].name == "head"
    assert costs[0].forward_flops == 0 and costs[-1].params == 2 * h   # tied: only the norm
    tokens = s * b
    assert costs[1].forward_flops == 2 * (4 * h * h + 2 * h * f) * tokens + 4 * s * h * tokens
    moe = transformer.layer_costs(model("gpt2-moe-8e"))
    dense, expert = costs[1], moe[2]            # block 1 holds the experts (every 2nd)
    assert moe[1].params == dense.params        # block 0 stays dense
    mlp = 2 * h * f + f + h
    assert expert.params == dense.params - mlp + 8 * mlp + h * 8
    # two experts' weights and the router computed, not eight
    assert expert.forward_flops == dense.forward_flops + 2 * (2 * h * f + h * 8) * tokens


def test_the_profile_is_gradients_and_times_on_the_accelerator():
    m, d = model("llama-7b"), read(AcceleratorConfig, "h100", ACCELERATORS_DIR, "--accelerator")
    p = transformer.profile(m, d)
    costs = transformer.layer_costs(m)
    assert p.n_layers == 32 + 2 and p.model_bytes == 2 * transformer.parameters(m)
    assert all(bp == pytest.approx(2 * fp) for fp, bp in zip(p.fp_ms, p.bp_ms))
    flops = 3 * sum(c.forward_flops for c in costs)
    assert p.compute_ms == pytest.approx(flops / (989e12 * 0.4) * 1e3)
    # about 6 N T: the rule of thumb, within the attention scores' share
    assert p.compute_ms == pytest.approx(6 * 6.74e9 * 2048 / (989e12 * 0.4) * 1e3, rel=0.1)


@pytest.mark.parametrize("data, field", [
    ({"layers": 2, "hidden": 10, "heads": 3, "ffn": 4, "vocab": 5, "seq_len": 6}, "heads"),
    ({"layers": 2, "hidden": 12, "heads": 4, "kv_heads": 3, "ffn": 4, "vocab": 5,
      "seq_len": 6}, "kv_heads"),
    ({"layers": 2, "hidden": 12, "heads": 4, "ffn": 4, "vocab": 5, "seq_len": 6,
      "experts": 2, "top_k": 3}, "top_k"),
    ({"layers": 2, "hidden": 12, "heads": 4, "ffn": 4, "vocab": 5, "seq_len": 6,
      "attention": "flash"}, "attention"),
    ({"layers": 0, "hidden": 12, "heads": 4, "ffn": 4, "vocab": 5, "seq_len": 6}, "layers"),
])
def test_a_bad_architecture_names_its_field(tmp_path, data, field):
    path = tmp_path / "m.toml"
    path.write_text("\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in data.items()))
    with pytest.raises(ConfigError) as e:
        read(TransformerConfig, str(path), MODELS_DIR, "--model")
    assert e.value.field == f"--model m.toml: {field}"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "profile", *args],
                          capture_output=True, text=True, timeout=120)


def test_harness_profile_from_a_model_and_its_refusals(tmp_path):
    out = tmp_path / "gpt2.csv"
    done = _cli("--model", "gpt2-125m", "--accelerator", "a100", "-o", str(out))
    assert done.returncode == 0, done.stderr
    p = profiles.load_profile(out)
    assert p.n_layers == 14 and p.model_bytes == 2 * 124_439_808
    for args, words in [
        (("--model", "gpt2", "--accelerator", "h100"), "did you mean 'gpt2-125m'"),
        (("--model", "gpt2-125m"), "--accelerator"),
        (("--model", "gpt2-125m", "--accelerator", "h100", "--ratio", "2"), "--ratio"),
        (("--model", "gpt2-125m", "--accelerator", "h100", "--efficiency", "0"),
         "--efficiency"),
        (("--model", "gpt2-125m", "--accelerator", "tpu"), "built in: a100, h100"),
    ]:
        done = _cli(*args)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)


@needs_ns3
def test_a_ring_trains_a_generated_transformer_at_its_analytic_time(tmp_path):
    """GPT-2 small on H100s, on 100 Gbit/s links scaled down 100 times (its
    gradients 2.5 MB on 1 Gbit/s, the times kept), a 2-worker ring over
    RDMA at zero load: each iteration within 2 % of the alpha-beta model,
    as the ring's own test holds a generated ResNet-like profile."""
    from harness.config.scenario import load_scenario
    from harness.engine import planning, simulation
    from harness.training import ring

    out = tmp_path / "gpt2.csv"
    assert _cli("--model", "gpt2-125m", "--accelerator", "h100", "-o", str(out)).returncode == 0
    run = simulation.execute(planning.plan(load_scenario("default", [
        "background.enabled=false", "run.duration=0.4", "run.warmup=0.1", "run.cooldown=0.05",
        "training.enabled=true", "training.workers=2", f'training.profile="{out}"',
        'training.transport="rdma"', 'topology.link_rate="100Gbps"', "scale=100"])), quiet=True)
    job = run.plan.all_jobs[0]
    link = run.plan.topology.host_link(0).rate_bps
    measured = run.iterations.groupby("iteration")["iteration_s"].mean().iloc[1:]
    expected = ring.simulate(job.profile, 2, link, iterations=len(measured) + 1,
                             payload_efficiency=1456 / 1502,
                             step_latency_s=2 * 10e-6 + 1502 * 8 / link).iteration_ms[1:] / 1e3
    assert len(measured) >= 3
    assert abs(measured.mean() / expected.mean() - 1) < 0.02
