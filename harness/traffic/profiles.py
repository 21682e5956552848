"""Model profiles: per-layer parameter bytes and compute times (docs/model/training.md).

A profile describes one data-parallel training job's model: ``L`` layers,
layer 0 on the input side.  Per layer ``i``: ``P_i`` parameter (= gradient)
bytes, forward time ``F_i`` and backward time ``B_i`` in milliseconds.
Forward runs 0..L-1, backward L-1..0.

Profiles are data files (``workloads/profiles/*.csv``) with the header
``layer,bytes,fp_ms,bp_ms`` and one row per layer, layers 0..L-1 in order;
lines starting with ``#`` are comments. ``load_profile`` validates a file
and names the offending row/field in its errors; ``save_profile`` writes one
atomically, its first line the comment ``GENERATED`` (``is_generated``): a
file the harness wrote, which ``harness profile -o`` may replace (no other).

This module also holds the arithmetic every other part of the harness shares:

* ``resnet50_like`` -- the reference study's synthetic ResNet-50-like profile.
* ``network_time_ms`` / ``compute_ms_for_ratio`` -- the compute-to-network
  ratio ``R = T / (M * 2(1-1/N) * 8 / link_bps)``.
* ``scaled`` -- the time-preserving scale-down of a profile's bytes.

How a profile's gradients are grouped for sending (tensor fusion, partitions):
harness.traffic.fusion.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.config.units import INT64_MAX, NS3_TIME_MAX_S
from harness.io import outdir

__all__ = [
    "CSV_COLUMNS",
    "Profile",
    "ProfileError",
    "check_limits",
    "compute_ms_for_ratio",
    "is_generated",
    "load_profile",
    "network_time_ms",
    "profile_csv",
    "resnet50_like",
    "save_profile",
]

#: The exact CSV header of a profile file.
CSV_COLUMNS: tuple[str, ...] = ("layer", "bytes", "fp_ms", "bp_ms")

#: The first line of every profile file the harness writes (save_profile):
#: what marks it as ours, to be replaced by `harness profile -o` (no other file is).
GENERATED = "# ddnn-harness profile"


class ProfileError(ValueError):
    """A profile (file or values) is invalid; the message names what and why."""


#: The most layers a profile may have (read or generated; checked before
#: anything is allocated): far above any real model's tensors (ResNet-50
#: has 161, the largest transformers a few thousand).
MAX_LAYERS = 100_000
#: A model's bytes in all: ns-3 counts a job's bytes as int64 (training.model_bytes).
MAX_MODEL_BYTES = INT64_MAX
#: A layer's forward or backward time: ns-3 runs it as int64 nanoseconds.
MAX_LAYER_MS = NS3_TIME_MAX_S * 1e3


def _check_layer_count(name: str, n_layers: int) -> None:
    if n_layers > MAX_LAYERS:
        raise ProfileError(f"profile {name!r}: {n_layers:,} layers; at most {MAX_LAYERS:,}")


def check_limits(profile: "Profile") -> None:
    """What a simulation can take of a profile, the rules a profile file is
    read with (load_profile) and one is generated with (resnet50_like), so
    that `harness profile` never writes a profile its readers refuse: at
    most MAX_LAYERS layers, MAX_MODEL_BYTES in all, MAX_LAYER_MS a layer's
    compute."""
    _check_layer_count(profile.name, profile.n_layers)
    if profile.model_bytes > MAX_MODEL_BYTES:
        raise ProfileError(f"profile {profile.name!r}: {profile.model_bytes:,} B in all; at "
                           f"most {MAX_MODEL_BYTES:,} B (ns-3 counts a job's bytes as int64)")
    for field, times in (("fp_ms", profile.fp_ms), ("bp_ms", profile.bp_ms)):
        longest = max(range(len(times)), key=times.__getitem__)
        if times[longest] > MAX_LAYER_MS:
            raise ProfileError(f"profile {profile.name!r} layer {longest}: {field} "
                               f"{times[longest]:.6g} ms is beyond the longest time ns-3 "
                               f"represents ({MAX_LAYER_MS:.6g} ms)")


def _validate_values(
    name: str,
    layer_bytes: Sequence[int],
    fp_ms: Sequence[float],
    bp_ms: Sequence[float],
) -> None:
    if not (len(layer_bytes) == len(fp_ms) == len(bp_ms)):
        raise ProfileError(
            f"profile {name!r}: layer_bytes, fp_ms and bp_ms must have the same "
            f"length (got {len(layer_bytes)}, {len(fp_ms)}, {len(bp_ms)})"
        )
    if len(layer_bytes) == 0:
        raise ProfileError(f"profile {name!r}: empty profile, need at least 1 layer")
    for i, (b, f, bp) in enumerate(zip(layer_bytes, fp_ms, bp_ms)):
        if isinstance(b, bool) or not isinstance(b, int):
            raise ProfileError(
                f"profile {name!r} layer {i}: bytes must be an integer > 0 (got {b!r})"
            )
        if b <= 0:
            raise ProfileError(f"profile {name!r} layer {i}: bytes must be > 0 (got {b})")
        for field, v in (("fp_ms", f), ("bp_ms", bp)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ProfileError(
                    f"profile {name!r} layer {i}: {field} must be a number >= 0 (got {v!r})"
                )
            if not math.isfinite(v):
                raise ProfileError(
                    f"profile {name!r} layer {i}: {field} must be finite and >= 0 (got {v})"
                )
            if v < 0:
                raise ProfileError(
                    f"profile {name!r} layer {i}: {field} must be >= 0 (got {v})"
                )
    total = math.fsum(fp_ms) + math.fsum(bp_ms)
    if not total > 0:
        raise ProfileError(
            f"profile {name!r}: total compute (sum of fp_ms and bp_ms) must be > 0 "
            f"(got {total})"
        )


@dataclass(frozen=True)
class Profile:
    """Per-layer model profile. Times in milliseconds, sizes in bytes."""

    name: str
    layer_bytes: tuple[int, ...]
    fp_ms: tuple[float, ...]
    bp_ms: tuple[float, ...]

    def __post_init__(self) -> None:
        # Accept any sequence; store tuples so the profile is hashable/immutable.
        lb = tuple(int(b) if is_integral(b) else b for b in self.layer_bytes)
        fp = tuple(float(v) if _is_real(v) else v for v in self.fp_ms)
        bp = tuple(float(v) if _is_real(v) else v for v in self.bp_ms)
        _validate_values(self.name, lb, fp, bp)
        object.__setattr__(self, "layer_bytes", lb)
        object.__setattr__(self, "fp_ms", fp)
        object.__setattr__(self, "bp_ms", bp)

    @property
    def n_layers(self) -> int:
        return len(self.layer_bytes)

    @property
    def model_bytes(self) -> int:
        return sum(self.layer_bytes)

    @property
    def largest_layer(self) -> int:
        return max(self.layer_bytes)

    @property
    def compute_ms(self) -> float:
        """Total compute of one iteration: sum of forward and backward times."""
        return math.fsum(self.fp_ms) + math.fsum(self.bp_ms)

    def to_frame(self):
        """DataFrame with columns layer, bytes, fp_ms, bp_ms (one row per layer)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "layer": range(self.n_layers),
                "bytes": list(self.layer_bytes),
                "fp_ms": list(self.fp_ms),
                "bp_ms": list(self.bp_ms),
            }
        )


