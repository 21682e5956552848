// One worker's compute timeline: forward of layers 0..L-1, then
// backward L-1..0, one layer at a time, as scheduled events. In iteration
// k > 0, forward of layer i starts when forward of i-1 is done AND layer i's
// parameters of iteration k-1 are synchronised here (SetSynced); with the
// barrier, forward of layer 0 waits for every layer. Shared by the ring and
// the parameter-server workers, which tell it what the network delivered and
// hear back through callbacks when an iteration starts, a layer's compute
// finishes and a layer's gradients are ready. Slowdowns (SetSlowdowns) make
// the worker compute `factor` times slower during [start, end): a layer's
// compute that overlaps the period is stretched by the part that overlaps.
// Per-iteration factors (SetIterationFactors: stragglers, planned in Python
// from a seeded distribution) multiply every layer's compute of iteration k
// by factors[k]; iterations beyond the table compute at factor 1.
#ifndef DDNN_LAYER_COMPUTE_H
#define DDNN_LAYER_COMPUTE_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A worker's compute: forward then backward of every layer, iteration after iteration, stretched by slowdowns.
 */
class LayerCompute
{
  public:
    /// \brief During [start, end) compute runs `factor` times slower.
    struct Slowdown
    {
        /// \brief Start of the slower period.
        Time start;
        /// \brief End of the slower period (excluded).
        Time end;
        /// \brief Compute takes `factor` times as long.
        double factor;
    };

    /// \brief (iteration): forward of layer 0 starts.
    typedef Callback<void, uint64_t> IterationStartCallback;
    /// \brief (iteration, layer, backward, start): one layer's compute finished now.
    typedef Callback<void, uint64_t, uint32_t, bool, Time> ComputeDoneCallback;
    /// \brief (iteration, layer): backward of `layer` finished, its gradients are ready.
    typedef Callback<void, uint64_t, uint32_t> GradientsReadyCallback;

    /// \brief Constructor (attributes at their defaults).
    LayerCompute();

    /// \brief Layer compute times, whether forward waits for the previous iteration's gradients (`barrier`), and the callbacks to the worker.
    void Setup(const std::vector<Time>& forward,
               const std::vector<Time>& backward,
               bool barrier,
               IterationStartCallback iterationStart,
               ComputeDoneCallback computeDone,
               GradientsReadyCallback gradientsReady);
    /// \brief Periods of slower compute (non-overlapping; any order).
    void SetSlowdowns(const std::vector<Slowdown>& slowdowns);
    /// \brief Factor of every layer's compute in iteration k (factors[k] > 0).
    void SetIterationFactors(const std::vector<double>& factors);
    /// \brief The factor of `iteration` (1 beyond the table).
    double GetIterationFactor(uint64_t iteration) const;
    /// \brief Wall time that `work` of compute (at normal speed) takes from now.
    Time Stretch(Time work) const;
    /// \brief Iteration 0, forward of layer 0, now.
    void Start();
    /// \brief Compute stops (pending compute is cancelled).
    void Stop();
    /// \brief Layer `layer`'s parameters of `iteration` are synchronised on this worker.
    void SetSynced(uint32_t layer, uint64_t iteration);
    /// \brief Start the next forward if it may start now (after SetSynced calls).
    void TryForward();
    /// \brief Iteration being computed (0-based).
    uint64_t GetIteration() const;

  private:
    bool LayerSynced(uint32_t layer) const;
    /// Wall time of `work` (a layer's compute) in the current iteration, from now.
    Time Duration(Time work) const;
    void ForwardDone();
    void BackwardDone();

    std::vector<Time> m_forward;
    std::vector<Time> m_backward;
    bool m_barrier;
    IterationStartCallback m_iterationStart;
    ComputeDoneCallback m_computeDone;
    GradientsReadyCallback m_gradientsReady;

    bool m_running;
    uint64_t m_iteration;
    bool m_inBackward;  //!< in the backward pass of m_iteration
    bool m_busy;        //!< a forward/backward event is pending
    uint32_t m_layer;   //!< forward: next layer to start; backward: layer computing
    EventId m_event;
    Time m_computeStart; //!< when the pending compute started
    std::vector<int64_t> m_syncedIteration; //!< per layer; -1: never synchronised
    std::vector<Slowdown> m_slowdowns;      //!< sorted by start
    std::vector<double> m_iterationFactors; //!< per iteration; empty: all 1
};

} // namespace ns3

#endif
