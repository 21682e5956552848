#include "ecn-threshold-queue-disc.h"

#include "ns3/boolean.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EcnThresholdQueueDisc");

NS_OBJECT_ENSURE_REGISTERED(EcnThresholdQueueDisc);

TypeId
EcnThresholdQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::EcnThresholdQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Ddnn")
            .AddConstructor<EcnThresholdQueueDisc>()
            .AddAttribute("MaxSize",
                          "The queue's limit; an arrival beyond it is dropped",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                          MakeQueueSizeChecker())
            .AddAttribute("MarkThreshold",
                          "K: an ECN-capable arrival finding this many packets queued is "
                          "marked CE",
                          UintegerValue(20),
                          MakeUintegerAccessor(&EcnThresholdQueueDisc::m_threshold),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SetEct",
                          "Make TCP segments that carry data ECN-capable (ECT(0)) on "
                          "enqueue: a host's egress, with TCP ECN on",
                          BooleanValue(false),
                          MakeBooleanAccessor(&EcnThresholdQueueDisc::m_setEct),
                          MakeBooleanChecker());
    return tid;
}

EcnThresholdQueueDisc::EcnThresholdQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE),
      m_threshold(20),
      m_setEct(false)
{
}

EcnThresholdQueueDisc::~EcnThresholdQueueDisc() = default;

void
EcnThresholdQueueDisc::SetEctOnData(Ptr<QueueDiscItem> item) const
{
    auto ip = DynamicCast<Ipv4QueueDiscItem>(item);
    if (!ip || ip->GetHeader().GetProtocol() != 6 ||
        ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT)
    {
        return;
    }
    // The TCP header's data offset (byte 12, high nibble, in 32-bit words):
    // a segment longer than its header carries data.
    uint8_t head[13];
    Ptr<const Packet> segment = item->GetPacket();
    if (segment->CopyData(head, sizeof(head)) != sizeof(head) ||
        segment->GetSize() <= uint32_t(head[12] >> 4) * 4)
    {
        return;
    }
    // The item owns its (not yet serialised) header; GetHeader() hands it out
    // const only.
    const_cast<Ipv4Header&>(ip->GetHeader()).SetEcn(Ipv4Header::ECN_ECT0);
}

bool
EcnThresholdQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    if (m_setEct)
    {
        SetEctOnData(item);
    }
    if (GetCurrentSize() + item > GetMaxSize())
    {
        DropBeforeEnqueue(item, LIMIT_EXCEEDED_DROP);
        return false;
    }
    if (GetInternalQueue(0)->GetNPackets() >= m_threshold)
    {
        Mark(item, THRESHOLD_MARK); // false (and nothing done) for a non-ECT packet
    }
    return GetInternalQueue(0)->Enqueue(item);
}

Ptr<QueueDiscItem>
EcnThresholdQueueDisc::DoDequeue()
{
    return GetInternalQueue(0)->Dequeue();
}

Ptr<const QueueDiscItem>
EcnThresholdQueueDisc::DoPeek()
{
    return GetInternalQueue(0)->Peek();
}

bool
EcnThresholdQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("EcnThresholdQueueDisc has no classes and no packet filters");
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
        NS_LOG_ERROR("EcnThresholdQueueDisc needs exactly one internal queue");
        return false;
    }
    return true;
}

void
EcnThresholdQueueDisc::InitializeParams()
{
}

} // namespace ns3
