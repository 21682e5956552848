#include "tictac-scheduler.h"

#include "training-job.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TicTacScheduler");

NS_OBJECT_ENSURE_REGISTERED(TicTacScheduler);

TypeId
TicTacScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TicTacScheduler")
            .SetParent<CommScheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<TicTacScheduler>()
            .AddAttribute("OneAtATime",
                          "Commit the next transfer of the order only once the previous one "
                          "has been received (serialised) instead of right behind it.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&TicTacScheduler::m_oneAtATime),
                          MakeBooleanChecker());
    return tid;
}

TicTacScheduler::TicTacScheduler()
    : m_oneAtATime(false),
      m_iteration(0),
      m_position(0),
      m_committed(0)
{
    NS_LOG_FUNCTION(this);
}

void
TicTacScheduler::Attach(const TrainingJob* job, uint32_t shard, bool push)
{
    NS_LOG_FUNCTION(this << job << shard << push);
    CommScheduler::Attach(job, shard, push);
    // the order covers the tensors this shard's sender carries
    m_tensors = job->GetShardTensors(shard);
}

const std::vector<uint32_t>&
TicTacScheduler::GetTensors() const
{
    NS_LOG_FUNCTION(this);
    return m_tensors;
}

std::vector<uint32_t>
TicTacScheduler::MakeOrder(uint64_t)
{
    NS_LOG_FUNCTION(this);
    return m_tensors;
}

void
TicTacScheduler::NotifyEnqueued(const PsChunk& item)
{
    NS_LOG_FUNCTION(this);
    if (m_positions.count(item.iteration))
    {
        return;
    }
    // the order is drawn once per iteration, when its first item arrives
    const auto order = MakeOrder(item.iteration);
    auto& positions = m_positions[item.iteration];
    for (uint32_t p = 0; p < order.size(); ++p)
    {
        positions[order[p]] = p;
    }
}

uint64_t
TicTacScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_oneAtATime ? 0 : UNLIMITED; // 0: only when nothing is in flight
}

CommScheduler::Key
TicTacScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return {chunk.iteration, m_positions.at(chunk.iteration).at(chunk.tensor), chunk.offset, seq};
}

bool
TicTacScheduler::Pick(uint64_t inflight, PsChunk& out)
{
    NS_LOG_FUNCTION(this << inflight);
    auto first = m_pending.begin();
    if (first == m_pending.end() || m_tensors.empty())
    {
        return false;
    }
    const PsChunk& c = first->second;
    if (c.iteration != m_iteration || first->first[1] != m_position ||
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
        if (++m_position == m_tensors.size())
        {
            m_positions.erase(m_iteration);
            m_position = 0;
            m_iteration++;
        }
    }
    return true;
}

} // namespace ns3
