"""[network]: queue discipline, classes and buffers of every egress, and
link rates changing during the run."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr, computed_field, \
    model_validator
from pydantic.functional_validators import ModelWrapValidatorHandler

from harness.config.errors import ConfigError
from harness.config.schema.base import (Bytes, Hosts, Int, LinkRate, Number, PerClass, Section,
                                        Str, Table, Time, Toml, unit_string)
from harness.config.units import BYTE_UNITS, UINT32_MAX, parse_bytes

QDISCS = ("pfifo_fast", "prio", "drr")
BUFFER_MODELS = ("per_band", "shared", "dynamic")
BUFFER_POOLS = ("port", "switch")
#: Choudhury and Hahne's alpha spans 1/64..64 in switch ASICs; beyond, a band
#: could hold the whole pool (or nothing) and the model stops meaning anything.
ALPHA_RANGE = (1 / 64, 64.0)


def _some_hosts(hosts: tuple) -> tuple:
    if not hosts:  # () is "every link": an empty list must not be
        raise ConfigError("", "is empty, which names no host; list the hosts whose links "
                          "change, or leave hosts out for every link")
    return hosts


class LinkChange(Section):
    """From time `at` (s), the links of `hosts` (() = every link) run at `rate_bps`."""

    example = '{ at = 1.0, rate = "500Mbps", hosts = [4] }'
    at: Time = Field(description="when the change happens")
    rate_bps: LinkRate = Field(alias="rate", description="the links' new rate (scaled by `scale`)")
    hosts: Annotated[Hosts, AfterValidator(_some_hosts)] = Field((), description=(
        "hosts whose links change, both directions; empty = every link"))


LOSS_DIRECTIONS = ("to_host", "from_host", "both")


class LossConfig(Section):
    """Random packet loss on the links of `hosts` ([network.loss]): each packet
    arriving over such a link, in `direction`, is dropped with probability
    `rate`, independently (ns-3's RateErrorModel as the receiving device's
    ReceiveErrorModel)."""

    example = '{ rate = 1e-3, hosts = [1] }'
    rate: Number(gt=0, lt=1) = Field(description=(
        "probability that a packet is lost, 0 < rate < 1 (e.g. 1e-3)"))
    hosts: Hosts = Field((), description="hosts whose links lose packets; empty = every host")
    direction: Literal[LOSS_DIRECTIONS] = Field("to_host", description=(
        "`to_host` (packets arriving at the host), `from_host` (packets the host sends, lost "
        "at the switch's end) or `both`"))


def _buffer_size(value: Any) -> Any:
    """Packets (an integer) or bytes ("1.5MB"): ns-3 keeps a QueueSize as a uint32."""
    if not isinstance(value, str):
        return value
    # whether it holds a full packet is NetworkConfig's check: the packet is network.mtu
    return parse_bytes(value, "", maximum=UINT32_MAX)


def _alpha(value: float) -> float:
    lo, hi = ALPHA_RANGE
    if not lo <= value <= hi:
        raise ConfigError("", f"must be within 1/64..64 (a band may hold alpha x the free pool; "
                          f"switch ASICs use 1/16..8), got {value:g}")
    return value


Alpha = Annotated[Number(gt=0), AfterValidator(_alpha),
                  Field(json_schema_extra={"minimum": ALPHA_RANGE[0], "maximum": ALPHA_RANGE[1]})]
Alphas = PerClass(Alpha, "a number (e.g. 1) or a non-empty table of class name -> alpha "
                  "(e.g. { high = 8, low = 0.5 })", "number or table")


class SizedSection(Section):
    """A section whose sizes (`size_keys`) are packets (integers) or bytes
    ("1.5MB", "5KB"), all alike: `unit` says which, as written."""

    size_keys: ClassVar[tuple[str, ...]] = ()
    _unit: str = PrivateAttr("packets")

    @computed_field
    @property
    def unit(self) -> str:
        """"packets", or "bytes" where the sizes were given as e.g. "1.5MB"."""
        return self._unit

    @model_validator(mode="wrap")
    @classmethod
    def _size_unit(cls, data: Any, handler: ModelWrapValidatorHandler) -> "SizedSection":
        out = handler(data)
        if isinstance(data, dict):
            given = [k for k in cls.size_keys if data.get(k) is not None]
            kinds = {isinstance(data[k], str) for k in given}
            if len(kinds) > 1:
                raise ConfigError(given[-1], f"{' and '.join(given)} in one unit: all packets "
                                  '(integers) or all sizes (e.g. "5KB" and "200KB")')
            if kinds == {True}:
                out._unit = "bytes"
        return out


class BufferConfig(SizedSection):
    """How the bands of an egress share buffer space ([network.buffer]):
    "per_band" (each band its own limit of `size`), "shared" (the default: one limit of
    `size` for all bands of the port) or "dynamic" (a pool of `size`, the
    port's or the whole switch's, `pool`, where a band may hold up to alpha x
    the free pool; `alpha` for every band or per class, others 1). `size` in
    `unit` ("packets" or "bytes"); None = network.band_limit_packets packets."""

    example = '{ model = "shared" }'
    size_keys = ("size",)
    # why shared is the default: docs/findings/what-the-answer-depends-on.md
    model: Literal[BUFFER_MODELS] = Field("shared", description=(
        "`shared` (one limit per port), `per_band` (one per band) or `dynamic` (a pool with "
        "dynamic thresholds)"))
    size: Annotated[Optional[Int(1, UINT32_MAX)], BeforeValidator(
        _buffer_size, json_schema_input_type=Union[Int(1, UINT32_MAX), unit_string(BYTE_UNITS)]),
        Toml("integer or size", "network.band_limit_packets packets")] = Field(None, description=(
            'the limit or pool: packets (an integer) or bytes (e.g. "1.5MB")'))
    pool: Literal[BUFFER_POOLS] = Field("port", description=(
        "dynamic only: one pool per egress (`port`) or per switch (`switch`)"))
    alpha: Alphas = Field(1.0, description=(
        "dynamic only: a band may hold alpha x the free pool; one number, or per class "
        "(e.g. { high = 8, low = 0.5 }; others 1); 1/64..64"))
    @model_validator(mode="after")
    def _dynamic_only(self) -> BufferConfig:
        for key in ("pool", "alpha"):
            if self.given(key) and self.model != "dynamic":
                raise ConfigError(key, f"applies to model = \"dynamic\" only (got "
                                  f"{self.model!r}); leave it out or set model = \"dynamic\"")
        return self

    def size_in(self, band_limit_packets: int) -> tuple[int, str]:
        """(size, unit), the default filled in."""
        return (band_limit_packets, "packets") if self.size is None else (self.size, self.unit)


PacketsOrBytes = Annotated[Int(1, UINT32_MAX), BeforeValidator(
    _buffer_size, json_schema_input_type=Union[Int(1, UINT32_MAX), unit_string(BYTE_UNITS)]),
    Toml("integer or size")]


#: network.ecn_profile.egresses' words (or a list of [from, to] node names).
MARKING_EGRESSES = ("all", "switches", "fabric", "hosts")


class MarkingProfile(SizedSection):
    """RED-like ECN marking ([network.ecn_profile]), as DCQCN deployments
    configure switches: an ECN-capable arrival is marked with probability 0
    while the averaged queue is at or below `kmin`, rising linearly to `pmax`
    at `kmax`, and 1 above `kmax`; the average takes each arrival's queue with
    `weight` (1 = the instantaneous queue). `kmin` and `kmax` in packets (an
    integer) or bytes ("5KB"), both alike; scaled by `scale`."""

    example = '{ kmin = "5KB", kmax = "200KB", pmax = 0.01 }'
    size_keys = ("kmin", "kmax")
    kmin: PacketsOrBytes = Field(description='no mark at or below: packets or bytes ("5KB")')
    kmax: PacketsOrBytes = Field(description='pmax at, every packet above: packets or bytes '
                                 '("200KB")')
    pmax: Number(gt=0, le=1) = Field(0.01, description="the probability at kmax, 0 < pmax <= 1")
    weight: Number(gt=0, le=1) = Field(1.0, description=(
        "the weight of each arrival's queue in the average, 0 < weight <= 1 (1: instantaneous)"))
    classes: Annotated[tuple[Str, ...], Toml("list")] = Field((), description=(
        "the classes whose bands mark; empty = every band"))
    egresses: Annotated[Union[Literal[MARKING_EGRESSES], tuple[tuple[Str, Str], ...]],
                        Toml("a word or a list of [from, to] node names")] = Field(
        "all", description=(
            "the egresses that mark: \"all\", \"switches\" (every switch egress), "
            "\"fabric\" (switch-to-switch egresses, both ways), \"hosts\" (the hosts' "
            "NICs), or [from, to] pairs of node names (h0.., s0..: node `from`'s egress "
            "towards `to`)"))

    @model_validator(mode="after")
    def _ordered(self) -> MarkingProfile:
        if self.kmin >= self.kmax:
            raise ConfigError("kmax", f"must be above kmin ({self.kmin:,}), got {self.kmax:,}")
        return self


PFC_HEADROOM_AUTO = "auto"


def _headroom(value: Any) -> Any:
    """"auto", or bytes as a buffer's size is read."""
    return value if value == PFC_HEADROOM_AUTO else _buffer_size(value)


