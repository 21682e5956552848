#include "band-queue-disc.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/pointer.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("BandQueueDisc");

NS_OBJECT_ENSURE_REGISTERED(BandQueueDisc);

TypeId
BandQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::BandQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Ddnn")
            .AddConstructor<BandQueueDisc>()
            .AddAttribute("MaxSize",
                          "The band's own limit; an arrival beyond it is dropped",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                          MakeQueueSizeChecker())
            .AddAttribute("MarkThreshold",
                          "K: an ECN-capable arrival finding this many packets queued is "
                          "marked CE; 0 = the band does not mark",
                          UintegerValue(0),
                          MakeUintegerAccessor(&BandQueueDisc::m_threshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SetEct",
                          "Make TCP segments that carry data ECN-capable (ECT(0)) on "
                          "enqueue: a host's egress, with TCP ECN on",
                          BooleanValue(false),
                          MakeBooleanAccessor(&BandQueueDisc::m_setEct),
                          MakeBooleanChecker())
            .AddAttribute("EctAcks",
                          "With SetEct, make pure TCP ACKs ECN-capable (ECT(0)) too "
                          "(RFC 3168 leaves them not ECT)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&BandQueueDisc::m_ectAcks),
                          MakeBooleanChecker())
            .AddAttribute("Buffer",
                          "The buffer pool this band shares with others (null: the band's "
                          "MaxSize is a private buffer)",
                          PointerValue(),
                          MakePointerAccessor(&BandQueueDisc::m_buffer),
                          MakePointerChecker<SharedBuffer>())
            .AddAttribute("Alpha",
                          "Dynamic-threshold factor: with a dynamic pool the band may hold "
                          "up to Alpha x the pool's free buffer",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&BandQueueDisc::m_alpha),
                          MakeDoubleChecker<double>(0.0));
    return tid;
}

BandQueueDisc::BandQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE),
      m_alpha(1.0),
      m_threshold(0),
      m_setEct(false),
      m_ectAcks(false)
{
    NS_LOG_FUNCTION(this);
}

BandQueueDisc::~BandQueueDisc() = default;

void
BandQueueDisc::SetEctOnData(Ptr<QueueDiscItem> item) const
{
    NS_LOG_FUNCTION(this << item);
    auto ip = DynamicCast<Ipv4QueueDiscItem>(item);
    if (!ip || ip->GetHeader().GetProtocol() != 6 ||
        ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT)
    {
        return;
    }
    // The TCP header's data offset (byte 12, high nibble, in 32-bit words):
    // a segment longer than its header carries data (EctAcks: any segment).
    uint8_t head[13];
    Ptr<const Packet> segment = item->GetPacket();
    if (!m_ectAcks && (segment->CopyData(head, sizeof(head)) != sizeof(head) ||
                       segment->GetSize() <= uint32_t(head[12] >> 4) * 4))
    {
        return;
    }
    // The item owns its (not yet serialised) header; GetHeader() hands it out
    // const only.
    const_cast<Ipv4Header&>(ip->GetHeader()).SetEcn(Ipv4Header::ECN_ECT0);
}

bool
BandQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    if (m_setEct)
    {
        SetEctOnData(item);
    }
    // In a pool, the pool decides (the band's own limit is the pool's size,
    // never stricter); otherwise the band's own limit.
    if (m_buffer)
    {
        if (const char* reason =
                m_buffer->Admit(item, GetInternalQueue(0)->GetNPackets(),
                                GetInternalQueue(0)->GetNBytes(), m_alpha))
        {
            DropBeforeEnqueue(item, reason);
            return false;
        }
    }
    else if (GetCurrentSize() + item > GetMaxSize())
    {
        DropBeforeEnqueue(item, LIMIT_EXCEEDED_DROP);
        return false;
    }
    if (m_threshold > 0 && GetInternalQueue(0)->GetNPackets() >= m_threshold)
    {
        Mark(item, THRESHOLD_MARK); // false (and nothing done) for a non-ECT packet
    }
    bool queued = GetInternalQueue(0)->Enqueue(item);
    if (queued)
    {
        // the internal queue's Enqueue has counted it in GetNPackets()
        uint32_t backlog = GetNPackets();
        m_maxBacklog = std::max(m_maxBacklog, backlog);
        m_backlogSum += backlog - 1;
        if (m_buffer)
        {
            m_buffer->Add(item);
        }
    }
    return queued;
}

uint32_t
BandQueueDisc::GetMaxBacklog() const
{
    return m_maxBacklog;
}

uint64_t
BandQueueDisc::GetArrivalBacklogSum() const
{
    return m_backlogSum;
}

Ptr<QueueDiscItem>
BandQueueDisc::DoDequeue()
{
    NS_LOG_FUNCTION(this);
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    if (item && m_buffer)
    {
        m_buffer->Remove(item);
    }
    return item;
}

Ptr<const QueueDiscItem>
BandQueueDisc::DoPeek()
{
    NS_LOG_FUNCTION(this);
    return GetInternalQueue(0)->Peek();
}

bool
BandQueueDisc::CheckConfig()
{
    NS_LOG_FUNCTION(this);
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("BandQueueDisc has no classes and no packet filters");
        return false;
    }
    if (GetNInternalQueues() == 0)
    {
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize",
            QueueSizeValue(GetMaxSize())));
    }
    if (GetNInternalQueues() != 1)
    {
        NS_LOG_ERROR("BandQueueDisc needs exactly one internal queue");
        return false;
    }
    if (m_ectAcks && !m_setEct)
    {
        NS_LOG_ERROR("BandQueueDisc: EctAcks without SetEct");
        return false;
    }
    if (m_setEct && m_threshold == 0)
    {
        NS_LOG_ERROR("BandQueueDisc: SetEct on a band that does not mark (MarkThreshold 0)");
        return false;
    }
    return true;
}

void
BandQueueDisc::InitializeParams()
{
    NS_LOG_FUNCTION(this);
}

void
BandQueueDisc::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_buffer = nullptr;
    QueueDisc::DoDispose();
}

} // namespace ns3
