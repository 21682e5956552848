// The tables every training job keeps, whatever its architecture:
// one row per complete iteration of each worker (start of forward of layer 0
// to the next one), one row per layer's forward or backward compute, and the
// errors (socket failures, protocol violations) a run must report. Owned by
// RingAllreduceJob and PsJob, read once by the harness as CSV.
#ifndef DDNN_TRAINING_RECORDS_H
#define DDNN_TRAINING_RECORDS_H

#include "ns3/callback.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief The records every training job keeps: iterations, per-layer compute, errors, stop at target.
 */
class TrainingRecords
{
  public:
    /// \brief One complete iteration of one worker.
    struct IterationRow
    {
        /// \brief Worker rank.
        uint32_t worker;
        /// \brief Iteration number.
        uint64_t iteration;
        /// \brief Forward of layer 0 started (ns).
        int64_t startNs;
        /// \brief The next iteration started (ns).
        int64_t endNs;
    };

    /// \brief Make room for worker `worker` (ranks are added in order).
    void AddWorker(uint32_t worker);
    /// \brief `worker` starts forward of layer 0 of `iteration` now: its previous
    /// iteration is complete. Returns that iteration's row, or nullptr.
    const IterationRow* IterationStart(uint32_t worker, uint64_t iteration);
    /// \brief `worker` finished a layer's compute that started at `start`.
    void ComputeDone(uint32_t worker, uint64_t iteration, uint32_t layer, bool backward,
                     Time start);
    /// \brief Record an error of `who` ("worker 3", "shard 0 (worker 2)").
    void Error(const std::string& who, const std::string& what);

    /// \brief Measure until every worker has completed `count` iterations that
    /// started at or after `since`; then stop the simulation `stopDelay`
    /// later (the cool-down). The time is kept (GetTargetReachedNs), so the
    /// run's end depends on simulated time only.
    /// `reached`, if set, is called when the target is reached (the end of
    /// the measurement window), e.g. to end the run sooner.
    void SetTarget(uint64_t count, Time since, Time stopDelay, Callback<void> reached = {});
    /// \brief When the target was reached, in ns; -1 while not (or without one).
    int64_t GetTargetReachedNs() const;
    /// \brief Whether the stop it scheduled has run (an event of ours, not the model's).
    bool HasStopped() const;

    /// \brief Complete iterations recorded (over all workers).
    uint64_t GetNIterations() const;
    /// \brief Number of errors recorded.
    uint64_t GetNErrors() const;
    /// \brief The errors, one per line: "<time ns> ns <who>: <what>".
    std::string GetErrors() const;
    /// \brief job,worker,iteration,start_ns,end_ns (complete iterations only)
    std::string IterationsCsv(uint32_t jobId) const;
    /// \brief job,worker,iteration,layer,phase,start_ns,end_ns
    std::string ComputeCsv(uint32_t jobId) const;

  private:
    /// The stop SetTarget asked for: ends Simulator::Run.
    void StopNow();

    struct ComputeRow
    {
        uint32_t worker;
        uint64_t iteration;
        uint32_t layer;
        bool backward;
        int64_t startNs;
        int64_t endNs;
    };

    std::vector<int64_t> m_openStartNs;   //!< per worker, start of the open iteration
    std::vector<int64_t> m_openIteration; //!< per worker, its iteration (-1: none)
    std::vector<IterationRow> m_iterations;
    uint64_t m_targetCount = 0;           //!< 0: no target
    int64_t m_targetSinceNs = 0;
    Time m_targetStopDelay;
    Callback<void> m_targetReached;
    std::vector<uint64_t> m_counted;      //!< per worker, complete iterations since the target's start
    int64_t m_targetReachedNs = -1;
    bool m_stopped = false;
    std::vector<ComputeRow> m_compute;
    uint64_t m_nErrors = 0;
    std::string m_errors;
};

} // namespace ns3

#endif
