#include "mercury-scheduler.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("MercuryScheduler");

NS_OBJECT_ENSURE_REGISTERED(MercuryScheduler);

TypeId
MercuryScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::MercuryScheduler")
            .SetParent<CommScheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<MercuryScheduler>()
            .AddAttribute("ChunkBytes",
                          "Size tensors are cut into.",
                          UintegerValue(30000),
                          MakeUintegerAccessor(&MercuryScheduler::m_chunk),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("CreditBytes",
                          "Bytes committed below the priority queue and not yet received "
                          "(at least one chunk).",
                          UintegerValue(60000),
                          MakeUintegerAccessor(&MercuryScheduler::m_credit),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Preemptive",
                          "A more urgent tensor goes before the rest of one being sent.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&MercuryScheduler::m_preemptive),
                          MakeBooleanChecker());
    return tid;
}

MercuryScheduler::MercuryScheduler()
    : m_chunk(30000),
      m_credit(60000),
      m_preemptive(true),
      m_sending(false),
      m_curIteration(0),
      m_curTensor(0)
{
    NS_LOG_FUNCTION(this);
}

void
MercuryScheduler::Validate() const
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_chunk == 0, "MercuryScheduler: ChunkBytes must be > 0");
    NS_ABORT_MSG_IF(m_credit < m_chunk,
                    "MercuryScheduler: CreditBytes (" << m_credit
                                                      << ") must be at least one chunk ("
                                                      << m_chunk << ")");
}

uint64_t
MercuryScheduler::GetChunkBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_chunk;
}

uint64_t
MercuryScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_credit;
}

CommScheduler::Key
MercuryScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return PriorityKey(chunk, seq);
}

bool
MercuryScheduler::Pick(uint64_t inflight, PsChunk& out)
{
    NS_LOG_FUNCTION(this << inflight);
    if (m_pending.empty())
    {
        return false;
    }
    auto it = m_pending.begin();
    if (!m_preemptive && m_sending)
    {
        // keys are (tensor, iteration, offset, seq): the current tensor's
        // next chunk, if it has one pending
        auto cur = m_pending.lower_bound(Key{m_curTensor, m_curIteration, 0, 0});
        if (cur != m_pending.end() && cur->second.tensor == m_curTensor &&
            cur->second.iteration == m_curIteration)
        {
            it = cur;
        }
    }
    if (!Admits(inflight, it->second.bytes))
    {
        return false;
    }
    out = it->second;
    m_pending.erase(it);
    m_sending = true;
    m_curIteration = out.iteration;
    m_curTensor = out.tensor;
    return true;
}

} // namespace ns3
