#include "prophet-scheduler.h"

#include "training-job.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ProphetScheduler");

NS_OBJECT_ENSURE_REGISTERED(ProphetScheduler);

TypeId
ProphetScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ProphetScheduler")
            .SetParent<CommScheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<ProphetScheduler>()
            .AddAttribute("BandwidthBps",
                          "Initial bandwidth estimate (bit/s), e.g. the link rate.",
                          DoubleValue(1e9),
                          MakeDoubleAccessor(&ProphetScheduler::m_bandwidthBps),
                          MakeDoubleChecker<double>(0));
    return tid;
}

ProphetScheduler::ProphetScheduler()
    : m_bandwidthBps(1e9),
      m_lastTensor(0),
      m_any(false),
      m_blockChunks(0),
      m_blockBytes(0),
      m_blockDelivered(0)
{
    NS_LOG_FUNCTION(this);
}

void
ProphetScheduler::Validate() const
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!(m_bandwidthBps > 0), "ProphetScheduler: BandwidthBps must be > 0");
}

CommScheduler::Key
ProphetScheduler::MakeKey(const PsChunk& chunk, uint64_t seq) const
{
    NS_LOG_FUNCTION(this << seq);
    return PriorityKey(chunk, seq);
}

void
ProphetScheduler::NotifyEnqueued(const PsChunk& item)
{
    NS_LOG_FUNCTION(this);
    m_lastTensor = item.tensor;
    m_lastReady = Simulator::Now();
    m_any = true;
}

void
ProphetScheduler::FormBlock()
{
    NS_LOG_FUNCTION(this);
    // Bytes the link carries until the profile says the next gradient is
    // ready; after gradient 0 no more come this iteration: take everything.
    uint64_t budget = CommScheduler::UNLIMITED;
    if (m_lastTensor > 0 && m_push)
    {
        const Time next = m_lastReady + m_job->GetBackwardTime(m_lastTensor - 1);
        const double gap = std::max(0.0, (next - Simulator::Now()).GetSeconds());
        budget = uint64_t(m_bandwidthBps * gap / 8);
    }
    m_blockChunks = 0;
    m_blockBytes = 0;
    for (const auto& [key, chunk] : m_pending)
    {
        if (m_blockChunks > 0 && m_blockBytes + chunk.bytes > budget)
        {
            break;
        }
        m_blockChunks++;
        m_blockBytes += chunk.bytes;
    }
    m_blockDelivered = 0;
    m_blockStart = Simulator::Now();
}

bool
ProphetScheduler::Pick(uint64_t inflight, PsChunk& out)
{
    NS_LOG_FUNCTION(this << inflight);
    auto first = m_pending.begin();
    if (first == m_pending.end())
    {
        return false;
    }
    if (m_blockChunks == 0)
    {
        const bool gradientZero = first->second.tensor == 0 && m_push;
        if (inflight > 0 && !gradientZero)
        {
            return false; // one block in flight
        }
        if (inflight > 0)
        {
            out = first->second; // gradient 0 at once, outside the blocks
            m_pending.erase(first);
            return true;
        }
        FormBlock();
    }
    out = first->second;
    m_pending.erase(first);
    m_blockChunks--;
    return true;
}

void
ProphetScheduler::NotifyDelivered(const PsChunk& chunk, Time)
{
    NS_LOG_FUNCTION(this);
    m_blockDelivered += chunk.bytes;
    if (m_blockBytes > 0 && m_blockDelivered >= m_blockBytes && m_blockChunks == 0)
    {
        const double seconds = (Simulator::Now() - m_blockStart).GetSeconds();
        if (seconds > 0)
        {
            m_bandwidthBps = 0.5 * m_bandwidthBps + 0.5 * (m_blockBytes * 8.0 / seconds);
        }
        m_blockBytes = 0;
    }
}

std::string
ProphetScheduler::GetState() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "bandwidth_bps=" << uint64_t(m_bandwidthBps);
    return os.str();
}

} // namespace ns3
