"""Priority Flow Control at every port (network.pfc): one ns3::PfcPort per
link end (ns3-modules/network/pfc-port), written into the scenario recipe
after the queue discs (harness.engine.recipe).

Switch ports account their lossless ingress and pause upstream (Generate);
hosts' NICs only honour pause. The headroom a port needs is what can still
arrive after it decides to pause (docs/model/lossless.md):

    2 x delay x rate   the bytes on the wire toward it when the pause leaves,
                       and those sent while the pause travels (one delay each)
    + 3 frames         the packet that crossed XOFF (it may itself go to the
                       headroom), the frame the upstream port is sending when
                       the pause arrives, and the one in its device queue
    + 64 B             the pause frame's own time on the wire

"auto" gives each port exactly that for its link as simulated; a smaller
headroom given by hand is refused, naming the link and what it needs.
"""

from __future__ import annotations

import math

from harness.config.scenario import ConfigError, NetworkConfig
from harness.io.recipe_tokens import component
from harness.network.graph import Topology

PORT = "ns3::PfcPort"
PAUSE_FRAME_BYTES = 64   # PfcPort::FRAME_BYTES
PPP_BYTES = 2            # ns-3's point-to-point framing on every packet


def headroom_bytes(rate_bps: float, delay_s: float, mtu: int) -> int:
    """The least headroom with which a port of a link of `rate_bps` and
    one-way `delay_s` loses nothing (the module docstring's arithmetic)."""
    return (math.ceil(2 * delay_s * rate_bps / 8) + 3 * (mtu + PPP_BYTES)
            + PAUSE_FRAME_BYTES)


def xon_offset(net: NetworkConfig) -> int:
    """XOFF - XON, bytes: as given, else two full packets (at most half a static XOFF)."""
    pfc = net.pfc
    if pfc.xon_offset is not None:
        return pfc.xon_offset
    return 2 * net.mtu if pfc.alpha is not None else min(2 * net.mtu, pfc.static_xoff // 2)


def check(net: NetworkConfig, topo: Topology, k: int = 1) -> None:
    """The settings against every link as simulated (`net` and `topo` at
    scale k): a headroom given by hand holds what is in flight, XON is below
    XOFF."""
    pfc = net.pfc
    if pfc is None:
        return
    at_scale = f" at scale = {k} (as simulated)" if k > 1 else ""
    if pfc.alpha is None and xon_offset(net) >= pfc.static_xoff:
        raise ConfigError("network.pfc.xon_offset", f"{xon_offset(net):,} B puts XON at or "
                          f"below 0 (XOFF {pfc.static_xoff:,} B{at_scale}): the port would "
                          f"never resume; allowed: below xoff, e.g. {2 * net.mtu:,} B "
                          "(two full packets)")
    if pfc.headroom == "auto":
        return
    for link in topo.links:
        need = headroom_bytes(link.rate_bps, link.delay_s, net.mtu)
        if pfc.headroom < need:
            raise ConfigError("network.pfc.headroom", f"{pfc.headroom:,} B cannot absorb what "
                              f"is in flight on link {link.a}-{link.b} ({link.rate_bps:.4g} "
                              f"bit/s, {link.delay_s * 1e6:g} us{at_scale}): it needs "
                              f"{need:,} B (2 x delay x rate + 3 frames + the pause frame); "
                              f'allowed: "auto" or at least {need:,} B')


def recipe_lines(net: NetworkConfig, topo: Topology, window_ns: tuple[int, int]) -> list[str]:
    """One `pfc` line per link end, none without network.pfc; each counts
    its pause time over the measurement window `window_ns`."""
    pfc = net.pfc
    if pfc is None:
        return []
    lines = []
    for i, side, src, dst in topo.egresses():   # one port per link end
        link = topo.links[i]
        headroom = (headroom_bytes(link.rate_bps, link.delay_s, net.mtu)
                    if pfc.headroom == "auto" else pfc.headroom)
        attributes = {"Generate": src >= topo.n_hosts,
                      "Xoff": pfc.static_xoff if pfc.alpha is None else None,
                      "XoffAlpha": pfc.alpha,
                      "XonOffset": xon_offset(net), "Headroom": headroom,
                      "PauseQuanta": pfc.quanta,
                      "WindowStart": f"{window_ns[0]}ns", "WindowEnd": f"{window_ns[1]}ns"}
        lines.append(f"pfc {i} {side} {src} {dst} {component(PORT, attributes)}")
    return lines
