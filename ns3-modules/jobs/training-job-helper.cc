#include "training-job-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node-list.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingJobHelper");

TrainingJobHelper::TrainingJobHelper(TypeId jobType)
    : m_start(Seconds(0))
{
    m_jobFactory.SetTypeId(jobType);
}

void
TrainingJobHelper::SetJobAttribute(const std::string& name, const AttributeValue& value)
{
    m_jobFactory.Set(name, value);
}

void
TrainingJobHelper::SetLayers(const std::vector<uint64_t>& bytes,
                             const std::vector<int64_t>& fpNs,
                             const std::vector<int64_t>& bpNs)
{
    m_bytes = bytes;
    m_fpNs = fpNs;
    m_bpNs = bpNs;
}

void
TrainingJobHelper::SetLayerClasses(const std::vector<uint32_t>& tos)
{
    m_layerClasses = tos;
}

void
TrainingJobHelper::DescribeLayers(Ptr<TrainingJob> job) const
{
    job->SetLayers(m_bytes, m_fpNs, m_bpNs);
    if (!m_layerClasses.empty())
    {
        job->SetLayerClasses(m_layerClasses);
    }
    for (const auto& [layer, tos] : m_layerTos)
    {
        job->SetLayerTos(layer, tos);
    }
}

void
TrainingJobHelper::SetLayerTos(uint32_t layer, uint8_t tos)
{
    m_layerTos[layer] = tos;
}

void
TrainingJobHelper::SetStartTime(Time start)
{
    m_start = start;
}

void
TrainingJobHelper::AddSlowdown(uint32_t rank, int64_t startNs, int64_t endNs, double factor)
{
    NS_ABORT_MSG_IF(startNs < 0 || endNs <= startNs || !(factor > 0),
                    "TrainingJobHelper::AddSlowdown: needs 0 <= start < end and factor > 0");
    m_slowdowns[rank].push_back({NanoSeconds(startNs), NanoSeconds(endNs), factor});
}

void
TrainingJobHelper::SetComputeFactors(uint32_t rank, const std::vector<double>& factors)
{
    m_computeFactors[rank] = factors;
}

std::vector<double>
TrainingJobHelper::GetComputeFactors(uint32_t rank) const
{
    auto it = m_computeFactors.find(rank);
    return it == m_computeFactors.end() ? std::vector<double>() : it->second;
}

std::vector<LayerCompute::Slowdown>
TrainingJobHelper::GetSlowdowns(uint32_t rank) const
{
    auto it = m_slowdowns.find(rank);
    return it == m_slowdowns.end() ? std::vector<LayerCompute::Slowdown>() : it->second;
}

Ptr<Node>
TrainingJobHelper::GetNodeById(uint32_t id, const std::string& who)
{
    NS_ABORT_MSG_IF(id >= NodeList::GetNNodes(), who << ": no node " << id);
    return NodeList::GetNode(id);
}

} // namespace ns3
