"""DCTCP over real ns-3, and two corrections it needs.

The harness's TcpDctcpLinux keeps Linux's floor of two segments on the
window reduction, which ns-3's TcpDctcp lacks. Without it a low-band
training flow marked right after a retransmission timeout is left with a
window below one segment and nothing in flight, and stalls for good (the
frontier preset's dctcp-low arm did, in one seed at each point).

The harness's TcpSocketDdnn clears the duplicate-ACK count that ns-3.44's
TcpSocketBase leaves standing when a connection leaves its ECN window
reduction (CWR) on a duplicate ACK; the next duplicate ACK failed the
wheel's assertion `m_dupAckCount == 1` and ended the process (parameter
server incast with DCTCP did)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from harness.api import check
from harness.config.schema.tcp import CONGESTION_CONTROLS
from harness.engine.simulation import execute
from harness.engine.planning import plan

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)

SEGMENT = 1380

_HELPER = r"""
#include "ns3/object-factory.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
namespace dctcp_test {
using namespace ns3;
// ssthresh the congestion control `type` sets on a congestion signal, for a
// window of `cwnd` bytes (DCTCP's alpha starts at 1: the harshest cut)
uint32_t SsThresh(const std::string& type, uint32_t cwnd, uint32_t segment) {
    ObjectFactory factory(type);
    Ptr<TcpCongestionOps> cc = factory.Create<TcpCongestionOps>();
    Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
    tcb->m_segmentSize = segment;
    tcb->m_cWnd = cwnd;
    Ptr<TcpCongestionOps> forked = cc->Fork();  // each socket gets a fork
    return forked->GetSsThresh(tcb, cwnd);
}
}
"""


@pytest.fixture(scope="module")
def ssthresh():
    from harness.engine import ns3

    ns3.load(quiet=True)
    import cppyy

    cppyy.cppdef(_HELPER)
    return lambda type_, cwnd: int(cppyy.gbl.dctcp_test.SsThresh(type_, cwnd, SEGMENT))


def test_dctcp_is_the_harness_class():
    assert CONGESTION_CONTROLS["dctcp"] == "ns3::TcpDctcpLinux"


def test_a_one_segment_window_is_cut_to_two_segments_not_below_one(ssthresh):
    # ns-3's own cut leaves half a segment: what stalled the flows
    assert ssthresh("ns3::TcpDctcp", SEGMENT) == SEGMENT // 2
    assert ssthresh("ns3::TcpDctcpLinux", SEGMENT) == 2 * SEGMENT
    assert ssthresh("ns3::TcpDctcpLinux", 3 * SEGMENT) == 2 * SEGMENT


def test_a_large_window_is_cut_as_ns3_cuts_it(ssthresh):
    cwnd = 100 * SEGMENT
    assert ssthresh("ns3::TcpDctcpLinux", cwnd) == ssthresh("ns3::TcpDctcp", cwnd) == cwnd // 2


def test_the_fix_enters_the_digest():
    """Cells run with ns-3's TcpDctcp are never resumed as today's dctcp."""
    dctcp = check("thesis", {"tcp.congestion_control": "dctcp", "network.ecn_threshold": 65})
    assert dctcp.digest_data()["tcp"]["revision"] == 2
    newreno = check("thesis", {"network.ecn_threshold": 65})
    assert "revision" not in newreno.digest_data()["tcp"]


@pytest.mark.slow
def test_the_frontier_cell_that_stalled_trains_at_its_pace():
    """The frontier preset's dctcp-low cell at R = 16, lambda = 46, seed 1
    (scale 10): with ns-3's TcpDctcp worker 7's connection stalled 4.12 s
    in and no iteration completed in 108 simulated seconds."""
    p = plan(check("thesis", {
        "scale": 10, "training.ratio": 16, "background.rate": 46, "seed": 1,
        "training.priority": "low", "tcp.congestion_control": "dctcp",
        "network.ecn_threshold": 65, "run.duration": 1.1, "run.warmup": 0.5,
        "run.cooldown": 0.5, "run.min_iterations": 2}))
    result = execute(p, progress=False, quiet=True)
    iterations = result.iterations[result.iterations.measured]
    assert iterations.groupby("worker").size().min() >= 2
    assert iterations.iteration_s.max() < 1.05 * p.ideal_iteration_s
    assert result.flows[result.flows.measured].completed.all()


def test_every_tcp_socket_is_the_harness_class():
    """Connecting sockets, listeners and the connections a listener accepts
    (the parameter server's, the flows' sinks): all TcpSocketDdnn, so the
    correction reaches every data sender."""
    from harness.engine import ns3, simulation

    p = plan(check("ps-small", {"run.duration": 0.3, "run.warmup": 0.05,
                                "run.cooldown": 0.05}))
    ns = ns3.load(quiet=True)
    net = simulation._Network(ns, p)
    ns.Simulator.Stop(ns.Seconds(0.2))
    ns.Simulator.Run()
    matches = ns.Config.LookupMatches("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*")
    names = [matches.Get(i).GetInstanceTypeId().GetName() for i in range(matches.GetN())]
    ns.Simulator.Destroy()
    del net
    # the job's connections (each a connecting and an accepted socket), its
    # listeners, the flows' senders, sinks and accepted connections
    assert len(names) > 8
    assert set(names) == {"ns3::TcpSocketDdnn"}, set(names)


def test_leaving_cwr_on_a_duplicate_ack_does_not_abort(tmp_path):
    """ps-small with DCTCP, training low, load 0.5, R = 4, seed 3: a
    background connection of host 5 left CWR on an ACK carrying new SACK
    blocks with 15 duplicate ACKs counted, and its next duplicate ACK ended
    ns-3.44 at 0.520 s (NS_ASSERT "From OPEN->DISORDER but with 16 dup
    ACKs"). Run as a command, so that a regression fails this test instead
    of ending pytest."""
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "ps-small", "-o", str(out),
         "--set", "training.priority=low", "--set", "tcp.congestion_control=dctcp",
         "--set", "network.ecn_threshold=65", "--set", "background.load=0.5",
         "--set", "training.ratio=4", "--set", "seed=3", "--set", "run.duration=0.7",
         "--set", "run.warmup=0.1", "--set", "run.cooldown=0.1"],
        capture_output=True, text=True, timeout=600)
    assert "dup ACKs" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["events"] > 0
