#include "priority-scheduler.h"

#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PriorityScheduler");

NS_OBJECT_ENSURE_REGISTERED(PriorityScheduler);

TypeId
PriorityScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PriorityScheduler")
            .SetParent<CommScheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<PriorityScheduler>()
            .AddAttribute("CreditBytes",
                          "Bytes in flight below which the next tensor is committed "
                          "(0: one tensor at a time).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PriorityScheduler::m_credit),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

PriorityScheduler::PriorityScheduler()
    : m_credit(0)
{
    NS_LOG_FUNCTION(this);
}

uint64_t
PriorityScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_credit;
}

CommScheduler::Key
PriorityScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return PriorityKey(chunk, seq);
}

} // namespace ns3