class PfcConfig(Section):
    """Priority Flow Control (IEEE 802.1Qbb) at every port ([network.pfc]):
    the bands of `classes` are lossless. A switch port counts the bytes of
    each lossless band that came in by it and are still queued; above `xoff`
    (bytes, or `alpha` x the switch pool's free bytes) it sends a pause frame
    of `quanta` upstream, what arrives meanwhile goes to its `headroom`, and
    once at or below xoff - `xon_offset` it resumes. Hosts honour pause
    frames (a paused NIC holds its queue pairs). Sizes scaled by `scale`;
    "auto" headroom is computed from each link as simulated
    (docs/model/lossless.md)."""

    example = '{ classes = ["high"] }'
    classes: Annotated[tuple[Str, ...], Toml("list")] = Field(
        min_length=1, description="the lossless classes (their bands pause, never drop)")
    xoff: Annotated[Optional[Bytes(UINT32_MAX)], Toml(default="30KB")] = Field(None, description=(
        "static XOFF: bytes of a lossless band queued from one ingress port before it pauses "
        "(default 30 KB); not with alpha"))
    alpha: Annotated[Optional[Alpha], Toml(default="static xoff")] = Field(None, description=(
        "dynamic XOFF: alpha x the switch pool's free bytes (network.buffer: model = "
        "\"dynamic\", pool = \"switch\")"))
    xon_offset: Annotated[Optional[Bytes(UINT32_MAX)], Toml(default="2 x network.mtu")] = Field(
        None, description="XON = XOFF - xon_offset bytes (default two full packets, at most "
        "half a static xoff)")
    headroom: Annotated[Union[Literal["auto"], Int(0, UINT32_MAX)], BeforeValidator(
        _headroom, json_schema_input_type=Union[Literal["auto"], Int(0, UINT32_MAX),
                                                unit_string(BYTE_UNITS)]),
        Toml("size or \"auto\"")] = Field("auto", description=(
            "bytes a lossless band may take beyond XOFF per ingress port: \"auto\" (the "
            "link's round trip at its rate plus three frames and the pause frame) or a size "
            "(refused when below that)"))
    quanta: Int(1, 65535) = Field(65535, description=(
        "quanta (512 bit times) each pause frame asks for, 1-65535; resent every half of it"))

    @model_validator(mode="after")
    def _xoff_or_alpha(self) -> PfcConfig:
        if self.xoff is not None and self.alpha is not None:
            raise ConfigError("alpha", "give xoff (a static threshold) or alpha (dynamic), "
                              "not both")
        return self

    @property
    def static_xoff(self) -> int:
        return 30_000 if self.xoff is None else self.xoff


