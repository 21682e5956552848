#include "queue-tracker.h"

#include "shared-buffer.h"

#include "ns3/log.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QueueTracker");

NS_OBJECT_ENSURE_REGISTERED(QueueTracker);

TypeId
QueueTracker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QueueTracker")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<QueueTracker>()
                            .AddTraceSource("Drop",
                                            "A tracked band dropped a packet: (link, from "
                                            "node, to node, band, packet).",
                                            MakeTraceSourceAccessor(&QueueTracker::m_dropTrace),
                                            "ns3::QueueTracker::DropCallback");
    return tid;
}

void
QueueTracker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_bands.clear();
    m_pending.clear();
    Object::DoDispose();
}

QueueTracker::Band*
QueueTracker::AddBand(uint32_t link,
                      uint32_t fromNode,
                      uint32_t toNode,
                      uint32_t band,
                      Ptr<BandQueueDisc> queue)
{
    NS_LOG_FUNCTION(this << link << fromNode << toNode << band << queue);
    Band b;
    b.tracker = this;
    b.link = link;
    b.fromNode = fromNode;
    b.toNode = toNode;
    b.band = band;
    b.queue = queue;
    m_bands.push_back(b);
    return &m_bands.back();
}

void
QueueTracker::ConnectBand(Band* band)
{
    NS_LOG_FUNCTION(this << band);
    band->queue->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, band));
}

void
QueueTracker::TrackPrio(Ptr<QueueDisc> qdisc, uint32_t link, uint32_t fromNode, uint32_t toNode)
{
    NS_LOG_FUNCTION(this << qdisc << link << fromNode << toNode);
    Track(Pending{qdisc, link, fromNode, toNode});
}

void
QueueTracker::Track(const Pending& pending)
{
    NS_LOG_FUNCTION(this);
    if (m_pending.empty())
    {
        // Runs after the nodes' own initialisation events, also at time 0.
        Simulator::ScheduleNow(&QueueTracker::ConnectPending, this);
    }
    m_pending.push_back(pending);
}

void
QueueTracker::ConnectPending()
{
    NS_LOG_FUNCTION(this);
    for (const Pending& p : m_pending)
    {
        ConnectPrio(p.qdisc, p.link, p.fromNode, p.toNode);
    }
    m_pending.clear();
}

void
QueueTracker::ConnectPrio(Ptr<QueueDisc> qdisc, uint32_t link, uint32_t fromNode, uint32_t toNode)
{
    NS_LOG_FUNCTION(this << qdisc << link << fromNode << toNode);
    for (uint32_t i = 0; i < qdisc->GetNQueueDiscClasses(); ++i)
    {
        Ptr<QueueDisc> child = qdisc->GetQueueDiscClass(i)->GetQueueDisc();
        Ptr<BandQueueDisc> queue = DynamicCast<BandQueueDisc>(child);
        NS_ABORT_MSG_UNLESS(queue,
                            "QueueTracker: band " << i << " of link " << link << " is a "
                                                  << child->GetInstanceTypeId().GetName()
                                                  << ", not a BandQueueDisc");
        ConnectBand(AddBand(link, fromNode, toNode, i, queue));
    }
}

void
QueueTracker::OnDrop(Band* band, Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(band << item);
    band->tracker->m_dropTrace(band->link, band->fromNode, band->toNode, band->band, item);
}

std::string
QueueTracker::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "link,from_node,to_node,band,enqueued_packets,enqueued_bytes,dequeued_packets,"
          "dequeued_bytes,dropped_packets,dropped_bytes,max_backlog_packets,marked_packets,"
          "mean_backlog_packets,buffer_dropped_packets,backlogged_ns,"
          "headroom_dropped_packets\n";
    for (const Band& b : m_bands)
    {
        const QueueDisc::Stats& stats = b.queue->GetStats();
        uint64_t enqueued = stats.nTotalEnqueuedPackets;
        double meanBacklog =
            enqueued ? double(b.queue->GetArrivalBacklogSum()) / double(enqueued) : 0.0;
        os << b.link << ',' << b.fromNode << ',' << b.toNode << ',' << b.band << ',' << enqueued
           << ',' << stats.nTotalEnqueuedBytes << ',' << stats.nTotalDequeuedPackets << ','
           << stats.nTotalDequeuedBytes << ',' << stats.nTotalDroppedPackets << ','
           << stats.nTotalDroppedBytes << ','
           << b.queue->GetMaxBacklog() << ',' << stats.nTotalMarkedPackets << ',' << meanBacklog
           << ','
           << stats.GetNDroppedPackets(SharedBuffer::POOL_FULL_DROP) +
                  stats.GetNDroppedPackets(SharedBuffer::THRESHOLD_DROP)
           << ',' << b.queue->GetBackloggedTime().GetNanoSeconds() << ','
           << stats.GetNDroppedPackets(BandQueueDisc::HEADROOM_DROP) << '\n';
    }
    return os.str();
}

} // namespace ns3
