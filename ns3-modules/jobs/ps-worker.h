// One worker of a parameter-server training job: per-layer
// forward and backward compute (LayerCompute); after backward of layer i its
// gradients are pushed to the shard holding tensor i, through that shard's
// channel and its scheduling policy; forward of layer i in the next
// iteration waits until the pull of tensor i (the updated parameters) has
// arrived here completely.
#ifndef DDNN_PS_WORKER_H
#define DDNN_PS_WORKER_H

#include "ps-channel.h"
#include "ps-job.h"
#include "training-worker.h"

#include <map>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One worker of a parameter-server job: computes, pushes gradients, pulls parameters.
 */
class PsWorker : public TrainingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    PsWorker();

    /// \brief Be worker `rank` of `job`.
    void Setup(Ptr<PsJob> job, uint32_t rank);
    /// \brief The worker end of the link to `shard` (PsJob::Wire()).
    void AddChannel(uint32_t shard, Ptr<PsChannel> channel);

    /// \brief Connections to every remote shard are up.
    bool IsConnected() const override;

  protected:
    void DoDispose() override;

  private:
    /// Connect to every remote shard.
    void StartCommunication() override;
    /// Push the layer's gradients to its shard.
    void GradientsReady(uint64_t iteration, uint32_t layer) override;
    void PullReceived(const PsChunk& chunk);

    Ptr<PsJob> m_job; //!< the job (TrainingWorker's, typed)
    std::vector<Ptr<PsChannel>> m_channels; //!< per shard
    std::vector<Time> m_untilNeeded; //!< per layer: backward of the layers below + their forward
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> m_pulled; //!< (iteration, tensor) -> bytes
};

} // namespace ns3

#endif