Threshold = Int(1)
Thresholds = PerClass(Threshold, "packets (e.g. 20) or a non-empty table of class name -> "
                      "packets (e.g. { low = 20 })", "integer or table")
Classes = Table(Int(0), "class name -> band number", "{ high = 0, low = 2 }")
Weights = Table(Number(gt=0), "class name -> weight", "{ high = 3, low = 1 }")


class NetworkConfig(Section):
    qdisc: Literal[QDISCS] = Field("pfifo_fast", description=(
        "queue discipline of every egress: `pfifo_fast`, `prio` or `drr` (weighted deficit "
        "round robin)"))
    bands: Int(2, 4) = Field(3, description=(
        "prio and drr: number of bands, 2-4 (pfifo_fast has 3)"))
    # a uint32 packet count in ns-3's QueueSize
    band_limit_packets: Int(1, UINT32_MAX) = Field(1000, description=(
        "packets: the buffer model's default `size` (a port's limit under `shared`, each "
        "band's under `per_band`)"))
    classes: Classes = Field(
        {}, description="class name -> band; default per qdisc: `high` band 0, `low` the last")
    ack_class: Str = Field("data", description=(
        "class of pure ACKs: `data` (their data's class) or a class name"))
    mtu: Int(576, 9000) = Field(1500, description=(
        "bytes, 576-9000; 9000 = jumbo frames (fewer packets: faster, but another network)"))
    link_changes: Annotated[tuple[LinkChange, ...], Toml("list of tables")] = Field(
        (), description="link rates changing during the run (the entries below)")
    # drr: class name -> weight (bands without a named class weigh 1)
    weights: Weights = Field(
        {}, description="drr only: class name -> weight, e.g. { high = 3, low = 1 }; others "
        "weigh 1")
    # ECN step marking: K packets for every band, or per class (bands without a
    # named class do not mark); None = no marking
    ecn_threshold: Annotated[Optional[Thresholds], Toml(default="no marking")] = Field(
            None, description="ECN step marking at K queued packets: one K for every band, or "
            "per class (e.g. { low = 20 }); scaled by `scale`")
    ecn_profile: Annotated[Optional[MarkingProfile], Toml("table", "no profile")] = Field(
        None, description="RED-like ECN marking (kmin, kmax, pmax, weight; the table below) "
        "instead of ecn_threshold's step")
    pfc: Annotated[Optional[PfcConfig], Toml("table", "no PFC")] = Field(None, description=(
        "Priority Flow Control: lossless classes (the table below); default none (every class "
        "lossy)"))
    buffer: Annotated[BufferConfig, Toml("table")] = Field(BufferConfig(), description=(
        "how the bands of an egress share buffer space (the table below)"))
    host_buffer: Annotated[Optional[BufferConfig], Toml("table", "`buffer`")] = Field(
        None, description="the hosts' egresses, if they differ: the keys of `buffer`")
    loss: Annotated[Optional[LossConfig], Toml("table", "no loss")] = Field(None, description=(
        "random packet loss on hosts' links (the table below); default none"))

    @property
    def marks_ecn(self) -> bool:
        return self.ecn_threshold is not None or self.ecn_profile is not None

    @property
    def hosts_buffer(self) -> BufferConfig:
        """The buffer model of the hosts' egresses."""
        return self.buffer if self.host_buffer is None else self.host_buffer

    @model_validator(mode="after")
    def _consistent(self) -> NetworkConfig:
        if self.ecn_threshold is not None and self.ecn_profile is not None:
            raise ConfigError("ecn_profile", "give ecn_threshold (a step at K) or ecn_profile "
                              "(RED-like), not both")
        if self.pfc is not None and self.pfc.alpha is not None and (
                self.buffer.model != "dynamic" or self.buffer.pool != "switch"):
            raise ConfigError("pfc.alpha", "dynamic XOFF is a fraction of the switch's pool: "
                              'needs network.buffer model = "dynamic" and pool = "switch" '
                              f"(got {self.buffer.model!r}, pool {self.buffer.pool!r}); or "
                              "give pfc.xoff")
        if self.given("weights") and self.qdisc != "drr":
            raise ConfigError("weights", f'applies to network.qdisc = "drr" only (got '
                              f'{self.qdisc!r}); set network.qdisc = "drr" or leave weights out')
        for key in ("buffer", "host_buffer"):
            buffer = getattr(self, key)
            if buffer is not None and buffer.size is not None and \
                    self.given("band_limit_packets"):
                raise ConfigError(f"{key}.size", "give the buffer's size here or "
                                  "network.band_limit_packets (its default), not both")
        for key in ("buffer", "host_buffer"):
            buffer = getattr(self, key)
            if buffer is not None and buffer.unit == "bytes" and buffer.size < self.mtu:
                raise ConfigError(f"{key}.size", f"{buffer.size:,} B holds no full packet "
                                  f"(network.mtu = {self.mtu:,} B); use at least "
                                  f"\"{self.mtu}B\" or a packet count (an integer)")
        self.check_thresholds()
        return self

    def full_packets(self, buffer: BufferConfig) -> tuple[int, str]:
        """The full-size packets (network.mtu bytes) a band can hold under
        `buffer` at most, alone in it, and where that limit is set (for
        messages): its size in packets, or in bytes / network.mtu."""
        size, unit = buffer.size_in(self.band_limit_packets)
        key = "network.host_buffer" if buffer is self.host_buffer else "network.buffer"
        if buffer.size is None:
            return size, f"network.band_limit_packets = {size:,}"
        if unit == "packets":
            return size, f"{key}.size = {size:,}"
        return size // self.mtu, (f"{key}.size = {size:,} B, {size // self.mtu:,} packets of "
                                  f"network.mtu = {self.mtu:,} B")

    def check_thresholds(self) -> None:
        """1 <= K < the packets a band holds (full_packets), switches' and
        hosts' alike: a packet is marked when it arrives to K queued, so a
        band that cannot hold K and one more never marks. (dynamic buffers:
        harness.network.qdisc.check_marking, per band.)"""
        k = self.ecn_threshold
        for buffer in [self.buffer, *([self.host_buffer] if self.host_buffer else [])]:
            held, limit = self.full_packets(buffer)
            for where, v in ({"ecn_threshold": k} if isinstance(k, int) else
                             {f"ecn_threshold.{c}": v for c, v in (k or {}).items()}).items():
                if v >= held:
                    allowed = f"1 to {held - 1:,}" if held > 1 else "a larger buffer"
                    raise ConfigError(where, f"{v:,} packets is beyond the band's limit "
                                      f"({limit}): a band never has {v:,} packets queued "
                                      "when one arrives, so it would never mark; allowed: "
                                      f"{allowed}")
