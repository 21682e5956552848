"""The RDMA (RoCEv2) stack of the hosts whose jobs move gradients over RDMA
(training.transport = "rdma"): the queue pairs' and DCQCN's attribute
defaults ([rdma], rates and byte counter scaled) and one `rdma` line per
such host (ns3-modules/rdma/rdma-socket-factory), in the scenario recipe."""

from __future__ import annotations

from harness.io.recipe_tokens import component, token
from harness.network.pfc import PPP_BYTES

FACTORY = "ns3::RdmaSocketFactory"
#: IP (20), UDP (8), the BTH (12) and the ICRC (4): a packet's bytes besides its payload
HEADER_BYTES = 20 + 8 + 12 + 4


def payload_bytes(mtu: int) -> int:
    """Payload per packet at `mtu` (1456 at 1500)."""
    return mtu - HEADER_BYTES


def payload_share(mtu: int) -> float:
    """Payload per byte on the wire, a full packet's framing included
    (1456 / 1502 at 1500)."""
    return payload_bytes(mtu) / (mtu + PPP_BYTES)


def recipe_lines(scenario, classes, hosts: list[int]) -> list[str]:
    """The defaults and the `rdma` lines of `hosts` (none: no line at all)."""
    if not hosts:
        return []
    cfg = scenario.rdma
    cnp_tos = -1 if cfg.cnp_class is None else classes.tos(cfg.cnp_class, "rdma.cnp_class")
    lines = [f"default {token(name, 'RDMA attribute')} {token(str(value), name)}"
             for name, value in cfg.attribute_defaults(scenario.scale,
                                                       payload_bytes(scenario.network.mtu),
                                                       cnp_tos)]
    lines += [f"rdma {h} {component(FACTORY, {})}" for h in hosts]
    return lines
