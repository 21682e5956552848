"""A transformer's profile from its architecture (harness.config.schema.model):
each layer's parameters, and so its gradient bytes, and its forward FLOPs
for one worker's micro-batch, turned into times on an accelerator.

Layers, in forward order (a profile's layer 0 runs first forward and last
backward, harness.traffic.profiles):
  0         the token embedding (and the learned position embedding): a
            lookup, no FLOPs; a tied LM head's gradient is counted here
  1..L      the blocks: attention (Q, O: hidden x hidden; K, V: hidden x
            kv_heads x head_dim), two norms, an MLP (two matrices with GELU,
            three with SwiGLU) or, every moe_every-th block, `experts` MLPs
            and their router
  L + 1     the final norm and the LM head (its matrix here unless tied)

FLOPs: 2 per multiply-add of a weight per token, plus the attention
scores (Q K^T and the weights times V: 2 x 2 x seq_len x hidden per token,
without a causal discount); a mixture-of-experts block computes top_k of
its MLPs per token and holds all of them (every expert on every worker:
no expert parallelism, so every gradient is all-reduced). Backward is
twice the forward (the input's and the weights' gradients), the usual
approximation. Pure Python: no ns-3."""

from __future__ import annotations

from dataclasses import dataclass

from harness.config.schema.model import AcceleratorConfig, TransformerConfig
from harness.traffic.profiles import Profile, check_limits

#: Backward FLOPs per forward FLOP (the input's and the weights' gradients).
BACKWARD_FACTOR = 2.0


@dataclass(frozen=True)
class LayerCost:
    """One layer of the profile: its parameters and forward FLOPs."""

    name: str
    params: int
    forward_flops: float


def _mlp_weights(m: TransformerConfig) -> int:
    return (3 if m.mlp == "swiglu" else 2) * m.hidden * m.ffn


def _mlp_biases(m: TransformerConfig) -> int:
    return ((2 if m.mlp == "swiglu" else 1) * m.ffn + m.hidden) if m.bias else 0


def _norm(m: TransformerConfig) -> int:
    return (2 if m.norm == "layernorm" else 1) * m.hidden


def layer_costs(m: TransformerConfig) -> list[LayerCost]:
    """The profile's layers, in forward order (the module's doc)."""
    tokens = m.seq_len * m.micro_batch
    head_dim = m.hidden // m.heads
    kv = (m.kv_heads or m.heads) * head_dim
    attn_weights = 2 * m.hidden * m.hidden + 2 * m.hidden * kv
    attn_biases = (2 * m.hidden + 2 * kv) if m.bias else 0
    scores = 2 * 2 * m.seq_len * m.hidden * tokens
    embedding = m.vocab * m.hidden + (m.seq_len * m.hidden if m.positions == "learned" else 0)
    out = [LayerCost("embedding", embedding, 0.0)]
    for i in range(m.layers):
        moe = m.experts > 1 and (i + 1) % m.moe_every == 0
        mlp = _mlp_weights(m) + _mlp_biases(m)
        router = m.hidden * m.experts if moe else 0
        params = (attn_weights + attn_biases + 2 * _norm(m) + router
                  + (m.experts if moe else 1) * mlp)
        active = attn_weights + router + (m.top_k if moe else 1) * _mlp_weights(m)
        out.append(LayerCost(f"block {i}{' (experts)' if moe else ''}", params,
                             2.0 * active * tokens + scores))
    head = m.vocab * m.hidden
    out.append(LayerCost("head", _norm(m) + (0 if m.tied_embeddings else head),
                         2.0 * head * tokens))
    return out


def parameters(m: TransformerConfig) -> int:
    """The model's parameters, every one counted once."""
    return sum(layer.params for layer in layer_costs(m))


def profile(m: TransformerConfig, device: AcceleratorConfig) -> Profile:
    """The profile of `m` on `device`: gradient bytes per layer, forward and
    backward ms at the device's peak times its efficiency."""
    rate = device.peak_flops * device.efficiency
    costs = layer_costs(m)
    p = Profile(name=f"{m.name}@{device.name}",
                layer_bytes=tuple(c.params * m.gradient_bytes for c in costs),
                fp_ms=tuple(c.forward_flops / rate * 1e3 for c in costs),
                bp_ms=tuple(BACKWARD_FACTOR * c.forward_flops / rate * 1e3 for c in costs))
    check_limits(p)
    return p
