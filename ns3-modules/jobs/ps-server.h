// One parameter-server shard: accepts every worker's connections
// (one per traffic class, on Port + class index), counts the pushed bytes of
// each tensor per worker, and when all W workers' contributions of an
// aggregation unit have arrived (the whole tensor by default, or a chunk of
// PsJob's AggregationBytes) pulls the updated parameters of that unit to
// every worker through its channels' scheduling policy.
#ifndef DDNN_PS_SERVER_H
#define DDNN_PS_SERVER_H

#include "ps-channel.h"
#include "ps-job.h"

#include "ns3/application.h"
#include "ns3/socket.h"

#include <map>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One shard of a parameter-server job: aggregates the workers' pushes and serves the pulls.
 */
class PsServer : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    PsServer();

    /// \brief Serve shard `shard` of `job`.
    void Setup(Ptr<PsJob> job, uint32_t shard);
    /// \brief The shard end of the link to `worker` (PsJob::Wire()).
    void AddChannel(uint32_t worker, Ptr<PsChannel> channel);

    /// \brief Index of the shard this server holds.
    uint32_t GetShard() const;
    /// \brief Aggregation units pulled so far (over all tensors and iterations).
    uint64_t GetNAggregated() const;
    /// \brief Pull barrier (PsJob): send the held pulls of `iteration`, in the order
    /// they were aggregated.
    void ReleasePulls(uint64_t iteration);

  protected:
    void DoDispose() override;

  private:
    /// Aggregation state of one (iteration, tensor).
    struct Aggregate
    {
        std::vector<std::vector<uint64_t>> bytes; //!< [unit][worker] pushed bytes
        std::vector<uint32_t> complete;          //!< [unit] workers that pushed all of it
        uint32_t unitsDone = 0;
        int64_t deadlineNs = -1; //!< earliest worker deadline seen
    };

    void StartApplication() override;
    void StopApplication() override;

    bool AcceptRequest(Ptr<Socket> socket, const Address& from);
    void Accepted(Ptr<Socket> socket, const Address& from);
    void PushProgress(uint32_t worker, const PsChunk& chunk, uint64_t from, uint64_t to);
    /// An aggregation unit is complete: pull it, or hold it for the barrier.
    void Pull(const PsChunk& unit);
    void SendPull(const PsChunk& unit);
    void ChannelError(uint32_t worker, const std::string& what);
    uint64_t UnitBytes(uint32_t tensor) const;

    Ptr<PsJob> m_job;
    uint32_t m_shard;
    std::vector<Ptr<Socket>> m_listeners;
    std::vector<Ptr<PsChannel>> m_channels; //!< per worker
    std::map<std::pair<uint64_t, uint32_t>, Aggregate> m_aggregates;
    uint64_t m_nAggregated;
    std::map<uint64_t, std::vector<PsChunk>> m_held; //!< pull barrier: iteration -> units
};

} // namespace ns3

#endif
