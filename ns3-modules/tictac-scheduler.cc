#include "tictac-scheduler.h"

#include "ps-job.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TicTacScheduler);

TypeId
TicTacScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TicTacScheduler")
                            .SetParent<CommScheduler>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<TicTacScheduler>();
    return tid;
}

TicTacScheduler::TicTacScheduler()
    : m_iteration(0),
      m_position(0),
      m_committed(0)
{
}

void
TicTacScheduler::Attach(const PsJob* job, uint32_t shard, bool push)
{
    CommScheduler::Attach(job, shard, push);
    m_order = job->GetShardTensors(shard);
}

uint64_t
TicTacScheduler::GetCreditBytes() const
{
    return 0; // one transfer at a time
}

CommScheduler::Key
TicTacScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    return {chunk.iteration, chunk.tensor, chunk.offset, seq};
}

bool
TicTacScheduler::Pick(uint64_t inflight, PsChunk& out)
{
    auto first = m_pending.begin();
    if (first == m_pending.end() || m_order.empty())
    {
        return false;
    }
    const PsChunk& c = first->second;
    if (c.iteration != m_iteration || c.tensor != m_order[m_position] ||
        !Admits(inflight, c.bytes))
    {
        return false; // the next tensor of the order is not aggregated yet
    }
    out = c;
    m_pending.erase(first);
    m_committed += out.bytes;
    if (m_committed == m_job->GetLayerBytes(out.tensor))
    {
        m_committed = 0;
        if (++m_position == m_order.size())
        {
            m_position = 0;
            m_iteration++;
        }
    }
    return true;
}

} // namespace ns3
