"""The per-flow ECMP hash's choices, read from the routing objects of a
planned scenario built in ns-3 (nothing is simulated): the interface a
switch forwards each 5-tuple by, as EcmpRouting picks it for every packet
of that flow (EcmpRouting::GetOutputInterface)."""

from __future__ import annotations

from harness.engine.planning import Plan

TCP = 6


def output_interfaces(p: Plan, switch: int,
                      flows: list[tuple[int, int, int, int]]) -> list[int]:
    """The interface `switch` forwards each flow by; a flow is (source host,
    destination host, source port, destination port), over TCP."""
    from harness.engine import ns3
    from harness.engine.simulation import build_recipe

    ns = ns3.load(quiet=True)
    built = build_recipe(ns, p)
    routing = built.GetTopology().GetRouting(switch)
    address = [built.GetHostAddress(h) for h in range(p.topology.n_hosts)]
    out = [int(routing.GetOutputInterface(address[s], address[d], TCP, sp, dp))
           for s, d, sp, dp in flows]
    ns.Simulator.Destroy()
    return out
