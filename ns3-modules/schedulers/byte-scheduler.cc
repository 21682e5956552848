#include "byte-scheduler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ByteScheduler");

NS_OBJECT_ENSURE_REGISTERED(ByteScheduler);

TypeId
ByteScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ByteScheduler")
                            .SetParent<CommScheduler>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<ByteScheduler>()
                            .AddAttribute("PartitionBytes",
                                          "Size tensors are cut into.",
                                          UintegerValue(160000),
                                          MakeUintegerAccessor(&ByteScheduler::m_partition),
                                          MakeUintegerChecker<uint64_t>(1))
                            .AddAttribute("CreditBytes",
                                          "Bytes that may be committed and not yet received "
                                          "(at least one partition).",
                                          UintegerValue(160000),
                                          MakeUintegerAccessor(&ByteScheduler::m_credit),
                                          MakeUintegerChecker<uint64_t>(1));
    return tid;
}

ByteScheduler::ByteScheduler()
    : m_partition(160000),
      m_credit(160000)
{
    NS_LOG_FUNCTION(this);
}

void
ByteScheduler::Validate() const
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_partition == 0, "ByteScheduler: PartitionBytes must be > 0");
    NS_ABORT_MSG_IF(m_credit < m_partition,
                    "ByteScheduler: CreditBytes (" << m_credit
                                                   << ") must be at least one partition ("
                                                   << m_partition << ")");
}

uint64_t
ByteScheduler::GetPartitionBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_partition;
}

uint64_t
ByteScheduler::GetCredit() const
{
    NS_LOG_FUNCTION(this);
    return m_credit;
}

uint64_t
ByteScheduler::GetChunkBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_partition;
}

uint64_t
ByteScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_credit;
}

CommScheduler::Key
ByteScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return PriorityKey(chunk, seq);
}

} // namespace ns3
