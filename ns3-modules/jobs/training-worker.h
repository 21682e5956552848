// What every training worker has, whatever its architecture: its
// job and rank, and its compute (LayerCompute: forward then backward of
// every layer, stretched by slowdowns and per-iteration factors), whose
// iteration starts and per-layer compute are recorded in the job
// (TrainingJob). The application starts by setting up the compute from the
// job's per-layer table, lets the architecture open its connections
// (StartCommunication) and starts computing; it stops by stopping the
// compute and letting the architecture stop sending (StopCommunication),
// leaving the connections as they are (a close would look like a failure to
// the peers still running). RingAllreduceWorker, ShardedWorker and PsWorker
// derive from it and say what happens to a layer's gradients once its
// backward is done (GradientsReady) and when the network delivered them
// (LayerCompute::SetSynced).
#ifndef DDNN_TRAINING_WORKER_H
#define DDNN_TRAINING_WORKER_H

#include "layer-compute.h"
#include "training-job.h"

#include "ns3/application.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Base of every training worker: its job and rank, its compute and the records of it.
 */
class TrainingWorker : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (not yet in a job).
    TrainingWorker();

    /// \brief Periods in which this worker computes slower (before it starts).
    void SetSlowdowns(const std::vector<LayerCompute::Slowdown>& slowdowns);
    /// \brief Per-iteration compute factors of this worker (LayerCompute::SetIterationFactors).
    void SetComputeFactors(const std::vector<double>& factors);

    /// \brief This worker's rank in its job.
    uint32_t GetRank() const;
    /// \brief Iteration being computed (0-based).
    uint64_t GetIteration() const;
    /// \brief The connections this worker opens are up (each architecture says which).
    virtual bool IsConnected() const = 0;

  protected:
    void DoDispose() override;

    /// Be worker `rank` of `job` (the derived Setup() keeps its own typed pointer too).
    void SetupWorker(Ptr<TrainingJob> job, uint32_t rank);
    /// The architecture's part of StartApplication: its state and connections;
    /// called once the compute is set up and m_running is true, before the
    /// compute starts.
    virtual void StartCommunication() = 0;
    /// The architecture's part of StopApplication, once m_running is false:
    /// stop sending (the connections stay up; by default, nothing to do).
    virtual void StopCommunication();
    /// Backward of `layer` in `iteration` finished: its gradients are ready
    /// (the LayerCompute callback).
    virtual void GradientsReady(uint64_t iteration, uint32_t layer) = 0;
    /// Record an error of this worker ("worker <rank>") in the job.
    void Error(const std::string& what);

    uint32_t m_rank;
    bool m_running; //!< between StartApplication and StopApplication
    LayerCompute m_compute;

  private:
    void StartApplication() override;
    void StopApplication() override;

    // LayerCompute callbacks: the job records them
    void IterationStarted(uint64_t iteration);
    void ComputeDone(uint64_t iteration, uint32_t layer, bool backward, Time start);

    Ptr<TrainingJob> m_trainingJob;
};

} // namespace ns3

#endif
