#include "layer-compute.h"

#include "ns3/simulator.h"

namespace ns3
{

LayerCompute::LayerCompute()
    : m_barrier(false),
      m_running(false),
      m_iteration(0),
      m_inBackward(false),
      m_busy(false),
      m_layer(0)
{
}

void
LayerCompute::Setup(const std::vector<Time>& forward,
                    const std::vector<Time>& backward,
                    bool barrier,
                    IterationStartCallback iterationStart,
                    ComputeDoneCallback computeDone,
                    GradientsReadyCallback gradientsReady)
{
    m_forward = forward;
    m_backward = backward;
    m_barrier = barrier;
    m_iterationStart = iterationStart;
    m_computeDone = computeDone;
    m_gradientsReady = gradientsReady;
    m_syncedIteration.assign(forward.size(), -1);
}

void
LayerCompute::Start()
{
    m_running = true;
    m_iteration = 0;
    m_layer = 0;
    m_inBackward = false;
    m_busy = false;
    TryForward();
}

void
LayerCompute::Stop()
{
    m_running = false;
    m_event.Cancel();
    m_busy = false;
}

uint64_t
LayerCompute::GetIteration() const
{
    return m_iteration;
}

void
LayerCompute::SetSynced(uint32_t layer, uint64_t iteration)
{
    m_syncedIteration.at(layer) = int64_t(iteration);
}

bool
LayerCompute::LayerSynced(uint32_t layer) const
{
    return m_syncedIteration[layer] >= int64_t(m_iteration) - 1;
}

void
LayerCompute::TryForward()
{
    if (!m_running || m_busy || m_inBackward)
    {
        return;
    }
    const uint32_t i = m_layer;
    if (m_iteration > 0)
    {
        if (!LayerSynced(i))
        {
            return; // resumed by the transfer that synchronises layer i
        }
        if (i == 0 && m_barrier)
        {
            for (uint32_t l = 0; l < m_forward.size(); ++l)
            {
                if (!LayerSynced(l))
                {
                    return;
                }
            }
        }
    }
    if (i == 0)
    {
        m_iterationStart(m_iteration);
    }
    m_busy = true;
    m_event = Simulator::Schedule(m_forward[i], &LayerCompute::ForwardDone, this);
}

void
LayerCompute::ForwardDone()
{
    m_busy = false;
    m_computeDone(m_iteration, m_layer, false, Simulator::Now() - m_forward[m_layer]);
    m_layer++;
    if (m_layer < m_forward.size())
    {
        TryForward();
        return;
    }
    // Backward of layer L-1 follows forward of L-1 at once.
    m_inBackward = true;
    m_layer = m_forward.size() - 1;
    m_busy = true;
    m_event = Simulator::Schedule(m_backward[m_layer], &LayerCompute::BackwardDone, this);
}

void
LayerCompute::BackwardDone()
{
    m_busy = false;
    const uint32_t i = m_layer;
    m_computeDone(m_iteration, i, true, Simulator::Now() - m_backward[i]);
    m_gradientsReady(m_iteration, i);
    if (!m_running)
    {
        return;
    }
    if (i > 0)
    {
        m_layer = i - 1;
        m_busy = true;
        m_event = Simulator::Schedule(m_backward[m_layer], &LayerCompute::BackwardDone, this);
        return;
    }
    m_inBackward = false;
    m_iteration++;
    m_layer = 0;
    TryForward();
}

} // namespace ns3
