"""[rdma]: the RDMA (RoCEv2) queue pairs of the jobs that move their
gradients over RDMA (training.transport = "rdma"): DCQCN's constants, with
the defaults of Zhu et al. (SIGCOMM 2015), and the transport's own."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, Field

from harness.config.schema.base import Bytes, Int, Number, PositiveTime, Section, Str, Toml, \
    unit_string
from harness.config.units import RATE_UNITS, parse_rate

RATE_CONTROLS = {"dcqcn": "ns3::Dcqcn"}

#: A rate in bit/s > 0 (a step of DCQCN's, scaled by `scale`: may end below a link's minimum).
Rate = Annotated[float, BeforeValidator(
    lambda v: parse_rate(v, ""), json_schema_input_type=unit_string(RATE_UNITS)),
    Field(gt=0), Toml("rate")]


class RdmaConfig(Section):
    congestion_control: Literal[tuple(RATE_CONTROLS)] = Field("dcqcn", description=(
        "the senders' congestion control: `dcqcn`"))
    g: Number(gt=0, le=1) = Field(1 / 256, description="DCQCN's g, the weight of a CNP in "
                                  "alpha, 0 < g <= 1 (1/256)")
    alpha_period: PositiveTime = Field(55e-6, description=(
        "alpha decays by (1 - g) each period without a CNP (55us)"))
    rate_increase_period: PositiveTime = Field(55e-6, description=(
        "T: an increase event each period after a cut (55us)"))
    byte_counter: Bytes() = Field(10_000_000, description=(
        "B: an increase event per this many bytes sent after a cut (10MB; scaled)"))
    fast_recovery: Int(1, 1000) = Field(5, description=(
        "F: increase events of fast recovery before additive increase (5)"))
    additive_increase: Rate = Field(40e6, description="R_AI, bit/s (40Mbps; scaled)")
    hyper_increase: Rate = Field(200e6, description="R_HAI, bit/s (200Mbps; scaled)")
    min_rate: Rate = Field(1e6, description="the lowest rate a cut leaves (1Mbps; scaled)")
    cnp_interval: PositiveTime = Field(50e-6, description=(
        "the receiver sends at most one CNP per queue pair per interval (50us)"))
    ack_interval: Int(1, 1024) = Field(4, description=(
        "a data packet in every this many asks for an ACK (and the last one sent)"))
    retransmit_timeout: PositiveTime = Field(0.01, description=(
        "go back to the first unacknowledged packet after this long without an ACK (10ms)"))
    cnp_class: Annotated[Optional[Str], Toml(default="the ACKs' class")] = Field(
        None, description="the class CNPs travel in; default that of the receiver's ACKs")

    def attribute_defaults(self, k: int, payload: int, cnp_tos: int) -> list[tuple[str, Any]]:
        """(ns-3 attribute, value) for Config::SetDefault: the rates and the
        byte counter / k (time-preserving scaling), times kept."""
        ns = lambda s: f"{round(s * 1e9)}ns"  # noqa: E731
        bps = lambda r: f"{max(1, round(r / k))}bps"  # noqa: E731
        return [("ns3::RdmaSocket::PayloadSize", payload),
                ("ns3::RdmaSocket::AckInterval", self.ack_interval),
                ("ns3::RdmaSocket::RetransmitTimeout", ns(self.retransmit_timeout)),
                ("ns3::RdmaSocket::CnpInterval", ns(self.cnp_interval)),
                ("ns3::RdmaSocket::CnpTos", cnp_tos),
                ("ns3::RdmaSocket::RateControl", RATE_CONTROLS[self.congestion_control]),
                ("ns3::Dcqcn::G", repr(self.g)),
                ("ns3::Dcqcn::AlphaPeriod", ns(self.alpha_period)),
                ("ns3::Dcqcn::RateIncreasePeriod", ns(self.rate_increase_period)),
                ("ns3::Dcqcn::ByteCounter", max(1, round(self.byte_counter / k))),
                ("ns3::Dcqcn::F", self.fast_recovery),
                ("ns3::Dcqcn::AdditiveIncrease", bps(self.additive_increase)),
                ("ns3::Dcqcn::HyperIncrease", bps(self.hyper_increase)),
                ("ns3::Dcqcn::MinRate", bps(self.min_rate))]
