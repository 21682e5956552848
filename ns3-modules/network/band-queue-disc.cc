#include "band-queue-disc.h"

#include "pfc-ingress-tag.h"
#include "pfc-port.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
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
            .AddAttribute("MarkMin",
                          "RED-like marking: no mark while the averaged queue is below this "
                          "(packets or bytes, the unit of MarkMax)",
                          QueueSizeValue(QueueSize("0p")),
                          MakeQueueSizeAccessor(&BandQueueDisc::m_markMin),
                          MakeQueueSizeChecker())
            .AddAttribute("MarkMax",
                          "RED-like marking: probability MarkProbability at this averaged "
                          "queue, every ECN-capable arrival above it; 0 = no profile",
                          QueueSizeValue(QueueSize("0p")),
                          MakeQueueSizeAccessor(&BandQueueDisc::m_markMax),
                          MakeQueueSizeChecker())
            .AddAttribute("MarkProbability",
                          "RED-like marking: Pmax, the probability at MarkMax (DCQCN: 0.01)",
                          DoubleValue(0.01),
                          MakeDoubleAccessor(&BandQueueDisc::m_markProbability),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("MarkWeight",
                          "RED-like marking: the weight of each arrival's queue sample in "
                          "the average (1 = the instantaneous queue, as DCQCN configures)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&BandQueueDisc::m_markWeight),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("MarkStream",
                          "RED-like marking: the random stream of its draws (-1: ns-3's "
                          "next automatic one, which depends on what ran before in the "
                          "process)",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&BandQueueDisc::m_markStream),
                          MakeIntegerChecker<int64_t>(-1))
            .AddAttribute("Lossless",
                          "PFC: at a switch whose ports pause (PfcPort), the band drops "
                          "nothing; its ingress ports admit its packets and pause upstream",
                          BooleanValue(false),
                          MakeBooleanAccessor(&BandQueueDisc::m_lossless),
                          MakeBooleanChecker())
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
      m_ectAcks(false),
      m_markMin("0p"),
      m_markMax("0p"),
      m_markProbability(0.01),
      m_markWeight(1.0),
      m_markStream(-1),
      m_lossless(false)
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
    // A lossless band at a pausing switch: the ingress port decides (its
    // XOFF and headroom), never the egress. Otherwise, in a pool, the pool
    // decides (the band's own limit is the pool's size, never stricter);
    // else the band's own limit.
    Ptr<PfcPort> ingress = IngressOf(item);
    if (ingress)
    {
        if (!ingress->Charge(m_band, item->GetSize()))
        {
            DropBeforeEnqueue(item, HEADROOM_DROP);
            return false;
        }
    }
    else if (m_lossless && m_pfc)
    {
        // the node's own packets in a lossless class (a host's NIC): they wait
        // in host memory, and the queue pairs stop at the NIC's limit
        // (RdmaSocket's NicQueuePackets), so neither the pool nor a limit drops
    }
    else if (m_buffer)
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
    else if (m_markRng)
    {
        MarkByProfile(item);
    }
    bool queued = GetInternalQueue(0)->Enqueue(item);
    if (queued)
    {
        // the internal queue's Enqueue has counted it in GetNPackets()
        uint32_t backlog = GetNPackets();
        m_maxBacklog = std::max(m_maxBacklog, backlog);
        m_backlogSum += backlog - 1;
        if (backlog == 1)
        {
            m_backlogSince = Simulator::Now(); // a busy period begins
        }
        if (m_buffer && !(m_lossless && m_pfc && !ingress))
        {
            m_buffer->Add(item);
        }
    }
    else if (ingress)
    {
        ingress->Credit(m_band, item->GetSize());
    }
    return queued;
}

void
BandQueueDisc::MarkByProfile(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    bool bytes = m_markMax.GetUnit() == QueueSizeUnit::BYTES;
    double sample = bytes ? GetInternalQueue(0)->GetNBytes() : GetInternalQueue(0)->GetNPackets();
    m_markAverage = m_markWeight * sample + (1.0 - m_markWeight) * m_markAverage;
    double low = m_markMin.GetValue();
    double high = m_markMax.GetValue();
    double p = m_markAverage <= low    ? 0.0
               : m_markAverage > high ? 1.0
                                       : m_markProbability * (m_markAverage - low) / (high - low);
    // draw only where it matters, so that a queue below MarkMin costs no draw
    if (p > 0.0 && (p >= 1.0 || m_markRng->GetValue() < p))
    {
        Mark(item, PROFILE_MARK);
    }
}

