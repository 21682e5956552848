#include "weighted-drr-queue-disc.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet-filter.h"
#include "ns3/socket.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WeightedDrrQueueDisc");

NS_OBJECT_ENSURE_REGISTERED(WeightedDrrQueueDisc);

TypeId
WeightedDrrQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::WeightedDrrQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Ddnn")
            .AddConstructor<WeightedDrrQueueDisc>()
            .AddAttribute("Priomap",
                          "Socket priority (0..15) -> band, as PrioQueueDisc's",
                          PriomapValue(Priomap{{1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}}),
                          MakePriomapAccessor(&WeightedDrrQueueDisc::m_prio2band),
                          MakePriomapChecker())
            .AddAttribute("Quanta",
                          "Bytes added to each band's deficit per round, one number per band "
                          "separated by spaces (the bands' weights); empty: Quantum for all",
                          StringValue(""),
                          MakeStringAccessor(&WeightedDrrQueueDisc::m_quantaText),
                          MakeStringChecker())
            .AddAttribute("Quantum",
                          "Every band's quantum in bytes when Quanta is empty",
                          UintegerValue(1500),
                          MakeUintegerAccessor(&WeightedDrrQueueDisc::m_quantum),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("BandDequeue",
                            "A packet left a band (band, bytes)",
                            MakeTraceSourceAccessor(&WeightedDrrQueueDisc::m_bandDequeue),
                            "ns3::WeightedDrrQueueDisc::BandDequeueCallback");
    return tid;
}

WeightedDrrQueueDisc::WeightedDrrQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS),
      m_quantum(1500)
{
    NS_LOG_FUNCTION(this);
}

WeightedDrrQueueDisc::~WeightedDrrQueueDisc() = default;

uint32_t
WeightedDrrQueueDisc::GetQuantum(uint32_t band) const
{
    NS_LOG_FUNCTION(this << band);
    return band < m_quanta.size() ? m_quanta[band] : 0;
}

uint16_t
WeightedDrrQueueDisc::GetBandForPriority(uint8_t prio) const
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(prio));
    return m_prio2band.at(prio & 0x0f);
}

uint32_t
WeightedDrrQueueDisc::BandOf(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    uint32_t band = m_prio2band[0];
    int32_t ret = QueueDisc::Classify(item);
    if (ret == PacketFilter::PF_NO_MATCH)
    {
        SocketPriorityTag priorityTag;
        if (item->GetPacket()->PeekPacketTag(priorityTag))
        {
            band = m_prio2band[priorityTag.GetPriority() & 0x0f];
        }
    }
    else
    {
        band = static_cast<uint32_t>(ret);
    }
    uint32_t last = GetNQueueDiscClasses() - 1;
    return band > last ? last : band;
}

bool
WeightedDrrQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    uint32_t band = BandOf(item);
    bool queued = GetQueueDiscClass(band)->GetQueueDisc()->Enqueue(item);
    if (queued && !m_active[band])
    {
        // a band that becomes backlogged joins the end of the round with a
        // fresh quantum (Linux sch_drr)
        m_active[band] = true;
        m_deficit[band] = m_quanta[band];
        m_activeList.push_back(band);
    }
    return queued;
}

void
WeightedDrrQueueDisc::Deactivate(uint32_t band)
{
    NS_LOG_FUNCTION(this << band);
    m_activeList.pop_front();
    m_active[band] = false;
    m_deficit[band] = 0;
}

Ptr<QueueDiscItem>
WeightedDrrQueueDisc::DoDequeue()
{
    NS_LOG_FUNCTION(this);
    // bands passed over because they are paused (PFC) with packets queued:
    // they keep their place in the round; once every active band is, nothing
    std::size_t paused = 0;
    while (!m_activeList.empty() && paused < m_activeList.size())
    {
        uint32_t band = m_activeList.front();
        Ptr<QueueDisc> child = GetQueueDiscClass(band)->GetQueueDisc();
        Ptr<const QueueDiscItem> head = child->Peek();
        if (!head && child->GetNPackets() > 0)
        {
            ++paused;
            m_activeList.pop_front();
            m_activeList.push_back(band);
            continue;
        }
        if (!head)
        {
            Deactivate(band);
            continue;
        }
        uint32_t size = head->GetSize();
        if (size > m_deficit[band])
        {
            // the head does not fit: next visit, one more quantum
            m_deficit[band] += m_quanta[band];
            m_activeList.pop_front();
            m_activeList.push_back(band);
            paused = 0;
            continue;
        }
        Ptr<QueueDiscItem> item = child->Dequeue();
        if (!item)
        {
            Deactivate(band);
            continue;
        }
        m_deficit[band] -= item->GetSize();
        m_bandDequeue(band, item->GetSize());
        if (child->GetNPackets() == 0)
        {
            Deactivate(band);
        }
        return item;
    }
    return nullptr;
}

bool
WeightedDrrQueueDisc::CheckConfig()
{
    NS_LOG_FUNCTION(this);
    if (GetNInternalQueues() > 0)
    {
        NS_LOG_ERROR("WeightedDrrQueueDisc cannot have internal queues");
        return false;
    }
    if (GetNQueueDiscClasses() < 2)
    {
        NS_LOG_ERROR("WeightedDrrQueueDisc needs at least 2 classes (bands)");
        return false;
    }
    uint32_t n = GetNQueueDiscClasses();
    m_quanta.clear();
    std::istringstream in(m_quantaText);
    uint64_t q;
    while (in >> q)
    {
        if (q == 0 || q > UINT32_MAX)
        {
            NS_LOG_ERROR("WeightedDrrQueueDisc: a quantum must be 1..2^32-1 bytes");
            return false;
        }
        m_quanta.push_back(static_cast<uint32_t>(q));
    }
    if (!in.eof())
    {
        NS_LOG_ERROR("WeightedDrrQueueDisc: Quanta is not a list of numbers: " << m_quantaText);
        return false;
    }
    if (m_quanta.empty())
    {
        m_quanta.assign(n, m_quantum);
    }
    if (m_quanta.size() != n)
    {
        NS_LOG_ERROR("WeightedDrrQueueDisc: " << m_quanta.size() << " quanta for " << n
                                              << " bands");
        return false;
    }
    for (uint16_t band : m_prio2band)
    {
        if (band >= n)
        {
            NS_LOG_ERROR("WeightedDrrQueueDisc: the priomap names band " << band << " of " << n);
            return false;
        }
    }
    return true;
}

void
WeightedDrrQueueDisc::InitializeParams()
{
    NS_LOG_FUNCTION(this);
    uint32_t n = GetNQueueDiscClasses();
    m_deficit.assign(n, 0);
    m_active.assign(n, false);
    m_activeList.clear();
}

} // namespace ns3
