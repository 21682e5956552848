#include "comm-scheduler.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CommScheduler");

NS_OBJECT_ENSURE_REGISTERED(CommScheduler);

TypeId
CommScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CommScheduler").SetParent<Object>().SetGroupName("Ddnn");
    return tid;
}

CommScheduler::CommScheduler()
    : m_job(nullptr),
      m_shard(0),
      m_push(true),
      m_seq(0)
{
    NS_LOG_FUNCTION(this);
}

void
CommScheduler::Attach(const TrainingJob* job, uint32_t shard, bool push)
{
    NS_LOG_FUNCTION(this << job << shard << push);
    m_job = job;
    m_shard = shard;
    m_push = push;
}

void
CommScheduler::Validate() const
{
    NS_LOG_FUNCTION(this);
}

uint64_t
CommScheduler::GetChunkBytes() const
{
    NS_LOG_FUNCTION(this);
    return 0;
}

uint64_t
CommScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return UNLIMITED;
}

CommScheduler::Key
CommScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return {seq, chunk.offset, 0, 0};
}

CommScheduler::Key
CommScheduler::PriorityKey(const PsChunk& chunk, uint64_t seq)
{
    NS_LOG_FUNCTION(seq);
    return {chunk.tensor, chunk.iteration, chunk.offset, seq};
}

bool
CommScheduler::Admits(uint64_t inflight, uint64_t bytes) const
{
    NS_LOG_FUNCTION(this << inflight << bytes);
    const uint64_t credit = GetCreditBytes();
    return inflight == 0 || (inflight <= credit && bytes <= credit - inflight);
}

void
CommScheduler::Enqueue(const PsChunk& item)
{
    NS_LOG_FUNCTION(this);
    NotifyEnqueued(item);
    const uint64_t size = GetChunkBytes();
    const uint64_t seq = m_seq++;
    uint64_t done = 0;
    while (done < item.bytes)
    {
        PsChunk chunk = item;
        chunk.offset = item.offset + done;
        chunk.bytes = size == 0 ? item.bytes : std::min(size, item.bytes - done);
        m_pending.emplace(MakeKey(chunk, seq), chunk);
        done += chunk.bytes;
    }
}

bool
CommScheduler::Pick(uint64_t inflight, PsChunk& out)
{
    NS_LOG_FUNCTION(this << inflight);
    auto first = m_pending.begin();
    if (first == m_pending.end() || !Admits(inflight, first->second.bytes))
    {
        return false;
    }
    out = first->second;
    m_pending.erase(first);
    return true;
}

bool
CommScheduler::Next(uint64_t inflight, PsChunk& out)
{
    NS_LOG_FUNCTION(this << inflight);
    return Pick(inflight, out);
}

void
CommScheduler::Raise(uint64_t iteration, uint32_t tensor, uint8_t tos)
{
    NS_LOG_FUNCTION(this << iteration << tensor << static_cast<uint32_t>(tos));
    for (auto& [key, chunk] : m_pending)
    {
        if (chunk.iteration == iteration && chunk.tensor == tensor)
        {
            chunk.tos = tos;
        }
    }
}

bool
CommScheduler::HasPending() const
{
    NS_LOG_FUNCTION(this);
    return !m_pending.empty();
}

void
CommScheduler::NotifyDelivered(const PsChunk&, Time)
{
    NS_LOG_FUNCTION(this);
}

void
CommScheduler::NotifyIterationDone(uint64_t, Time)
{
    NS_LOG_FUNCTION(this);
}

void
CommScheduler::NotifyEnqueued(const PsChunk&)
{
    NS_LOG_FUNCTION(this);
}

std::string
CommScheduler::GetState() const
{
    NS_LOG_FUNCTION(this);
    return "";
}

} // namespace ns3
