"""EcmpRouting's delivery decision, in ns-3: a packet is delivered to the
node when ns-3's Ipv4L3Protocol::IsDestinationAddress says it is for the
node, and forwarded otherwise. RouteInput answers the forwarding case from
a set of the node's own addresses instead of asking ns-3 (which walks every
interface); here every kind of destination is checked against ns-3's own
answer, on a node whose addresses were given before the routing protocol
was installed and on one whose were given after."""

from __future__ import annotations

import pytest

from conftest import compiled_class

CHECK = r"""
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ecmp-routing-helper.h"

namespace ddnn_ecmp_test
{
// One switch-like node with three point-to-point links (its interfaces 1-3)
// to three leaf nodes. The switch's links are addressed before or after its
// EcmpRouting is installed; it has a route to every leaf address.
struct EcmpDelivery
{
    ns3::Ptr<ns3::Node> sw;
    ns3::Ptr<ns3::Ipv4> ipv4;
    ns3::Ptr<ns3::EcmpRouting> routing;
    ns3::NetDeviceContainer devices; // switch side, one per link
    std::vector<ns3::Ipv4Address> peers;

    explicit EcmpDelivery(bool addressFirst)
    {
        ns3::NodeContainer nodes;
        nodes.Create(4);
        sw = nodes.Get(0);
        ns3::PointToPointHelper p2p;
        std::vector<ns3::NetDeviceContainer> links;
        for (uint32_t i = 1; i < 4; i++)
        {
            links.push_back(p2p.Install(sw, nodes.Get(i)));
            devices.Add(links.back().Get(0));
        }
        ns3::InternetStackHelper stack;
        stack.SetRoutingHelper(ns3::EcmpRoutingHelper());
        stack.Install(nodes);
        ipv4 = sw->GetObject<ns3::Ipv4>();
        // another network per instance: ns-3 refuses an address given twice
        ns3::Ipv4AddressHelper addresses(addressFirst ? "10.9.0.0" : "10.10.0.0",
                                         "255.255.255.252");
        for (auto& link : links)
        {
            peers.push_back(addresses.Assign(link).GetAddress(1));
            addresses.NewNetwork();
        }
        routing = ns3::EcmpRoutingHelper::GetRouting(sw); // told of each address as added
        if (addressFirst)
        {
            // a protocol installed once the addresses exist: SetIpv4 gathers them
            routing = ns3::CreateObject<ns3::EcmpRouting>();
            ipv4->SetRoutingProtocol(routing);
        }
        for (uint32_t i = 0; i < peers.size(); i++)
        {
            routing->AddRoute(peers[i], i + 1, peers[i]);
        }
    }

    // What RouteInput did with a packet to `destination` arriving on link 0:
    // 1 delivered, 2 forwarded, 3 dropped with an error, 0 nothing.
    int Route(ns3::Ipv4Address destination)
    {
        ns3::Ipv4Header header;
        header.SetSource(peers[0]);
        header.SetDestination(destination);
        header.SetProtocol(17);
        auto packet = ns3::Create<ns3::Packet>(8);
        int outcome = 0;
        routing->RouteInput(
            packet,
            header,
            devices.Get(0),
            [&outcome](ns3::Ptr<ns3::Ipv4Route>, ns3::Ptr<const ns3::Packet>,
                       const ns3::Ipv4Header&) { outcome = 2; },
            [](ns3::Ptr<ns3::Ipv4MulticastRoute>, ns3::Ptr<const ns3::Packet>,
               const ns3::Ipv4Header&) {},
            [&outcome](ns3::Ptr<const ns3::Packet>, const ns3::Ipv4Header&, uint32_t) {
                outcome = 1;
            },
            [&outcome](ns3::Ptr<const ns3::Packet>, const ns3::Ipv4Header&,
                       ns3::Socket::SocketErrno) { outcome = 3; });
        return outcome;
    }

    bool ForNode(ns3::Ipv4Address destination)
    {
        return ipv4->IsDestinationAddress(destination, ipv4->GetInterfaceForDevice(devices.Get(0)));
    }

    ns3::Ipv4Address Own(uint32_t interface, bool broadcast)
    {
        auto address = ipv4->GetAddress(interface, 0);
        return broadcast ? address.GetBroadcast() : address.GetLocal();
    }
};
} // namespace ddnn_ecmp_test
"""


@pytest.fixture(scope="module")
def delivery():
    import cppyy

    yield compiled_class("ddnn_ecmp_test", "EcmpDelivery", CHECK)
    cppyy.gbl.ns3.Simulator.Destroy()   # and with it the nodes, for the tests after


@pytest.mark.parametrize("address_first", [False, True])
def test_delivers_exactly_what_ns3_says_is_for_the_node(delivery, address_first):
    import cppyy

    Ipv4Address = cppyy.gbl.ns3.Ipv4Address
    d = delivery(address_first)
    cases = {}
    for interface in (1, 2, 3):        # every interface's own and broadcast address
        cases[f"own {interface}"] = d.Own(interface, False)
        cases[f"broadcast {interface}"] = d.Own(interface, True)
    cases["loopback"] = Ipv4Address("127.0.0.1")
    cases["limited broadcast"] = Ipv4Address("255.255.255.255")
    cases["multicast"] = Ipv4Address("224.0.0.9")
    for i in range(3):
        cases[f"peer {i}"] = d.peers[i]  # another node's address: routed
    cases["unknown"] = Ipv4Address("10.200.0.1")  # no route: dropped
    for name, destination in cases.items():
        outcome = d.Route(destination)
        if d.ForNode(destination):
            assert outcome == 1, name
        else:
            assert outcome in (2, 3), name
    assert d.Route(d.peers[2]) == 2 and d.Route(Ipv4Address("10.200.0.1")) == 3
    assert d.ForNode(d.Own(2, False)) and d.Route(d.Own(2, False)) == 1
