#include "training-job-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/string.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingJobHelper");

namespace
{

/// Job type -> the factory of its helper (DDNN_JOB_HELPER). A function's
/// static: the registrations run during static initialisation, in any order.
std::map<TypeId, TrainingJobHelper::Factory>&
Factories()
{
    static std::map<TypeId, TrainingJobHelper::Factory> factories;
    return factories;
}

} // namespace

bool
TrainingJobHelper::Register(TypeId jobType, Factory factory)
{
    NS_LOG_FUNCTION(jobType);
    NS_ABORT_MSG_IF(!jobType.IsChildOf(TrainingJob::GetTypeId()),
                    "TrainingJobHelper::Register: " << jobType.GetName()
                                                    << " is not a TrainingJob");
    Factories()[jobType] = factory;
    return true;
}

std::unique_ptr<TrainingJobHelper>
TrainingJobHelper::Create(TypeId jobType)
{
    NS_LOG_FUNCTION(jobType);
    for (TypeId type = jobType; type.IsChildOf(TrainingJob::GetTypeId()); type = type.GetParent())
    {
        const auto factory = Factories().find(type);
        if (factory != Factories().end())
        {
            return factory->second(jobType);
        }
    }
    return nullptr;
}

bool
TrainingJobHelper::ApplyDirective(const std::string& directive, RecipeArgs& args)
{
    NS_LOG_FUNCTION(this << directive);
    if (directive == "job-attribute")
    {
        const auto name = args.Next<std::string>();
        const auto value = args.Next<std::string>();
        SetJobAttribute(name, StringValue(value));
    }
    else if (directive == "job-start")
    {
        SetStartTime(NanoSeconds(args.Next<int64_t>()));
    }
    else if (directive == "job-layers")
    {
        const auto bytes = args.NextList<uint64_t>();
        const auto fpNs = args.NextList<int64_t>();
        const auto bpNs = args.NextList<int64_t>();
        SetLayers(bytes, fpNs, bpNs);
    }
    else if (directive == "job-layer-classes")
    {
        SetLayerClasses(args.NextList<uint32_t>());
    }
    else if (directive == "job-slowdown")
    {
        const auto rank = args.Next<uint32_t>();
        const auto startNs = args.Next<int64_t>();
        const auto endNs = args.Next<int64_t>();
        AddSlowdown(rank, startNs, endNs, args.Next<double>());
    }
    else if (directive == "job-compute-factors")
    {
        const auto rank = args.Next<uint32_t>();
        SetComputeFactors(rank, args.NextList<double>());
    }
    else
    {
        return false;
    }
    return true;
}

TrainingJobHelper::SchedulerLine
TrainingJobHelper::ReadScheduler(RecipeArgs& args)
{
    NS_LOG_FUNCTION_NOARGS();
    const auto side = args.Next<std::string>();
    if (side != "push" && side != "pull")
    {
        args.Fail("scheduler side '" + side + "' (push, pull)");
    }
    const auto typeId = args.Next<std::string>();
    return {side == "push", typeId, args.Rest()};
}

void
TrainingJobHelper::CheckHostLists(const std::vector<Hosts>& hosts,
                                  size_t n,
                                  const std::string& who)
{
    NS_LOG_FUNCTION(n << who);
    NS_ABORT_MSG_IF(hosts.size() != n,
                    who << ": " << n << " host list(s) to install on, got " << hosts.size());
}

TrainingJobHelper::TrainingJobHelper(TypeId jobType)
    : m_start(Seconds(0))
{
    NS_LOG_FUNCTION(this << jobType);
    m_jobFactory.SetTypeId(jobType);
}

void
TrainingJobHelper::SetJobAttribute(const std::string& name, const AttributeValue& value)
{
    NS_LOG_FUNCTION(this << name);
    m_jobFactory.Set(name, value);
}

void
TrainingJobHelper::SetLayers(const std::vector<uint64_t>& bytes,
                             const std::vector<int64_t>& fpNs,
                             const std::vector<int64_t>& bpNs)
{
    NS_LOG_FUNCTION(this << bytes << fpNs << bpNs);
    m_bytes = bytes;
    m_fpNs = fpNs;
    m_bpNs = bpNs;
}

void
TrainingJobHelper::SetLayerClasses(const std::vector<uint32_t>& tos)
{
    NS_LOG_FUNCTION(this << tos);
    m_layerClasses = tos;
}

void
TrainingJobHelper::DescribeLayers(Ptr<TrainingJob> job) const
{
    NS_LOG_FUNCTION(this << job);
    job->SetLayers(m_bytes, m_fpNs, m_bpNs);
    if (!m_layerClasses.empty())
    {
        job->SetLayerClasses(m_layerClasses);
    }
}

void
TrainingJobHelper::SetStartTime(Time start)
{
    NS_LOG_FUNCTION(this << start);
    m_start = start;
}

void
TrainingJobHelper::AddSlowdown(uint32_t rank, int64_t startNs, int64_t endNs, double factor)
{
    NS_LOG_FUNCTION(this << rank << startNs << endNs << factor);
    NS_ABORT_MSG_IF(startNs < 0 || endNs <= startNs || !(factor > 0),
                    "TrainingJobHelper::AddSlowdown: needs 0 <= start < end and factor > 0");
    m_slowdowns[rank].push_back({NanoSeconds(startNs), NanoSeconds(endNs), factor});
}

void
TrainingJobHelper::SetComputeFactors(uint32_t rank, const std::vector<double>& factors)
{
    NS_LOG_FUNCTION(this << rank << factors);
    m_computeFactors[rank] = factors;
}

std::vector<double>
TrainingJobHelper::GetComputeFactors(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    auto it = m_computeFactors.find(rank);
    return it == m_computeFactors.end() ? std::vector<double>() : it->second;
}

std::vector<LayerCompute::Slowdown>
TrainingJobHelper::GetSlowdowns(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    auto it = m_slowdowns.find(rank);
    return it == m_slowdowns.end() ? std::vector<LayerCompute::Slowdown>() : it->second;
}

Ptr<Node>
TrainingJobHelper::GetNodeById(uint32_t id, const std::string& who)
{
    NS_LOG_FUNCTION(id << who);
    NS_ABORT_MSG_IF(id >= NodeList::GetNNodes(), who << ": no node " << id);
    return NodeList::GetNode(id);
}

} // namespace ns3
