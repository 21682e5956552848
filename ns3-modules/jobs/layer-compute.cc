#include "layer-compute.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LayerCompute");

LayerCompute::LayerCompute()
    : m_barrier(false),
      m_running(false),
      m_iteration(0),
      m_inBackward(false),
      m_busy(false),
      m_layer(0)
{
    NS_LOG_FUNCTION(this);
}

void
LayerCompute::Setup(const std::vector<Time>& forward,
                    const std::vector<Time>& backward,
                    bool barrier,
                    IterationStartCallback iterationStart,
                    ComputeDoneCallback computeDone,
                    GradientsReadyCallback gradientsReady)
{
    NS_LOG_FUNCTION(this << barrier);
    m_forward = forward;
    m_backward = backward;
    m_barrier = barrier;
    m_iterationStart = iterationStart;
    m_computeDone = computeDone;
    m_gradientsReady = gradientsReady;
    m_syncedIteration.assign(forward.size(), -1);
}

void
LayerCompute::SetSlowdowns(const std::vector<Slowdown>& slowdowns)
{
    NS_LOG_FUNCTION(this);
    m_slowdowns = slowdowns;
    std::sort(m_slowdowns.begin(), m_slowdowns.end(),
              [](const Slowdown& a, const Slowdown& b) { return a.start < b.start; });
    for (size_t i = 0; i < m_slowdowns.size(); ++i)
    {
        const Slowdown& s = m_slowdowns[i];
        NS_ABORT_MSG_IF(s.factor <= 0 || s.end <= s.start,
                        "LayerCompute: a slowdown needs start < end and factor > 0");
        NS_ABORT_MSG_IF(i > 0 && s.start < m_slowdowns[i - 1].end,
                        "LayerCompute: slowdown periods overlap");
    }
}

void
LayerCompute::SetIterationFactors(const std::vector<double>& factors)
{
    NS_LOG_FUNCTION(this << factors);
    for (double f : factors)
    {
        NS_ABORT_MSG_IF(!(f > 0), "LayerCompute: an iteration factor must be > 0");
    }
    m_iterationFactors = factors;
}

double
LayerCompute::GetIterationFactor(uint64_t iteration) const
{
    NS_LOG_FUNCTION(this << iteration);
    return iteration < m_iterationFactors.size() ? m_iterationFactors[iteration] : 1.0;
}

Time
LayerCompute::Duration(Time work) const
{
    NS_LOG_FUNCTION(this << work);
    const double f = GetIterationFactor(m_iteration);
    if (f != 1.0) // the table is empty for a job without stragglers: times exactly as before
    {
        work = NanoSeconds(int64_t(double(work.GetNanoSeconds()) * f + 0.5));
    }
    return Stretch(work);
}

Time
LayerCompute::Stretch(Time work) const
{
    NS_LOG_FUNCTION(this << work);
    // walk the periods from now, spending `work` at speed 1 outside them and
    // at speed 1/factor inside
    const Time now = Simulator::Now();
    Time t = now;
    double left = double(work.GetNanoSeconds());
    for (const Slowdown& s : m_slowdowns)
    {
        if (s.end <= t)
        {
            continue;
        }
        if (t < s.start)
        {
            const double before = double((s.start - t).GetNanoSeconds());
            if (left <= before)
            {
                break;
            }
            left -= before;
            t = s.start;
        }
        const double inside = double((s.end - t).GetNanoSeconds()) / s.factor;
        if (left <= inside)
        {
            return t + NanoSeconds(int64_t(left * s.factor + 0.5)) - now;
        }
        left -= inside;
        t = s.end;
    }
    return t + NanoSeconds(int64_t(left + 0.5)) - now;
}

void
LayerCompute::Start()
{
    NS_LOG_FUNCTION(this);
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
    NS_LOG_FUNCTION(this);
    m_running = false;
    m_event.Cancel();
    m_busy = false;
}

uint64_t
LayerCompute::GetIteration() const
{
    NS_LOG_FUNCTION(this);
    return m_iteration;
}

void
LayerCompute::SetSynced(uint32_t layer, uint64_t iteration)
{
    NS_LOG_FUNCTION(this << layer << iteration);
    m_syncedIteration.at(layer) = int64_t(iteration);
}

bool
LayerCompute::LayerSynced(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return m_syncedIteration[layer] >= int64_t(m_iteration) - 1;
}

void
LayerCompute::TryForward()
{
    NS_LOG_FUNCTION(this);
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
    m_computeStart = Simulator::Now();
    m_event = Simulator::Schedule(Duration(m_forward[i]), &LayerCompute::ForwardDone, this);
}

void
LayerCompute::ForwardDone()
{
    NS_LOG_FUNCTION(this);
    m_busy = false;
    m_computeDone(m_iteration, m_layer, false, m_computeStart);
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
    m_computeStart = Simulator::Now();
    m_event =
        Simulator::Schedule(Duration(m_backward[m_layer]), &LayerCompute::BackwardDone, this);
}

void
LayerCompute::BackwardDone()
{
    NS_LOG_FUNCTION(this);
    m_busy = false;
    const uint32_t i = m_layer;
    m_computeDone(m_iteration, i, true, m_computeStart);
    m_gradientsReady(m_iteration, i);
    if (!m_running)
    {
        return;
    }
    if (i > 0)
    {
        m_layer = i - 1;
        m_busy = true;
        m_computeStart = Simulator::Now();
        m_event =
            Simulator::Schedule(Duration(m_backward[m_layer]), &LayerCompute::BackwardDone, this);
        return;
    }
    m_inBackward = false;
    m_iteration++;
    m_layer = 0;
    TryForward();
}

} // namespace ns3
