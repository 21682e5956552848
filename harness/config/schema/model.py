"""A model by its architecture and the accelerator that computes it, for
`harness profile --model NAME --accelerator NAME`: a decoder-only
transformer (workloads/models/*.toml) and a device's peak rate and
efficiency (workloads/accelerators/*.toml). harness.traffic.transformer
turns the two into a profile: each layer's gradient bytes and its forward
and backward times."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal, Optional

from pydantic import Field, TypeAdapter, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Bool, Int, Number, Section, Str, did_you_mean, validate


class TransformerConfig(Section):
    """A decoder-only transformer: `layers` blocks of attention and an MLP
    (or, every `moe_every`-th block, `experts` MLPs of which each token uses
    `top_k`) between an embedding and a language-model head."""

    example = '{ layers = 12, hidden = 768, heads = 12, ffn = 3072, vocab = 50257, seq_len = 1024 }'
    name: Str = Field("", description="names the profile; default the file's name")
    layers: Int(1, 10_000) = Field(description="transformer blocks")
    hidden: Int(1, 1_000_000) = Field(description="the model width (d_model)")
    heads: Int(1, 10_000) = Field(description="attention heads (hidden must be a multiple)")
    kv_heads: Optional[Int(1, 10_000)] = Field(None, description=(
        "key/value heads (grouped-query attention); default `heads`"))
    ffn: Int(1, 10_000_000) = Field(description="the MLP's inner width")
    vocab: Int(1, 10_000_000) = Field(description="the vocabulary")
    seq_len: Int(1, 10_000_000) = Field(description="tokens per sequence")
    micro_batch: Int(1, 100_000) = Field(1, description="sequences per worker per iteration")
    mlp: Literal["gelu", "swiglu"] = Field("gelu", description=(
        "`gelu` (two matrices) or `swiglu` (three, as LLaMA)"))
    norm: Literal["layernorm", "rmsnorm"] = Field("layernorm", description=(
        "`layernorm` (scale and shift) or `rmsnorm` (scale only)"))
    bias: Bool = Field(True, description="whether the linear layers have biases")
    positions: Literal["learned", "rope"] = Field("learned", description=(
        "`learned` (a position embedding of seq_len x hidden) or `rope` (no parameters)"))
    tied_embeddings: Bool = Field(True, description=(
        "whether the LM head reuses the token embedding (its gradient counted once)"))
    gradient_bytes: Int(1, 8) = Field(2, description="bytes per gradient value (2: bf16)")
    experts: Int(1, 100_000) = Field(1, description="MLPs of a mixture-of-experts block (1: none)")
    top_k: Int(1, 100_000) = Field(1, description="experts each token goes through")
    moe_every: Int(1, 10_000) = Field(1, description="every n-th block is a mixture of experts")

    @model_validator(mode="after")
    def _shapes(self) -> TransformerConfig:
        if self.hidden % self.heads:
            raise ConfigError("heads", f"{self.heads} does not divide hidden = {self.hidden}")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ConfigError("kv_heads", f"{self.kv_heads} does not divide heads = "
                              f"{self.heads}")
        if self.top_k > self.experts:
            raise ConfigError("top_k", f"{self.top_k} is more than experts = {self.experts}")
        return self


class AcceleratorConfig(Section):
    """What computes a layer: its peak rate and the share of it a training
    step reaches (model FLOPs utilisation)."""

    example = '{ peak_flops = 989e12, efficiency = 0.4 }'
    name: Str = Field("", description="names it; default the file's name")
    peak_flops: Number(gt=0) = Field(description=(
        "peak FLOP/s at the training precision (dense, no sparsity)"))
    efficiency: Number(gt=0, le=1) = Field(0.4, description=(
        "the share of the peak a training step reaches, 0 < efficiency <= 1"))


_ADAPTERS = {TransformerConfig: TypeAdapter(TransformerConfig),
             AcceleratorConfig: TypeAdapter(AcceleratorConfig)}


def read(kind: type, given: str, folder: Path, option: str):
    """A model or accelerator: a name of `folder` (without .toml) or a path to
    a TOML file, validated; a ConfigError names `option` (a missing name, with
    the ones there are) or the file's field."""
    # a path ends in .toml or names a folder; anything else is a name ("gpt-1.3b")
    path = Path(given) if given.endswith(".toml") or "/" in given else folder / f"{given}.toml"
    if not path.is_file():
        names = sorted(p.stem for p in folder.glob("*.toml"))
        raise ConfigError(option, f"no {'model' if kind is TransformerConfig else 'accelerator'}"
                          f" {given!r}{did_you_mean(given, names)}; built in: "
                          f"{', '.join(names)} (or a path to a .toml file)")
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(option, f"{path}: not a readable TOML file ({e})") from None
    data.setdefault("name", path.stem)
    try:
        return validate(_ADAPTERS[kind], data, kind)
    except ConfigError as e:
        raise ConfigError(f"{option} {path.name}: {e.field}", e.message) from None
