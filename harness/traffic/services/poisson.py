"""Poisson UDP packets (`kind = "poisson"`): packets of `packet_size` at a
mean of `bitrate`, with exponential gaps: a known M/D/1 input for the
queueing references. Measured as a stream is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.config.schema.service import KIND_DESCRIPTION, Bitrate
from harness.traffic.services.stream import PacketPlan, Stream, StreamService


class PoissonService(StreamService):
    """Poisson UDP packets: packets of `packet_size` at a mean of `bitrate`,
    with exponential gaps (a known M/D/1 input for queueing references)."""

    example = '{ kind = "poisson", bitrate = "300Mbps", packet_size = 1000 }'
    kind: Literal["poisson"] = Field(description=KIND_DESCRIPTION)
    bitrate: Bitrate = Field(description="the mean rate (UDP payload), e.g. \"300Mbps\"")


class Poisson(Stream):
    name = "poisson"
    order = 40
    summary = "Poisson UDP packets at a mean bitrate (exponential gaps: an M/D/1 input)"
    settings = PoissonService
    poisson = True
    stats = ()   # a queueing reference's input, not a service whose change a sweep maps

    def gap_stream(self, plan: PacketPlan) -> int:
        """Its gaps' random stream: the service's place (below recipe.LOSS_STREAMS)."""
        return plan.index

    def interval_s(self, plan: PacketPlan) -> None:
        return None


KIND = Poisson()
