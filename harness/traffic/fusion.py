"""Tensor fusion and partitions: how a profile's gradients are grouped
into the units a job sends (docs/model/training.md).

* ``fusion_buffer_bytes`` / ``check_fits`` / ``fuse`` -- Horovod-like tensor
  fusion: the default fusion buffer is one byte more than the largest layer,
  a layer is never split, and during backward (L-1..0) the open buffer is
  closed right after layer ``i`` when layer ``i-1`` would overflow it (or when
  ``i == 0``).
* ``partition`` -- ByteScheduler on a ring: no fusion, each layer cut into
  pieces of a fixed size.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.traffic.profiles import Profile, ProfileError, is_integral

__all__ = ["Buffer", "check_fits", "fuse", "fusion_buffer_bytes", "partition"]


@dataclass(frozen=True)
class Buffer:
    """One fused gradient buffer.

    ``layers`` in backward order (highest first); ``priority`` is the lowest
    layer index it holds (lower value = more urgent).
    """

    index: int
    layers: tuple[int, ...]
    bytes: int
    priority: int

    @property
    def label(self) -> str:
        """``"49-44"`` (first-last in backward order) or ``"7"`` for one layer."""
        if len(self.layers) == 1:
            return str(self.layers[0])
        return f"{self.layers[0]}-{self.layers[-1]}"


def fusion_buffer_bytes(profile: Profile) -> int:
    """The default fusion buffer: one byte more than the largest layer."""
    return profile.largest_layer + 1


def check_fits(profile: Profile, fusion_buffer: int) -> None:
    """Raise ProfileError naming the first layer larger than ``fusion_buffer``."""
    if isinstance(fusion_buffer, bool) or not is_integral(fusion_buffer) or fusion_buffer <= 0:
        raise ProfileError(
            f"profile {profile.name!r}: fusion_buffer must be an integer > 0 "
            f"(got {fusion_buffer!r})"
        )
    for i, b in enumerate(profile.layer_bytes):
        if b > fusion_buffer:
            raise ProfileError(
                f"profile {profile.name!r} layer {i}: bytes {b} exceed the fusion buffer "
                f"({fusion_buffer} B); a layer is never split, so the fusion buffer must "
                f"be >= the largest layer ({profile.largest_layer} B)"
            )


def fuse(profile: Profile, fusion_buffer: int | None = None) -> list[Buffer]:
    """Group layers into fusion buffers in backward order (docs/model/training.md).

    Backward runs L-1..0; after backward of layer ``i`` its gradients join the
    open buffer, which is closed right after ``i`` when ``i == 0`` or when
    ``open_bytes + P_{i-1} > fusion_buffer``.  Buffer 0 is the first closed
    (it holds the highest layers).
    """
    fb = fusion_buffer_bytes(profile) if fusion_buffer is None else fusion_buffer
    check_fits(profile, fb)
    P = profile.layer_bytes
    out: list[Buffer] = []
    open_layers: list[int] = []
    open_bytes = 0
    for i in range(profile.n_layers - 1, -1, -1):
        open_layers.append(i)
        open_bytes += P[i]
        if i == 0 or open_bytes + P[i - 1] > fb:
            out.append(Buffer(len(out), tuple(open_layers), open_bytes, min(open_layers)))
            open_layers = []
            open_bytes = 0
    return out


def partition(profile: Profile, partition_bytes: int) -> list[Buffer]:
    """ByteScheduler on a ring (no fusion): each layer's gradients, in backward
    order, cut into ``partition_bytes`` pieces in offset order (the last one
    smaller); each piece is a buffer of its own, priority = its layer."""
    if isinstance(partition_bytes, bool) or not is_integral(partition_bytes) \
            or partition_bytes <= 0:
        raise ProfileError(f"partition_bytes must be an integer > 0 (got {partition_bytes!r})")
    out: list[Buffer] = []
    for i in range(profile.n_layers - 1, -1, -1):
        for offset in range(0, profile.layer_bytes[i], partition_bytes):
            size = min(partition_bytes, profile.layer_bytes[i] - offset)
            out.append(Buffer(len(out), (i,), size, i))
    return out
