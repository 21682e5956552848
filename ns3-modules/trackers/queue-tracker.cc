#include "queue-tracker.h"

#include "shared-buffer.h"

#include "ns3/log.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"

#include <cstring>
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
QueueTracker::AddBand(uint32_t link, uint32_t fromNode, uint32_t toNode, uint32_t band)
{
    NS_LOG_FUNCTION(this << link << fromNode << toNode << band);
    Band b;
    b.tracker = this;
    b.link = link;
    b.fromNode = fromNode;
    b.toNode = toNode;
    b.band = band;
    m_bands.push_back(b);
    return &m_bands.back();
}

void
QueueTracker::ConnectBand(ObjectBase* bandQueue, Band* band)
{
    NS_LOG_FUNCTION(this << bandQueue << band);
    bandQueue->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnEnqueue, band));
    bandQueue->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDequeue, band));
    bandQueue->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnBacklog, band));
    bandQueue->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, band));
    bandQueue->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnMark, band));
    bandQueue->TraceConnectWithoutContext("DropBeforeEnqueue",
                                          MakeBoundCallback(&OnDropBeforeEnqueue, band));
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
        Band* band = AddBand(link, fromNode, toNode, i);
        ConnectBand(PeekPointer(qdisc->GetQueueDiscClass(i)->GetQueueDisc()), band);
    }
}

void
QueueTracker::OnEnqueue(Band* band, Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(band << item);
    band->enqueuedPackets++;
    band->enqueuedBytes += item->GetSize();
    // PacketsInQueue has already counted this packet
    band->backlogSum += band->backlog > 0 ? band->backlog - 1 : 0;
}

void
QueueTracker::OnDequeue(Band* band, Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(band << item);
    band->dequeuedPackets++;
    band->dequeuedBytes += item->GetSize();
}

void
QueueTracker::OnDrop(Band* band, Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(band << item);
    band->droppedPackets++;
    band->droppedBytes += item->GetSize();
    band->tracker->m_dropTrace(band->link, band->fromNode, band->toNode, band->band, item);
}

void
QueueTracker::OnDropBeforeEnqueue(Band* band, Ptr<const QueueDiscItem>, const char* reason)
{
    NS_LOG_FUNCTION(band << reason);
    if (std::strcmp(reason, SharedBuffer::POOL_FULL_DROP) == 0 ||
        std::strcmp(reason, SharedBuffer::THRESHOLD_DROP) == 0)
    {
        band->bufferDroppedPackets++;
    }
}

void
QueueTracker::OnBacklog(Band* band, uint32_t, uint32_t newValue)
{
    NS_LOG_FUNCTION(band << newValue);
    band->backlog = newValue;
    band->maxBacklog = std::max(band->maxBacklog, newValue);
}

void
QueueTracker::OnMark(Band* band, Ptr<const QueueDiscItem>, const char*)
{
    NS_LOG_FUNCTION(band);
    band->markedPackets++;
}

std::string
QueueTracker::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "link,from_node,to_node,band,enqueued_packets,enqueued_bytes,dequeued_packets,"
          "dequeued_bytes,dropped_packets,dropped_bytes,max_backlog_packets,marked_packets,"
          "mean_backlog_packets,buffer_dropped_packets\n";
    for (const Band& b : m_bands)
    {
        os << b.link << ',' << b.fromNode << ',' << b.toNode << ',' << b.band << ','
           << b.enqueuedPackets << ',' << b.enqueuedBytes << ',' << b.dequeuedPackets << ','
           << b.dequeuedBytes << ',' << b.droppedPackets << ',' << b.droppedBytes << ','
           << b.maxBacklog << ',' << b.markedPackets << ','
           << (b.enqueuedPackets ? double(b.backlogSum) / double(b.enqueuedPackets) : 0.0)
           << ',' << b.bufferDroppedPackets << '\n';
    }
    return os.str();
}

} // namespace ns3
