#include "purging-scheduler.h"

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PurgingScheduler");
NS_OBJECT_ENSURE_REGISTERED(PurgingScheduler);

namespace
{

/// The end-of-time event's key: after every event a run can schedule.
constexpr uint64_t END_OF_TIME = std::numeric_limits<int64_t>::max();
constexpr uint32_t END_OF_TIME_UID = std::numeric_limits<uint32_t>::max();

bool
IsEndOfTime(const Scheduler::Event& ev)
{
    return ev.key.m_ts == END_OF_TIME && ev.key.m_uid == END_OF_TIME_UID;
}

} // namespace

TypeId
PurgingScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PurgingScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<PurgingScheduler>()
            .AddAttribute("MinPurgeSize",
                          "No purge while the heap holds fewer events than this.",
                          UintegerValue(1024),
                          MakeUintegerAccessor(&PurgingScheduler::m_minPurgeSize),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

PurgingScheduler::PurgingScheduler()
    : m_minPurgeSize(1024),
      m_purgeAt(0)
{
    NS_LOG_FUNCTION(this);
    Scheduler::Event endOfTime;
    endOfTime.impl = MakeEvent([]() {}); // holds the reference the heap gives back
    endOfTime.impl->Cancel();
    endOfTime.key.m_ts = END_OF_TIME;
    endOfTime.key.m_uid = END_OF_TIME_UID;
    endOfTime.key.m_context = 0;
    m_heap.push_back(endOfTime);
}

PurgingScheduler::~PurgingScheduler()
{
    NS_LOG_FUNCTION(this);
    // The simulator empties its queue before it lets it go; whatever is
    // left (a queue never handed to a simulator) holds one reference each.
    for (const Scheduler::Event& ev : m_heap)
    {
        ev.impl->Unref();
    }
}

void
PurgingScheduler::Insert(const Scheduler::Event& ev)
{
    m_heap.push_back(ev);
    std::push_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    if (m_heap.size() >= std::max<std::size_t>(m_purgeAt, m_minPurgeSize))
    {
        Purge();
    }
}

bool
PurgingScheduler::IsEmpty() const
{
    return m_heap.empty();
}

Scheduler::Event
PurgingScheduler::PeekNext() const
{
    NS_ASSERT(!m_heap.empty());
    return m_heap.front();
}

Scheduler::Event
PurgingScheduler::RemoveNext()
{
    // A cancelled event is dropped here too, not handed to the simulator to
    // skip: ns-3 counts a skipped event in GetEventCount, so which cancelled
    // events it saw would depend on when the heap last purged, and that on
    // every event in it, the harness's own progress stops included. So the
    // count is the events that ran, whatever the purges' timing.
    while (true)
    {
        NS_ASSERT(!m_heap.empty());
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<>());
        Scheduler::Event next = m_heap.back();
        m_heap.pop_back();
        if (!next.impl->IsCancelled() || IsEndOfTime(next))
        {
            return next;
        }
        next.impl->Unref(); // the reference the simulator gives back when it skips one
        ++m_purged;
    }
}

void
PurgingScheduler::Remove(const Scheduler::Event& ev)
{
    // Linear, as PriorityQueueScheduler's: the simulator removes only events
    // Simulator::Remove names, which a run does not use.
    auto it = std::find_if(m_heap.begin(), m_heap.end(), [&ev](const Scheduler::Event& e) {
        return e.key.m_uid == ev.key.m_uid && e.key.m_ts == ev.key.m_ts;
    });
    NS_ASSERT_MSG(it != m_heap.end(), "PurgingScheduler::Remove: no such event");
    m_heap.erase(it);
    std::make_heap(m_heap.begin(), m_heap.end(), std::greater<>());
}

uint64_t
PurgingScheduler::GetPurgedEvents() const
{
    return m_purged;
}

void
PurgingScheduler::Purge()
{
    const std::size_t before = m_heap.size();
    auto kept = std::remove_if(m_heap.begin(), m_heap.end(), [](const Scheduler::Event& ev) {
        if (!ev.impl->IsCancelled() || IsEndOfTime(ev))
        {
            return false;
        }
        ev.impl->Unref(); // the reference the simulator gives back when it skips one
        return true;
    });
    m_heap.erase(kept, m_heap.end());
    std::make_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    m_purged += before - m_heap.size();
    m_purgeAt = 2 * m_heap.size();
    NS_LOG_LOGIC("purged " << before - m_heap.size() << " of " << before);
}

} // namespace ns3
