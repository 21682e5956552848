"""The simulator's event queue (ns3-modules/core/purging-scheduler): events
run in (time, uid) order as with ns-3's own heap, cancelled events are
dropped in batches, and a whole lossy run writes the same tables as with
ns-3's PriorityQueueScheduler."""

from __future__ import annotations

import json

from conftest import assert_same_tables, lossy_run

# One C++ check of the queue alone: 3,000 events at pseudo-random times
# (ties included), two in three cancelled; the order the queue gives the
# live ones back and how many it dropped.
_CHECK = r"""
#include "purging-scheduler.h"
#include "ns3/event-impl.h"
#include "ns3/make-event.h"
#include "ns3/uinteger.h"
#include <algorithm>
#include <sstream>
#include <vector>

std::string ddnn_check_purging_scheduler()
{
    using namespace ns3;
    ObjectFactory factory("ns3::PurgingScheduler");
    factory.Set("MinPurgeSize", UintegerValue(64));
    Ptr<PurgingScheduler> queue = factory.Create<PurgingScheduler>();
    std::vector<std::pair<uint64_t, uint32_t>> live;
    uint64_t x = 12345;
    for (uint32_t uid = 4; uid < 3004; ++uid)
    {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        Scheduler::Event ev;
        ev.impl = MakeEvent([]() {});
        ev.key.m_ts = (x >> 33) % 500;
        ev.key.m_uid = uid;
        ev.key.m_context = 0;
        if (uid % 3 != 0)
        {
            ev.impl->Cancel();
        }
        else
        {
            live.emplace_back(ev.key.m_ts, uid);
        }
        queue->Insert(ev);
    }
    std::sort(live.begin(), live.end());
    std::ostringstream out;
    uint64_t purged = queue->GetPurgedEvents();   // by the inserts' purges
    std::size_t next = 0;
    bool inOrder = true;
    uint64_t cancelledLeft = 0;
    while (!queue->IsEmpty())
    {
        Scheduler::Event ev = queue->RemoveNext();
        if (ev.impl->IsCancelled())
        {
            ++cancelledLeft;
        }
        else
        {
            inOrder = inOrder && next < live.size() && live[next] ==
                std::make_pair(ev.key.m_ts, ev.key.m_uid);
            ++next;
        }
        ev.impl->Unref();
    }
    out << "in_order " << (inOrder && next == live.size()) << " live " << live.size()
        << " purged " << purged << " dropped " << queue->GetPurgedEvents()
        << " cancelled_left " << cancelledLeft;
    return out.str();
}
"""


def test_the_queue_alone_keeps_the_order_and_drops_cancelled_events():
    from harness.engine import ns3

    ns3.load(quiet=True)
    import cppyy

    cppyy.cppdef(_CHECK)
    words = str(cppyy.gbl.ddnn_check_purging_scheduler()).split()
    got = dict(zip(words[::2], map(int, words[1::2])))
    assert got["in_order"] == 1 and got["live"] == 1000
    # most cancelled events go in the inserts' purges, the rest as RemoveNext
    # comes to them: it hands back live events only, and at last the
    # end-of-time one (so the simulator counts the events that ran)
    assert got["purged"] > 1500
    assert got["dropped"] == 2000 and got["cancelled_left"] == 1


def test_a_lossy_run_is_the_same_as_with_ns3s_own_heap(tmp_path):
    purging, heap = tmp_path / "purging", tmp_path / "heap"
    lossy_run(purging)
    # ns-3 reads attribute defaults from NS_ATTRIBUTE_DEFAULT
    lossy_run(heap, NS_ATTRIBUTE_DEFAULT="ns3::ScenarioRecipe::EventQueue=ns3::PriorityQueueScheduler")
    assert_same_tables(purging, heap, except_summary=("events",))
    # the cancelled timers the purging queue dropped are events ns-3 no longer skips
    events = [json.loads((d / "manifest.json").read_text())["events"] for d in (purging, heap)]
    assert events[0] < events[1], events
