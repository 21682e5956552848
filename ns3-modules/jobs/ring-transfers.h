// The transfers table of a ring job (RingAllreduceJob, ShardedJob): one row
// per partition a worker hands to its socket, closed when its right
// neighbour has received all of it, and the payload bytes each worker wrote.
// A ring delivers in order on each connection, so a receiver closes its left
// neighbour's oldest open row. Owned by the job; its CSV columns are the
// job's own (they describe the job's units: buffers, or collectives).
#ifndef DDNN_RING_TRANSFERS_H
#define DDNN_RING_TRANSFERS_H

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A ring job's partitions sent and received, in send order per worker.
 */
class RingTransfers
{
  public:
    /// \brief One partition sent by one worker.
    struct Row
    {
        /// \brief The sending worker's rank.
        uint32_t worker;
        /// \brief The iteration of the collective.
        uint64_t iteration;
        /// \brief What the collective moves: a buffer (allreduce) or a slot (sharded).
        uint32_t unit;
        /// \brief The class (IP ToS) it was handed to the socket in.
        uint8_t tos;
        /// \brief The ring step.
        uint32_t step;
        /// \brief The partition sent.
        uint32_t partition;
        /// \brief Its payload bytes.
        uint64_t bytes;
        /// \brief Handed to the socket (ns).
        int64_t startNs;
        /// \brief Wholly received by the right neighbour (ns); -1 while not.
        int64_t endNs;
    };

    /// \brief Make room for the next worker (ranks are added in order).
    void AddWorker();
    /// \brief Worker `rank` handed a partition to its socket now: open a row.
    void Sent(uint32_t rank,
              uint64_t iteration,
              uint32_t unit,
              uint8_t tos,
              uint32_t step,
              uint32_t partition,
              uint64_t bytes);
    /// \brief Worker `rank` has now received the whole partition of `step`
    /// of collective (`iteration`, `unit`) from its left neighbour: close
    /// that neighbour's oldest open row and return it. nullptr if it has
    /// none; `error` says what went wrong (empty if nothing did).
    const Row* Received(uint32_t rank,
                        uint32_t step,
                        uint64_t iteration,
                        uint32_t unit,
                        std::string& error);
    /// \brief Worker `rank` wrote `bytes` payload bytes into its socket.
    void AddBytesSent(uint32_t rank, uint64_t bytes);
    /// \brief Payload bytes worker `rank` wrote into its socket.
    uint64_t GetBytesSent(uint32_t rank) const;
    /// \brief Every row, in the order the partitions were sent.
    const std::vector<Row>& GetRows() const;

  private:
    std::vector<Row> m_rows;
    std::vector<std::deque<size_t>> m_open; //!< per sender, rows in send order
    std::vector<uint64_t> m_bytesSent;
};

} // namespace ns3

#endif
