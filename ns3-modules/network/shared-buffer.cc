#include "shared-buffer.h"

#include "ns3/boolean.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharedBuffer");

NS_OBJECT_ENSURE_REGISTERED(SharedBuffer);

TypeId
SharedBuffer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SharedBuffer")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<SharedBuffer>()
            .AddAttribute("Size",
                          "The pool's capacity, in packets or bytes",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&SharedBuffer::m_size),
                          MakeQueueSizeChecker())
            .AddAttribute("DynamicThresholds",
                          "Admit a packet to a band only while the band holds less than "
                          "alpha x the free buffer (else: one static limit for all bands)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&SharedBuffer::m_dynamic),
                          MakeBooleanChecker())
            .AddTraceSource("Occupancy",
                            "The pool's occupancy, in the unit of its Size",
                            MakeTraceSourceAccessor(&SharedBuffer::m_used),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

SharedBuffer::SharedBuffer()
    : m_size("1000p"),
      m_dynamic(false),
      m_used(0)
{
    NS_LOG_FUNCTION(this);
}

SharedBuffer::~SharedBuffer() = default;

uint32_t
SharedBuffer::Units(Ptr<const QueueDiscItem> item) const
{
    NS_LOG_FUNCTION(this << item);
    return m_size.GetUnit() == QueueSizeUnit::PACKETS ? 1 : item->GetSize();
}

const char*
SharedBuffer::Admit(Ptr<const QueueDiscItem> item,
                    uint32_t bandPackets,
                    uint32_t bandBytes,
                    double alpha) const
{
    NS_LOG_FUNCTION(this << item << bandPackets << bandBytes << alpha);
    uint64_t size = m_size.GetValue();
    uint64_t need = Units(item);
    if (m_used + need > size)
    {
        return POOL_FULL_DROP;
    }
    if (m_dynamic)
    {
        // Choudhury-Hahne: drop when the band already holds its threshold
        // T = alpha x (free buffer).
        double band = m_size.GetUnit() == QueueSizeUnit::PACKETS ? bandPackets : bandBytes;
        if (band >= alpha * double(size - m_used))
        {
            return THRESHOLD_DROP;
        }
    }
    return nullptr;
}

void
SharedBuffer::Add(Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    m_used += Units(item);
}

void
SharedBuffer::Remove(Ptr<const QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    uint32_t units = Units(item);
    NS_ASSERT_MSG(m_used >= units, "a shared buffer released more than it held");
    m_used -= units;
}

uint32_t
SharedBuffer::GetOccupancy() const
{
    NS_LOG_FUNCTION(this);
    return m_used;
}

QueueSize
SharedBuffer::GetSize() const
{
    NS_LOG_FUNCTION(this);
    return m_size;
}

} // namespace ns3
