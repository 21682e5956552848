"""A model profile (`harness profile`): a resnet50-like one generated for
any L, M and T or R, or a profile CSV checked. Every bound is checked,
named as the option that sets it, before a layer is made."""

from __future__ import annotations

import math
from pathlib import Path

from harness.config.errors import ConfigError
from harness.usecases.checks import refused


def output(path: str | None) -> Path | None:
    """The output first: only a profile the harness wrote is replaced."""
    from harness.io import outdir
    from harness.traffic import profiles

    return outdir.check_new_file(Path(path), "-o", profiles.is_generated) if path else None


def generate(n_layers: int, model_bytes: float, compute_ms: float | None, ratio: float | None,
             workers: int, link_rate: str):
    """The profile of these options (a ConfigError names the option)."""
    from harness.config.scenario import parse_rate
    from harness.traffic import profiles

    if (compute_ms is None) == (ratio is None):
        raise refused("--compute-ms", "give exactly one of --compute-ms and --ratio")
    for name, value in (("--model-bytes", model_bytes), ("--compute-ms", compute_ms),
                        ("--ratio", ratio)):
        if value is not None and not math.isfinite(value):
            raise ConfigError(name, f"must be a finite number (got {value})")
        if value is not None and not value > 0:
            raise ConfigError(name, f"must be > 0 (got {value:g})")
    # the profile's bounds (profiles.check_limits), named as options
    if not 2 <= n_layers <= profiles.MAX_LAYERS:
        raise ConfigError("--layers", f"must be 2 to {profiles.MAX_LAYERS:,} (got {n_layers:,})")
    if not (model_bytes.is_integer() and model_bytes <= profiles.MAX_MODEL_BYTES):
        raise ConfigError("--model-bytes", f"must be a whole number of bytes, at most "
                          f"{profiles.MAX_MODEL_BYTES:,} (ns-3 counts bytes as int64; got "
                          f"{model_bytes:g})")
    if 2 * int(model_bytes) < 9 * n_layers:   # resnet50_like's smallest layer: 2M / 9L
        raise ConfigError("--model-bytes", f"{model_bytes:g} B is too small for {n_layers} "
                          f"layers; at least {math.ceil(9 * n_layers / 2):,} (or fewer --layers)")
    if ratio is not None and workers < 2:
        raise ConfigError("--workers", f"the ring needs at least 2 workers (got {workers})")
    if ratio is not None:
        compute_ms = profiles.compute_ms_for_ratio(
            ratio, model_bytes, workers, parse_rate(link_rate, "--link-rate"))
    try:
        return profiles.resnet50_like(n_layers, model_bytes, compute_ms)
    except profiles.ProfileError as e:   # a layer's compute past ns-3's clock
        raise ConfigError("--ratio" if ratio is not None else "--compute-ms", str(e)) from None


def from_model(model: str, accelerator: str, efficiency: float | None):
    """A transformer's profile from its architecture on an accelerator
    (harness.traffic.transformer); a ConfigError names the option or the
    file's field."""
    from harness.config.paths import ACCELERATORS_DIR, MODELS_DIR
    from harness.config.schema.model import AcceleratorConfig, TransformerConfig, read
    from harness.traffic import profiles, transformer

    arch = read(TransformerConfig, model, MODELS_DIR, "--model")
    device = read(AcceleratorConfig, accelerator, ACCELERATORS_DIR, "--accelerator")
    if efficiency is not None:
        if not (math.isfinite(efficiency) and 0 < efficiency <= 1):
            raise ConfigError("--efficiency", f"must be in (0, 1] (got {efficiency:g})")
        device = device.replace(efficiency=efficiency)
    try:
        return transformer.profile(arch, device)
    except profiles.ProfileError as e:
        raise ConfigError("--model", str(e)) from None


def load(check_file: str):
    """A profile CSV, checked (layer, bytes, fp_ms, bp_ms)."""
    from harness.traffic import profiles

    return profiles.load_profile(check_file)


def check_room(out: Path, prof) -> None:
    from harness.io import outdir
    from harness.traffic import profiles

    outdir.check_space(out, len(profiles.profile_csv(prof).encode()), "-o", "the profile")


def fusion(prof) -> tuple[int, int]:
    """How many fusion buffers the profile's layers fill, and their size bound."""
    from harness.traffic.fusion import fuse, fusion_buffer_bytes

    return len(fuse(prof)), fusion_buffer_bytes(prof)


def save(prof, out: Path) -> Path:
    from harness.traffic import profiles

    return profiles.save_profile(prof, out)
