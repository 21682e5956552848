#include "ring-transfers.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingTransfers");

void
RingTransfers::AddWorker()
{
    NS_LOG_FUNCTION(this);
    m_open.emplace_back();
    m_bytesSent.push_back(0);
}

void
RingTransfers::Sent(uint32_t rank,
                    uint64_t iteration,
                    uint32_t unit,
                    uint8_t tos,
                    uint32_t step,
                    uint32_t partition,
                    uint64_t bytes)
{
    NS_LOG_FUNCTION(this << rank << iteration << unit << unsigned(tos) << step << partition << bytes);
    m_open.at(rank).push_back(m_rows.size());
    m_rows.push_back(Row{rank,
                         iteration,
                         unit,
                         tos,
                         step,
                         partition,
                         bytes,
                         Simulator::Now().GetNanoSeconds(),
                         -1});
}

const RingTransfers::Row*
RingTransfers::Received(uint32_t rank,
                        uint32_t step,
                        uint64_t iteration,
                        uint32_t unit,
                        std::string& error)
{
    NS_LOG_FUNCTION(this << rank << step << iteration << unit);
    error.clear();
    const uint32_t sender = (rank + m_open.size() - 1) % m_open.size();
    auto& open = m_open[sender];
    if (open.empty())
    {
        error = "received a partition its left neighbour never sent";
        return nullptr;
    }
    Row& row = m_rows[open.front()];
    open.pop_front();
    if (row.step != step || row.iteration != iteration || row.unit != unit)
    {
        error = "partition received out of order (step " + std::to_string(step) +
                ", expected " + std::to_string(row.step) + ")";
    }
    row.endNs = Simulator::Now().GetNanoSeconds();
    return &row;
}

void
RingTransfers::AddBytesSent(uint32_t rank, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << rank << bytes);
    m_bytesSent.at(rank) += bytes;
}

uint64_t
RingTransfers::GetBytesSent(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    return m_bytesSent.at(rank);
}

const std::vector<RingTransfers::Row>&
RingTransfers::GetRows() const
{
    NS_LOG_FUNCTION(this);
    return m_rows;
}

} // namespace ns3