Ptr<PfcPort>
BandQueueDisc::IngressOf(Ptr<const QueueDiscItem> item) const
{
    if (!m_lossless || !m_pfc)
    {
        return nullptr;
    }
    PfcIngressTag tag;
    if (!item->GetPacket()->PeekPacketTag(tag))
    {
        return nullptr; // sent by this node (a host's own egress)
    }
    return m_pfc->GetNodePort(tag.GetDevice());
}

void
BandQueueDisc::SetPfc(Ptr<PfcPort> port, uint32_t band)
{
    NS_LOG_FUNCTION(this << port << band);
    m_pfc = port;
    m_band = band;
}

bool
BandQueueDisc::IsLossless() const
{
    return m_lossless;
}

void
BandQueueDisc::SetPaused(bool paused)
{
    NS_LOG_FUNCTION(this << paused);
    m_paused = paused;
}

bool
BandQueueDisc::IsPaused() const
{
    return m_paused;
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

Time
BandQueueDisc::GetBackloggedTime() const
{
    return GetNPackets() > 0 ? m_backlogged + (Simulator::Now() - m_backlogSince) : m_backlogged;
}

Ptr<QueueDiscItem>
BandQueueDisc::DoDequeue()
{
    NS_LOG_FUNCTION(this);
    if (m_paused)
    {
        return nullptr;
    }
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    if (!item)
    {
        return item;
    }
    if (GetNPackets() == 0)
    {
        m_backlogged += Simulator::Now() - m_backlogSince; // the busy period ends
    }
    Ptr<PfcPort> ingress = IngressOf(item);
    if (m_buffer && !(m_lossless && m_pfc && !ingress))
    {
        m_buffer->Remove(item);
    }
    if (ingress)
    {
        PfcIngressTag tag;
        item->GetPacket()->RemovePacketTag(tag); // the next switch tags it anew
        ingress->Credit(m_band, item->GetSize());
    }
    return item;
}

Ptr<const QueueDiscItem>
BandQueueDisc::DoPeek()
{
    NS_LOG_FUNCTION(this);
    return m_paused ? nullptr : GetInternalQueue(0)->Peek();
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
        // A lossless band's admission is its ingress ports' (PFC) at a switch,
        // or the checks of DoEnqueue: its FIFO itself never refuses a packet.
        QueueSize fifo = m_lossless ? QueueSize(QueueSizeUnit::PACKETS, UINT32_MAX) : GetMaxSize();
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize",
            QueueSizeValue(fifo)));
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
    // SetEct on a band that does not mark itself is fine: the packets it makes
    // ECN-capable may be marked further on (a profile on the fabric alone)
    bool profile = m_markMax.GetValue() > 0;
    if (profile && m_threshold > 0)
    {
        NS_LOG_ERROR("BandQueueDisc: a step (MarkThreshold) and a profile (MarkMax) at once");
        return false;
    }
    if (profile && (m_markMin.GetUnit() != m_markMax.GetUnit() ||
                    m_markMin.GetValue() >= m_markMax.GetValue()))
    {
        NS_LOG_ERROR("BandQueueDisc: MarkMin must be below MarkMax, in the same unit");
        return false;
    }
    return true;
}

void
BandQueueDisc::InitializeParams()
{
    NS_LOG_FUNCTION(this);
    // a random stream only where a profile marks, so that scenarios without
    // one draw the same streams as before
    if (m_markMax.GetValue() > 0)
    {
        m_markRng = CreateObject<UniformRandomVariable>();
        if (m_markStream >= 0)
        {
            m_markRng->SetStream(m_markStream);
        }
    }
}

void
BandQueueDisc::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_buffer = nullptr;
    m_pfc = nullptr;
    m_markRng = nullptr;
    QueueDisc::DoDispose();
}

} // namespace ns3
