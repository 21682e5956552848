"""Queue disciplines and traffic classes.

Users name traffic classes ("high", "low"); each class maps to a band of the
egress queue discs. ns-3 carries a packet's class as its IP ToS: the sending
socket's ToS gives the socket priority (Linux semantics, Socket::
IpTos2Priority), routers re-derive it from the IP header, and the queue
disc's priomap picks the band. Only four priorities are reachable from a
ToS, so the ToS of each band is an explicit, tested table:

    ToS 0x10 -> priority 6,  0x18 -> 4,  0x00 -> 0,  0x08 -> 2

pfifo_fast has Linux's fixed priomap (6 -> band 0, 0 and 4 -> band 1,
2 -> band 2); it is built as prio with 3 band children and that priomap.
prio gets a priomap that sends the k-th ToS of the table above to band k
(clipped to its last band).

Buffer model ([network.buffer], for hosts [network.host_buffer]): how an
egress's bands share buffer space decides who pays for a burst, so it is a
setting, not a detail. "per_band": a limit per band (Linux since 4.16); a
class sent to a lower band also gets a private buffer. "shared": one limit
for the port (ns-3's own PfifoFastQueueDisc, Linux before 4.16): a starved
low band fills the buffer the high band needs. "dynamic": a pool per port or
per switch with dynamic thresholds (a band may hold up to alpha x the free
pool, as switch ASICs do). ns3-modules/network/shared-buffer and
band-queue-disc implement them.

drr (weighted deficit round robin, ns3-modules/weighted-drr-queue-disc) has
the bands, classes and priomap of prio; each band gets a quantum of
weight / smallest weight x MTU bytes per round, so backlogged bands share
the link by weight and an idle band's share goes to the others.

ECN: with network.ecn_threshold every band named (or all) marks
(BandQueueDisc's MarkThreshold, ns3-modules/network/band-queue-disc): an ECN-capable
packet arriving to K or more queued packets is marked CE, drops only when
the band is full. TCP negotiates ECN when the queues mark (tcp.ecn).
ns-3.44's TCP never sends ECN-capable packets from a socket with a nonzero
ToS (Socket::SetIpTos keeps a stream socket's ECN bits at 0, and
TcpSocketBase::AddSocketTags then sends the ToS as is), which is every class
but ToS 0x00; so with ECN on, the marking bands of each host's egress set
ECT(0) on TCP segments that carry data, as the sender's kernel would (pure
ACKs and SYNs stay not-ECT). A packet's band ignores the ECN bits
(Socket::IpTos2Priority reads (ToS & 0x1e) >> 1 in groups of four).

ACKs: by default (ack_class = "data") a receiver sends its ACKs in the class
of the data they acknowledge, as a receiver marking its replies with the
flow's DSCP would; ack_class = "<class>" puts all ACKs in one class instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.config.scenario import BufferConfig, ConfigError, NetworkConfig
from harness.io.recipe_tokens import component

PFIFO_FAST_BAND_TOS = (0x10, 0x00, 0x08)
PRIO_BAND_TOS = (0x10, 0x18, 0x00, 0x08)
TOS_PRIORITY = {0x10: 6, 0x18: 4, 0x00: 0, 0x08: 2}
PFIFO_FAST_PRIOMAP = (1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)  # Linux prio2band
#: The random streams of RED-like marking start here, one per (link, side,
#: band): fixed, so that a run's marks do not depend on what ran before it
#: in the process (the recipe's loss streams are 1,000 on).
MARK_STREAMS = 1_000_000
#: BandQueueDisc's attributes of a RED-like profile (network.ecn_profile).
PROFILE_ATTRIBUTES = ("MarkMin", "MarkMax", "MarkProbability", "MarkWeight")


def prio_priomap(bands: int) -> list[int]:
    """16-entry priority -> band map that sends PRIO_BAND_TOS[k] to band k."""
    priomap = [bands - 1] * 16
    for band, tos in enumerate(PRIO_BAND_TOS):
        priomap[TOS_PRIORITY[tos]] = min(band, bands - 1)
    return priomap


@dataclass(frozen=True)
class ClassTable:
    """Traffic class name -> band -> IP ToS, for one queue-disc configuration."""

    qdisc: str
    bands: int
    classes: dict[str, int]
    band_tos: tuple[int, ...]

    def band(self, name: str, where: str) -> int:
        if name not in self.classes:
            raise ConfigError(where, f"unknown traffic class {name!r}; "
                              f"allowed: {', '.join(self.classes)}")
        return self.classes[name]

    def tos(self, name: str, where: str) -> int:
        return self.band_tos[self.band(name, where)]

    def band_names(self) -> dict[int, str]:
        """Band -> the names of its classes, comma-separated (the tables'
        traffic_class column)."""
        return {b: ",".join(n for n, bb in self.classes.items() if bb == b)
                for b in range(self.bands)}

    def class_of_tos(self) -> dict[int, str]:
        """ToS -> class name (the first class of each band), for reports."""
        out: dict[int, str] = {}
        for name, band in self.classes.items():
            out.setdefault(self.band_tos[band], name)
        return out


def class_table(net: NetworkConfig) -> ClassTable:
    bands = 3 if net.qdisc == "pfifo_fast" else net.bands
    band_tos = PFIFO_FAST_BAND_TOS if net.qdisc == "pfifo_fast" else PRIO_BAND_TOS[:bands]
    classes = dict(net.classes) or default_classes(bands)
    for name, band in classes.items():
        if band >= bands:
            raise ConfigError(f"network.classes.{name}",
                              f"band {band} does not exist; {net.qdisc} has bands 0..{bands - 1}")
    table = ClassTable(net.qdisc, bands, classes, tuple(band_tos))
    if net.ack_class != "data":
        table.band(net.ack_class, "network.ack_class")
    for name in net.weights:
        table.band(name, f"network.weights.{name}")
    if isinstance(net.ecn_threshold, dict):
        for name in net.ecn_threshold:
            table.band(name, f"network.ecn_threshold.{name}")
    band_weights(net, table)
    band_attributes(net, table)   # every setting of a band names classes of the table
    profile_bands(net, table)
    lossless_bands(net, table)
    band_alphas(net.buffer, table, "network.buffer")
    if net.host_buffer is not None:
        band_alphas(net.host_buffer, table, "network.host_buffer")
    check_marking(net, table)
    return table


def check_marking(net: NetworkConfig, table: ClassTable) -> None:
    """Under dynamic thresholds a band alone is admitted a packet while it
    holds less than alpha x the free pool, so it never holds alpha / (1 +
    alpha) x the pool: a marking threshold K at or above that never marks
    (shared-buffer's Admit; the pool in full-size packets, NetworkConfig.
    full_packets; static limits are the config's check)."""
    thresholds = band_ecn_thresholds(net, table)
    for where, buffer in (("network.buffer", net.buffer), ("network.host_buffer", net.host_buffer)):
        if buffer is None or buffer.model != "dynamic":
            continue
        pool, limit = net.full_packets(buffer)
        for band, (k, alpha) in enumerate(zip(thresholds, band_alphas(buffer, table, where))):
            most = alpha / (1 + alpha) * pool
            if k == 0 or k < most:
                continue
            field = _alpha_field(buffer, table, band, where)
            need = f"alpha above {k / (pool - k):.3g}, or " if pool > k else ""
            raise ConfigError(field, f"alpha = {alpha:g} lets band {band} hold less than alpha "
                              f"/ (1 + alpha) x the pool = {most:.3g} packets ({limit}), "
                              f"never the {k:,} of network.ecn_threshold: it would never mark; "
                              f"allowed: {need}a threshold below {most:.3g}")


def check_scaled_marking(simulated: NetworkConfig, table: ClassTable, k: int) -> None:
    """The marking checks again on the network as simulated at scale = k
    (harness.engine.scaling: thresholds and sizes / k, each rounded, so a
    threshold just below a small buffer may reach it)."""
    if k == 1:
        return
    try:
        simulated.check_thresholds()
        check_marking(simulated, table)
    except ConfigError as e:
        message = e.message
        field = e.field if e.field.startswith("network.") else f"network.{e.field}"
        raise ConfigError(field, f"at scale = {k}, as simulated (thresholds and sizes / {k}, "
                          f"rounded): {message}") from None


def _alpha_field(buffer: BufferConfig, table: ClassTable, band: int, where: str) -> str:
    """The field that set a band's alpha (network.ecn_threshold where alpha is its default)."""
    if not buffer.given("alpha"):
        return "network.ecn_threshold"
    if isinstance(buffer.alpha, dict):
        named = [c for c in buffer.alpha if table.classes.get(c) == band]
        return f"{where}.alpha.{named[0]}" if named else "network.ecn_threshold"
    return f"{where}.alpha"


def band_alphas(buffer: BufferConfig, table: ClassTable, where: str) -> list[float]:
    """dynamic: each band's threshold factor (1 where no class of it is named)."""
    if not isinstance(buffer.alpha, dict):
        return [buffer.alpha] * table.bands
    return _per_band(buffer.alpha, table, f"{where}.alpha", "alpha")


def port_buffer_packets(buffer: BufferConfig, net: NetworkConfig, bands: int) -> int:
    """The most full-size packets one egress can hold under `buffer`: every
    band full (per_band), or the port's limit / the pool (shared, dynamic)."""
    size, unit = buffer.size_in(net.band_limit_packets)
    packets = size if unit == "packets" else -(-size // net.mtu)
    return bands * packets if buffer.model == "per_band" else packets


def band_weights(net: NetworkConfig, table: ClassTable) -> list[float]:
    """drr: the weight of each band (1 where no class of it is named)."""
    return _per_band(net.weights, table, "network.weights", "weight")


def _per_band(by_class: dict[str, float], table: ClassTable, where: str,
              what: str, default: float = 1.0) -> list[float]:
    """Per-class values as one per band (`default` where no class of the
    band is named); two classes of one band with different values are an error."""
    out: list[float | None] = [None] * table.bands
    for name, value in by_class.items():
        band = table.band(name, f"{where}.{name}")
        if out[band] is not None and out[band] != value:
            others = [n for n, b in table.classes.items() if b == band and n != name]
            raise ConfigError(f"{where}.{name}", f"class {name!r} shares band {band} "
                              f"with {', '.join(map(repr, others))}, which has {what} "
                              f"{out[band]:g}: one {what} per band")
        out[band] = value
    return [default if v is None else v for v in out]


def drr_quanta(net: NetworkConfig, table: ClassTable) -> list[int]:
    """Bytes per round for each band: weight / smallest weight x MTU, so the
    lightest band sends at least one full packet per visit."""
    weights = band_weights(net, table)
    lightest = min(weights)
    return [max(1, round(w / lightest * net.mtu)) for w in weights]


def band_ecn_thresholds(net: NetworkConfig, table: ClassTable) -> list[int]:
    """K in packets for each band; 0 = the band does not mark."""
    k = net.ecn_threshold
    if k is None:
        return [0] * table.bands
    if isinstance(k, int):
        return [k] * table.bands
    out = [0] * table.bands
    for name, threshold in k.items():
        out[table.band(name, f"network.ecn_threshold.{name}")] = threshold
    return out


def default_classes(bands: int) -> dict[str, int]:
    classes = {"high": 0, "low": bands - 1}
    if bands > 2:
        classes["normal"] = 1
    return classes


def buffer_settings(buffer: BufferConfig, net: NetworkConfig, table: ClassTable,
                    where: str) -> dict:
    """A buffer model as simulated, for the run's manifest."""
    size, unit = buffer.size_in(net.band_limit_packets)
    out = {"model": buffer.model, "size": size, "unit": unit}
    if buffer.model == "dynamic":
        out.update(pool=buffer.pool, alpha_per_band=band_alphas(buffer, table, where))
    return out


def _queue_size(buffer: BufferConfig, band_limit_packets: int) -> str:
    """The buffer's size as ns-3 reads a QueueSize: "100p" or "150000B"."""
    size, unit = buffer.size_in(band_limit_packets)
    return f"{size}{'p' if unit == 'packets' else 'B'}"


@dataclass(frozen=True)
class BufferAttributes:
    """A buffer model as ns-3 attributes: the egress's (QueueDiscInstaller)
    and the bands' (BandQueueDisc, one value per band)."""

    egress: dict
    bands: dict


class Bands:
    """The queue disc of every egress: prio (strict priority; pfifo_fast is
    prio with Linux's priomap) or weighted DRR over N bands, each a FIFO or an
    ECN step-marking FIFO, sharing buffer space as the buffer model says
    (the switches' and the hosts' may differ). It writes itself into the
    scenario recipe (harness.engine.recipe): one `queue-disc` line per egress,
    three ns-3 components (harness.io.recipe_tokens.component): the egress
    (ns3::QueueDiscInstaller), its root and its bands, which ns-3's
    ScenarioRecipe installs with QueueDiscInstaller and tracks with
    QueueTracker."""

    ROOTS = {"prio": "ns3::PrioQueueDisc", "drr": "ns3::WeightedDrrQueueDisc"}
    BAND = "ns3::BandQueueDisc"
    EGRESS = "ns3::QueueDiscInstaller"

    def __init__(self, root: str, bands: int, priomap, switch_buffer: BufferAttributes,
                 host_buffer: BufferAttributes, quanta=(), band_settings: dict | None = None,
                 ecn_capable: bool = False, ecn_acks: bool = False, marking=(),
                 profile_egresses: frozenset | None = None):
        """switch_buffer / host_buffer: the buffer models (buffer_attributes);
        band_settings: the bands' own attributes (band_attributes); marking:
        whether each band marks ECN (marking_bands; empty: none does);
        profile_egresses: the (link, side) ends whose bands keep the RED-like
        profile (None: every end)."""
        self.root = self.ROOTS[root]
        self.bands = bands
        self.priomap = tuple(priomap)
        self.switch_buffer = switch_buffer
        self.host_buffer = host_buffer
        self.quanta = tuple(quanta)
        self.band_settings = dict(band_settings or {})
        self.ecn_capable = ecn_capable   # TCP negotiates ECN: hosts set ECT on data
        self.ecn_acks = ecn_acks         # and on pure ACKs (tcp.ecn_acks)
        self.marking = tuple(marking) if any(marking) else ()
        self.profile_egresses = profile_egresses

    def root_attributes(self) -> dict:
        """The root queue disc's attributes (lists: ns-3's space-separated lists)."""
        return {"Priomap": self.priomap, "Quanta": self.quanta}

    def band_attributes(self, host: bool) -> dict:
        """Every attribute of the bands, one value per band (None: the
        default). host: the marking bands make TCP data ECN-capable (SetEct)."""
        buffer = self.host_buffer if host else self.switch_buffer
        ect = [host and self.ecn_capable and m for m in self.marking]
        return {**self.band_settings, "SetEct": ect,
                # only where asked: a recipe without it is the same as before the option
                "EctAcks": ect if self.ecn_acks and any(ect) else None,
                **buffer.bands}

    def recipe_line(self, link: int, side: int, from_node: int, to_node: int,
                    host: bool) -> str:
        """The egress of `link`'s `side` (from_node -> to_node); host: the
        egress of a host (its buffer model; data made ECN-capable there)."""
        buffer = self.host_buffer if host else self.switch_buffer
        bands = self.band_attributes(host)
        if "MarkMax" in bands and self.profile_egresses is not None \
                and (link, side) not in self.profile_egresses:
            # network.ecn_profile.egresses leaves this egress out: no profile here
            bands = {k: v for k, v in bands.items() if k not in PROFILE_ATTRIBUTES}
        if "MarkMax" in bands:   # a RED-like profile draws: each band its own stream
            first = MARK_STREAMS + (2 * link + side) * self.bands
            bands["MarkStream"] = list(range(first, first + self.bands))
        return " ".join((f"queue-disc {link} {side} {from_node} {to_node}",
                         component(self.EGRESS, {"Bands": self.bands, **buffer.egress}),
                         component(self.root, self.root_attributes()),
                         component(self.BAND, bands)))


def band_attributes(net: NetworkConfig, table: ClassTable) -> dict:
    """The bands' own settings as attributes of ns3::BandQueueDisc, one value
    per band (None: the attribute's default). A new setting of a band is one
    entry here and one attribute of BandQueueDisc."""
    thresholds = band_ecn_thresholds(net, table)
    out = {"MarkThreshold": thresholds if any(thresholds) else None}
    profile = net.ecn_profile
    if profile is not None:
        marking = profile_bands(net, table)
        unit = "B" if profile.unit == "bytes" else "p"
        out.update(MarkMin=[f"{profile.kmin if m else 0}{unit}" for m in marking],
                   MarkMax=[f"{profile.kmax if m else 0}{unit}" for m in marking],
                   MarkProbability=[profile.pmax] * table.bands,
                   MarkWeight=[profile.weight] * table.bands)
    if net.pfc is not None:
        out["Lossless"] = lossless_bands(net, table)
    return out


def profile_bands(net: NetworkConfig, table: ClassTable) -> list[bool]:
    """network.ecn_profile: whether each band marks (its classes, or every band)."""
    profile = net.ecn_profile
    if profile is None:
        return [False] * table.bands
    if not profile.classes:
        return [True] * table.bands
    out = [False] * table.bands
    for name in profile.classes:
        out[table.band(name, "network.ecn_profile.classes")] = True
    return out


def lossless_bands(net: NetworkConfig, table: ClassTable) -> list[bool]:
    """network.pfc: whether each band is lossless (one of pfc.classes is in it)."""
    out = [False] * table.bands
    for name in (net.pfc.classes if net.pfc is not None else ()):
        out[table.band(name, "network.pfc.classes")] = True
    return out


def marking_bands(net: NetworkConfig, table: ClassTable) -> list[bool]:
    """Whether each band marks ECN at all: a step (ecn_threshold) or a profile."""
    return [k > 0 or p for k, p in zip(band_ecn_thresholds(net, table),
                                        profile_bands(net, table))]


def buffer_attributes(buffer: BufferConfig, net: NetworkConfig, table: ClassTable,
                      where: str) -> BufferAttributes:
    """A buffer model as the egress's and the bands' ns-3 attributes."""
    alphas = band_alphas(buffer, table, where) if buffer.model == "dynamic" else []
    return BufferAttributes(
        egress={"BufferModel": buffer.model,
                "BufferSize": _queue_size(buffer, net.band_limit_packets),
                "BufferPool": buffer.pool},
        bands={"Alpha": alphas})


def strategy(net: NetworkConfig, table: ClassTable | None = None, ecn: bool = False,
             ecn_acks: bool = False, profile_egresses: frozenset | None = None):
    """The queue-disc strategy for every egress of the network. `net` as
    simulated (buffer sizes and ECN thresholds scaled); ecn: TCP negotiates
    ECN (harness.network.tcp.ecn_on); ecn_acks: pure ACKs are ECN-capable too;
    profile_egresses: where the RED-like profile applies (planning's
    marking_egresses; None: everywhere)."""
    table = table or class_table(net)
    priomap = PFIFO_FAST_PRIOMAP if net.qdisc == "pfifo_fast" else prio_priomap(table.bands)
    quanta = drr_quanta(net, table) if net.qdisc == "drr" else ()
    return Bands("drr" if net.qdisc == "drr" else "prio", table.bands, priomap,
                 buffer_attributes(net.buffer, net, table, "network.buffer"),
                 buffer_attributes(net.hosts_buffer, net, table, "network.host_buffer"),
                 quanta, band_attributes(net, table), ecn, ecn_acks, marking_bands(net, table),
                 profile_egresses)
