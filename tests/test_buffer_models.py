"""Buffer models (network.buffer): how an egress's bands share buffer space.

The admission tests offer packets straight to real ns-3 queue discs, built by
the harness's QueueDiscInstaller (from the recipe components the harness
writes) on real point-to-point devices, with nothing
dequeuing them: what each band accepts is the buffer model's defining
behaviour, exactly. The run tests check the same through the whole harness.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from harness.config.scenario import load_scenario
from harness.config.errors import ConfigError
from harness.network.qdisc import PFIFO_FAST_PRIOMAP, port_buffer_packets
from harness.engine.simulation import execute
from harness.engine.planning import plan

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)

HIGH, LOW = 6, 2          # socket priorities of pfifo_fast's band 0 and band 2
PAYLOAD = 1480            # + 20 B IP header = 1500 B queue disc items

_HELPER = r"""
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/socket.h"
namespace buffer_test {
using namespace ns3;
/// One node with `ports` egresses (each to a peer of its own), the queue
/// disc of a `queue-disc` recipe line's components (EGRESS ROOT BANDS, as
/// ScenarioRecipe reads them) on each; returns the root queue discs, initialised.
std::vector<Ptr<QueueDisc>> Build(const std::string& components, uint32_t ports) {
    RecipeArgs args("queue-disc " + components, 1);
    const RecipeComponent egress(args, QueueDiscInstaller::GetTypeId());
    Ptr<QueueDiscInstaller> installer = egress.GetFactory().Create<QueueDiscInstaller>();
    installer->SetRoot(RecipeComponent(args, QueueDisc::GetTypeId()));
    installer->SetBands(RecipeComponent(args, QueueDisc::GetTypeId(), installer->GetNBands()));
    NodeContainer hub;
    hub.Create(1);
    NodeContainer peers;
    peers.Create(ports);
    InternetStackHelper stack;
    stack.Install(hub);
    stack.Install(peers);
    PointToPointHelper p2p;
    std::vector<Ptr<QueueDisc>> roots;
    for (uint32_t i = 0; i < ports; ++i) {
        NetDeviceContainer devices = p2p.Install(hub.Get(0), peers.Get(i));
        Ptr<QueueDisc> root = installer->Install(devices.Get(0));
        root->Initialize();
        roots.push_back(root);
    }
    return roots;
}
/// Offers `n` packets of `payload` bytes at socket priority `priority`;
/// returns how many the queue disc accepted.
uint32_t Offer(Ptr<QueueDisc> root, uint32_t n, uint8_t priority, uint32_t payload) {
    uint32_t accepted = 0;
    for (uint32_t i = 0; i < n; ++i) {
        Ptr<Packet> packet = Create<Packet>(payload);
        SocketPriorityTag tag;
        tag.SetPriority(priority);
        packet->AddPacketTag(tag);
        accepted += root->Enqueue(Create<Ipv4QueueDiscItem>(packet, Address(), 0x0800,
                                                              Ipv4Header()));
    }
    return accepted;
}
}
"""


@pytest.fixture(scope="module")
def ns():
    from harness.engine import ns3

    namespace = ns3.load(quiet=True)
    import cppyy

    cppyy.cppdef(_HELPER)
    return namespace


@pytest.fixture(autouse=True)
def _simulator_left_empty(ns):
    # each test builds its own nodes; none are left for the tests after
    # (another file's run in this process)
    yield
    ns.Simulator.Destroy()


def _components(model: str, limit: str, pool: str = "port", alphas: str = "",
                thresholds: str = "") -> str:
    """A pfifo_fast egress's recipe components (EGRESS ROOT BANDS), written
    as the harness writes them (harness.io.recipe_tokens.component)."""
    from harness.io.recipe_tokens import component
    from harness.network.qdisc import Bands

    return " ".join((
        component(Bands.EGRESS, {"Bands": 3, "BufferModel": model, "BufferSize": limit,
                                 "BufferPool": pool}),
        component("ns3::PrioQueueDisc", {"Priomap": PFIFO_FAST_PRIOMAP}),
        component(Bands.BAND, {"MarkThreshold": [int(k) for k in thresholds.split()],
                               "Alpha": [float(a) for a in alphas.split()]})))


def _ports(ns, model: str, limit: str, ports: int = 1, pool: str = "port",
           alphas: str = ""):
    import cppyy

    return list(cppyy.gbl.buffer_test.Build(_components(model, limit, pool, alphas), ports))


def _offer(root, n: int, priority: int) -> int:
    import cppyy

    return cppyy.gbl.buffer_test.Offer(root, n, priority, PAYLOAD)


def _band_packets(root) -> list[int]:
    return [root.GetQueueDiscClass(b).GetQueueDisc().GetNPackets() for b in range(3)]


def test_per_band_gives_each_band_a_private_limit(ns):
    [root] = _ports(ns, "per_band", "10p")
    assert _offer(root, 15, LOW) == 10           # the low band's own limit
    assert _offer(root, 15, HIGH) == 10          # untouched by the full low band
    assert _band_packets(root) == [10, 0, 10]


def test_shared_limit_drops_high_arrivals_into_an_empty_high_band(ns):
    [root] = _ports(ns, "shared", "10p")
    assert _offer(root, 15, LOW) == 10
    assert _offer(root, 5, HIGH) == 0            # the high band is empty, the port is full
    assert _band_packets(root) == [0, 0, 10]
    stats = root.GetStats()
    assert stats.nTotalDroppedPackets == 10


def test_shared_limit_in_bytes_counts_bytes(ns):
    [root] = _ports(ns, "shared", f"{3 * 1500 + 100}B")   # three 1,500 B items, not four
    assert _offer(root, 2, LOW) == 2
    assert _offer(root, 2, HIGH) == 1
    assert _band_packets(root) == [1, 0, 2]


def test_dynamic_threshold_caps_a_starved_band_and_lends_the_rest(ns):
    # pool B = 100, alpha = 1: a lone band stops at q >= B - q, i.e. 50
    [root] = _ports(ns, "dynamic", "100p")
    assert _offer(root, 100, LOW) == 50
    # the idle high band's share is there for it: q_h < 1 x (100 - 50 - q_h), 25 packets
    assert _offer(root, 100, HIGH) == 25
    assert _band_packets(root) == [25, 0, 50]


def test_dynamic_alpha_per_band(ns):
    # high alpha 8, low alpha 1/2: low stops at q >= (100 - q) / 2 -> 34;
    # then high q < 8 (66 - q) -> 59
    [root] = _ports(ns, "dynamic", "100p", alphas="8 1 0.5")
    assert _offer(root, 100, LOW) == 34
    assert _offer(root, 100, HIGH) == 59
    assert sum(_band_packets(root)) <= 100


def test_switch_pool_is_shared_by_the_ports_of_a_node(ns):
    port_a, port_b = _ports(ns, "dynamic", "100p", ports=2, pool="switch")
    assert _offer(port_a, 100, LOW) == 50
    assert _offer(port_b, 100, LOW) == 25        # the same pool, half of it taken
    own_a, own_b = _ports(ns, "dynamic", "100p", ports=2, pool="port")
    assert _offer(own_a, 100, LOW) == 50
    assert _offer(own_b, 100, LOW) == 50         # a pool of its own


def test_the_cpp_defaults_are_the_scenario_defaults(ns):
    """QueueDiscInstaller's attribute defaults (for direct C++ users: the
    harness writes every one, harness.network.qdisc) are what the default
    network (harness.config.schema.network) writes: every attribute of the
    TypeId, its initial value as ns-3 serialises it."""
    from harness.config.scenario import NetworkConfig
    from harness.network.qdisc import Bands, strategy

    default = strategy(NetworkConfig())
    written = {"Bands": default.bands, **default.switch_buffer.egress}
    tid = ns.TypeId.LookupByName(Bands.EGRESS)
    cpp = {}
    for i in range(tid.GetAttributeN()):
        info = tid.GetAttribute(i)
        cpp[str(info.name)] = str(info.initialValue.SerializeToString(info.checker))
    assert cpp == {name: str(value) for name, value in written.items()}
    assert default.host_buffer.egress == default.switch_buffer.egress


def test_dequeue_frees_the_pool(ns):
    [root] = _ports(ns, "shared", "4p")
    assert _offer(root, 4, LOW) == 4
    assert _offer(root, 1, HIGH) == 0
    assert root.Dequeue()                        # strict priority: a low packet leaves
    assert _offer(root, 1, HIGH) == 1


# --------------------------------------------------------------------------
# through the harness: the recipe, the queue table, scaling, timers

def _incast_plan(model: str):
    """Four senders into host 0 of 5 hosts at 1 Gbit/s, ports of 40 packets:
    training-like bulk in the low band (ToS 0x08) fills host 0's downlink;
    then two high-band flows (ToS 0x10) take the link (strict priority), the
    low band starves where it stands, and the high band grows into whatever
    buffer the low band leaves it."""
    from tests.conftest import with_flows

    p = plan(load_scenario(None, ["run.duration=0.25", "run.warmup=0.0", "run.cooldown=0.05",
                                  "topology.hosts=5", "network.band_limit_packets=40",
                                  f"network.buffer.model={model}"]))
    rows = [dict(start_ns=0, src=s, dst=0, size=3_000_000, tos=0x08) for s in (1, 2)]
    rows += [dict(start_ns=20_000_000, src=s, dst=0, size=1_000_000, tos=0x10) for s in (3, 4)]
    return with_flows(p, rows)


def _downlink_bands(result, p) -> dict:
    q = result.queues
    down = q[(q["from_node"] >= p.topology.n_hosts) & (q["to_node"] == 0)]
    return down.set_index("band")


@pytest.mark.parametrize("model", ["per_band", "shared", "dynamic"])
def test_run_delivers_every_byte_under_each_model(model):
    p = _incast_plan(model)
    result = execute(p)
    flows = result.flows
    assert flows["completed"].all()
    assert (flows["received_bytes"] == flows["size"]).all()
    bands = _downlink_bands(result, p)
    low_full = bands.loc[2, "max_backlog_packets"]
    buffer_drops = int(result.queues["buffer_dropped_packets"].sum())
    if model == "per_band":
        assert low_full == 40 and buffer_drops == 0
    elif model == "shared":
        # the bands together never exceed the port's 40 packets; every drop
        # at a full port is the pool's
        assert low_full <= 40 and buffer_drops > 0
        assert bands.loc[2, "buffer_dropped_packets"] == bands.loc[2, "dropped_packets"] > 0
    else:
        assert low_full <= 20 and buffer_drops > 0      # alpha 1: half the pool at most
    assert p.resolved()["buffer"]["switches"]["model"] == model


def test_shared_buffer_refuses_high_packets_the_low_band_crowds_out():
    high = {}
    for model in ("per_band", "shared"):
        p = _incast_plan(model)
        high[model] = _downlink_bands(execute(p), p).loc[0]
    # shared: high-band arrivals refused by the full port while their own band
    # was below its limit; per band: never
    assert high["per_band"]["buffer_dropped_packets"] == 0
    assert high["shared"]["buffer_dropped_packets"] > 0


def test_host_buffer_may_differ_from_the_switches():
    p = plan(load_scenario(None, ['network.buffer = { model = "dynamic", pool = "switch" }',
                                  'network.host_buffer = { model = "per_band" }']))
    from harness.engine import recipe

    lines = [line.split() for line in recipe.text(p).splitlines()
             if line.startswith("queue-disc")]

    def buffer(ln):   # the egress component's attributes (ns3::QueueDiscInstaller)
        attributes = dict(a.split("=", 1) for a in ln if a.startswith("Buffer"))
        return attributes["BufferModel"], attributes["BufferPool"]

    host_lines = [ln for ln in lines if int(ln[3]) < p.topology.n_hosts]
    switch_lines = [ln for ln in lines if int(ln[3]) >= p.topology.n_hosts]
    assert host_lines and switch_lines
    assert {buffer(ln)[0] for ln in host_lines} == {"per_band"}
    assert {buffer(ln) for ln in switch_lines} == {("dynamic", "switch")}


def test_scale_divides_buffer_sizes():
    from harness.engine import scaling

    full = load_scenario(None, ['network.buffer = { model = "shared", size = 1000 }',
                                'network.host_buffer = { model = "shared", size = "1.5MB" }'])
    small = scaling.network(full.network, 10)
    assert small.buffer.size == 100 and small.buffer.unit == "packets"
    assert small.host_buffer.size == 150_000 and small.host_buffer.unit == "bytes"
    tiny = scaling.network(full.network, 10_000)
    assert tiny.buffer.size == 1 and tiny.host_buffer.size == full.network.mtu


def test_worst_case_queue_follows_the_buffer_model():
    per_band = load_scenario(None, ['network.buffer = { model = "per_band" }']).network
    shared = load_scenario(None, ['network.buffer = { model = "shared" }']).network
    assert port_buffer_packets(per_band.buffer, per_band, 3) == 3 * 1000
    assert port_buffer_packets(shared.buffer, shared, 3) == 1000
    assert plan(load_scenario(None, ['network.buffer = { model = "shared" }'])).worst_rtt < \
        plan(load_scenario(None, ['network.buffer = { model = "per_band" }'])).worst_rtt


def test_the_buffer_model_is_in_every_digest():
    # the default is shared; a scenario's digest names the model it ran with
    default = load_scenario(None, [])
    assert default.network.buffer.model == "shared"
    assert default.digest() == load_scenario(None, ['network.buffer.model = "shared"']).digest()
    assert default.digest() != load_scenario(None, ['network.buffer.model = "per_band"']).digest()
    assert "buffer" in json.dumps(default.to_dict())


@pytest.mark.parametrize("override, field", [
    ('network.buffer = { model = "dynamic", alpha = { urgent = 2 } }',
     "network.buffer.alpha.urgent"),
    ('network.buffer = { model = "dynamic", alpha = { high = 2, normal = 3 } }', None),
])
def test_alpha_classes_are_checked_against_the_class_table(override, field):
    if field is None:
        plan(load_scenario(None, [override]))    # two classes, two bands: fine
        return
    with pytest.raises(ConfigError) as err:
        plan(load_scenario(None, [override]))
    assert err.value.field == field


_ECT_HELPER = r"""
namespace ecn_edge_test {
using namespace ns3;
/// Offers `n` ECN-capable (ECT(0)) packets of `payload` bytes at socket
/// priority `priority`; returns how many the queue disc accepted.
uint32_t OfferEct(Ptr<QueueDisc> root, uint32_t n, uint8_t priority, uint32_t payload) {
    uint32_t accepted = 0;
    for (uint32_t i = 0; i < n; ++i) {
        Ptr<Packet> packet = Create<Packet>(payload);
        SocketPriorityTag tag;
        tag.SetPriority(priority);
        packet->AddPacketTag(tag);
        Ipv4Header header;
        header.SetEcn(Ipv4Header::ECN_ECT0);
        accepted += root->Enqueue(Create<Ipv4QueueDiscItem>(packet, Address(), 0x0800, header));
    }
    return accepted;
}
}
"""


@pytest.mark.parametrize("model, limit, sets, most", [
    ("per_band", "10p", ['network.buffer={model="per_band",size=10}'], 9),
    ("shared", "15000B", ['network.buffer.size="15000B"'], 9),   # 10 packets of 1,500 B
    ("dynamic", "100p", ['network.buffer={model="dynamic",size=100}'], 49),   # alpha 1: < 50
    ("dynamic", "100p", ['network.buffer={model="dynamic",size=100,alpha=0.25}'], 19),   # < 20
])
def test_the_threshold_check_matches_where_ns3_can_mark(ns, model, limit, sets, most):
    """A marking threshold is accepted exactly where the band can mark
    (issue 48): K = most marks the one packet arriving to K queued; K =
    most + 1 is refused, and in ns-3 it marks nothing (the band drops before
    it holds K), whatever the buffer's unit or model."""
    import cppyy

    if not hasattr(cppyy.gbl, "ecn_edge_test"):
        cppyy.cppdef(_ECT_HELPER)
    alphas = "0.25 0.25 0.25" if "alpha=0.25" in sets[0] else ""
    marked = {}
    for k in (most, most + 1):
        components = _components(model, limit, alphas=alphas, thresholds=f"{k} {k} {k}")
        [root] = list(cppyy.gbl.buffer_test.Build(components, 1))
        cppyy.gbl.ecn_edge_test.OfferEct(root, 200, LOW, PAYLOAD)
        marked[k] = root.GetQueueDiscClass(2).GetQueueDisc().GetStats().nTotalMarkedPackets
    assert marked == {most: 1, most + 1: 0}
    plan(load_scenario(None, [*sets, f"network.ecn_threshold={most}"]))     # accepted
    with pytest.raises(ConfigError) as err:
        plan(load_scenario(None, [*sets, f"network.ecn_threshold={most + 1}"]))
    assert "never mark" in str(err.value)