def is_integral(v) -> bool:
    """An integer, or a real number with an integral value (numpy's too), not a bool."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    try:  # numpy integers, integral floats
        import numbers

        if isinstance(v, numbers.Integral):
            return True
        if isinstance(v, numbers.Real) and math.isfinite(v) and float(v).is_integer():
            return True
    except Exception:  # pragma: no cover - defensive
        pass
    return False


def _is_real(v) -> bool:
    import numbers

    return isinstance(v, numbers.Real) and not isinstance(v, bool)


# --------------------------------------------------------------------------- CSV


def _parse_int(name: str, row_no: int, field: str, text: str) -> int:
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
    except ValueError:
        raise ProfileError(
            f"profile {name!r} row {row_no}: {field} must be an integer (got {text!r})"
        ) from None
    if not math.isfinite(f) or not f.is_integer():
        raise ProfileError(
            f"profile {name!r} row {row_no}: {field} must be an integer (got {text!r})"
        )
    return int(f)


def _parse_float(name: str, row_no: int, field: str, text: str) -> float:
    try:
        v = float(text.strip())
    except ValueError:
        raise ProfileError(
            f"profile {name!r} row {row_no}: {field} must be a number (got {text!r})"
        ) from None
    if not math.isfinite(v):
        raise ProfileError(
            f"profile {name!r} row {row_no}: {field} must be a finite number (got {text!r})"
        )
    return v


def load_profile(path: str | os.PathLike, name: str | None = None) -> Profile:
    """Read a profile CSV (header exactly ``layer,bytes,fp_ms,bp_ms``).

    The profile's name is ``name`` or, by default, the file's stem.
    Raises ``ProfileError`` naming the row and field for every kind of bad input.
    """
    p = Path(path)
    pname = name if name is not None else p.stem
    if not p.exists():
        raise ProfileError(f"profile {pname!r}: file not found: {str(p)!r}")
    if not p.is_file():
        raise ProfileError(f"profile {pname!r}: not a regular file: {str(p)!r}")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileError(f"profile {pname!r}: cannot read {str(p)!r}: {e}") from e

    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    rows = [r for r in csv.reader(lines) if r and any(c.strip() for c in r)]
    if not rows:
        raise ProfileError(
            f"profile {pname!r}: empty file {str(p)!r}; expected header "
            f"{','.join(CSV_COLUMNS)!r} and one row per layer"
        )
    header = tuple(c.strip() for c in rows[0])
    if header != CSV_COLUMNS:
        missing = [c for c in CSV_COLUMNS if c not in header]
        extra = [c for c in header if c not in CSV_COLUMNS]
        detail = []
        if missing:
            detail.append(f"missing {missing}")
        if extra:
            detail.append(f"unexpected {extra}")
        if not detail:
            detail.append("wrong column order")
        raise ProfileError(
            f"profile {pname!r}: bad header {','.join(header)!r} ({'; '.join(detail)}); "
            f"the header must be exactly {','.join(CSV_COLUMNS)!r}"
        )
    body = rows[1:]
    if not body:
        raise ProfileError(
            f"profile {pname!r}: empty profile (header only), need at least 1 layer row"
        )
    _check_layer_count(pname, len(body))
    layer_bytes: list[int] = []
    fp: list[float] = []
    bp: list[float] = []
    for k, r in enumerate(body):
        row_no = k + 1  # data row number, 1-based (header is row 0)
        if len(r) != len(CSV_COLUMNS):
            raise ProfileError(
                f"profile {pname!r} row {row_no}: expected {len(CSV_COLUMNS)} fields "
                f"({','.join(CSV_COLUMNS)}), got {len(r)}: {r!r}"
            )
        layer = _parse_int(pname, row_no, "layer", r[0])
        if layer != k:
            raise ProfileError(
                f"profile {pname!r} row {row_no}: layer must be {k} (got {layer}); "
                f"layers must be numbered 0..L-1 in order without gaps"
            )
        layer_bytes.append(_parse_int(pname, row_no, "bytes", r[1]))
        fp.append(_parse_float(pname, row_no, "fp_ms", r[2]))
        bp.append(_parse_float(pname, row_no, "bp_ms", r[3]))
    profile = Profile(pname, tuple(layer_bytes), tuple(fp), tuple(bp))
    check_limits(profile)
    return profile


def profile_csv(profile: Profile) -> str:
    """The CSV text save_profile writes: the GENERATED comment line, the
    header, a row per layer. Times are written with ``repr`` so that
    ``load_profile`` reads them back exactly."""
    text = io.StringIO(newline="")
    text.write(f"{GENERATED}: {profile.n_layers} layers, {profile.model_bytes} B, "
               f"{profile.compute_ms:.6g} ms compute (harness profile)\n")
    w = csv.writer(text, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for i, (b, f, bp) in enumerate(zip(profile.layer_bytes, profile.fp_ms, profile.bp_ms)):
        w.writerow((i, int(b), repr(float(f)), repr(float(bp))))
    return text.getvalue()


def is_generated(path: str | os.PathLike) -> bool:
    """A profile file the harness wrote (its first line is GENERATED's comment)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().startswith(GENERATED)
    except OSError:
        return False


def save_profile(profile: Profile, path: str | os.PathLike) -> Path:
    """Write ``profile`` as CSV (profile_csv), whole (harness.io.outdir's writer:
    a link at ``path`` is followed). Checking that ``path`` may be written is
    the caller's (``harness profile -o``: outdir.check_new_file with
    is_generated)."""
    p = Path(path)
    outdir.write_file(p, profile_csv(profile))
    return p


# ---------------------------------------------------------------- resnet50-like


def resnet50_like(
    n_layers: int = 50,
    model_bytes: int = 100_000_000,
    compute_ms: float = 560.0,
) -> Profile:
    """The reference study's synthetic ResNet-50-like profile.

    Sizes: ``s = floor(2M / (9L))``; layers ``i < L/2`` get ``s``,
    ``L/2 <= i <= 0.75 L`` get ``4s``, the rest ``12s``.
    Compute: ``T_f = T/3``, ``T_b = 2T/3``;
    ``F_i = 2T_f/L - i d_f`` with ``d_f = 2T_f/(L(L-1))``, last layer set to ``d_f``;
    ``B_i = i d_b`` with ``d_b = 2T_b/(L(L-1))``, layer 0 set to ``d_b``.
    (So the forward total is ``T_f + d_f`` and the backward total ``T_b + d_b``.)
    The default ``compute_ms`` = 560 is R = 4 at M = 100 MB, 8 workers, 10 Gbit/s.
    """
    L = int(n_layers)
    if L != n_layers or L < 2:
        raise ProfileError(f"resnet50_like: n_layers must be an integer >= 2 (got {n_layers!r})")
    _check_layer_count("resnet50_like", L)   # before the layers are made
    M = int(model_bytes)
    if M != model_bytes or M <= 0:
        raise ProfileError(f"resnet50_like: model_bytes must be an integer > 0 (got {model_bytes!r})")
    T = float(compute_ms)
    if not (math.isfinite(T) and T > 0):
        raise ProfileError(f"resnet50_like: compute_ms must be > 0 (got {compute_ms!r})")
    s = (2 * M) // (9 * L)
    if s <= 0:
        raise ProfileError(
            f"resnet50_like: model_bytes={M} too small for {L} layers "
            f"(s = floor(2M/(9L)) = 0); need model_bytes >= {math.ceil(9 * L / 2)}"
        )
    sizes = []
    for i in range(L):
        if i < L / 2:
            sizes.append(s)
        elif i <= 0.75 * L:
            sizes.append(4 * s)
        else:
            sizes.append(12 * s)
    t_f = T / 3.0
    t_b = 2.0 * T / 3.0
    d_f = 2.0 * t_f / (L * (L - 1))
    d_b = 2.0 * t_b / (L * (L - 1))
    fp = [2.0 * t_f / L - i * d_f for i in range(L)]
    fp[L - 1] = d_f
    bp = [i * d_b for i in range(L)]
    bp[0] = d_b
    name = f"resnet50-like-L{L}-M{M}-T{T:g}"
    profile = Profile(name, tuple(sizes), tuple(fp), tuple(bp))
    check_limits(profile)   # as load_profile reads it back
    return profile


# ---------------------------------------------------------- compute/network ratio


def network_time_ms(model_bytes: float, n_workers: int, link_bps: float) -> float:
    """Ideal ring-allreduce time of the whole model: ``M * 2(1-1/N) * 8 / link_bps`` (ms)."""
    if not model_bytes > 0:
        raise ValueError(f"model_bytes must be > 0 (got {model_bytes!r})")
    if int(n_workers) != n_workers or n_workers < 2:
        raise ValueError(f"n_workers must be an integer >= 2 (got {n_workers!r})")
    if not link_bps > 0:
        raise ValueError(f"link_bps must be > 0 (got {link_bps!r})")
    return model_bytes * 2.0 * (1.0 - 1.0 / n_workers) * 8.0 / link_bps * 1e3


def compute_ms_for_ratio(
    ratio: float, model_bytes: float, n_workers: int, link_bps: float
) -> float:
    """Iteration compute time T (ms) giving compute-to-network ratio ``ratio``."""
    if not ratio > 0:
        raise ValueError(f"ratio must be > 0 (got {ratio!r})")
    return ratio * network_time_ms(model_bytes, n_workers, link_bps)


# ------------------------------------------------------------------ scale-down


def scaled(model: Profile, k: int) -> Profile:
    """Each layer's bytes / k (rounded, at least 1); compute times unchanged
    (harness.engine.scaling: the time-preserving scale-down)."""
    if k == 1:
        return model
    return dataclasses.replace(model, name=f"{model.name}/{k}",
                               layer_bytes=tuple(max(1, round(b / k)) for b in model.layer_bytes))
