#include "sharded-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ShardedHelper");

DDNN_JOB_HELPER(ShardedJob, ShardedHelper);

ShardedHelper::ShardedHelper()
    : ShardedHelper(ShardedJob::GetTypeId())
{
    NS_LOG_FUNCTION(this);
}

ShardedHelper::ShardedHelper(TypeId jobType)
    : TrainingJobHelper(jobType)
{
    NS_LOG_FUNCTION(this << jobType);
}

bool
ShardedHelper::ApplyDirective(const std::string& directive, RecipeArgs& args)
{
    NS_LOG_FUNCTION(this << directive);
    if (directive == "job-groups")
    {
        const auto first = args.NextList<uint32_t>();
        SetGroups(first, args.NextList<uint32_t>());
        return true;
    }
    if (directive == "job-scheduler")
    {
        args.Fail("a sharded job issues its collectives in order; it takes no policy");
    }
    return TrainingJobHelper::ApplyDirective(directive, args);
}

Ptr<TrainingJob>
ShardedHelper::Install(const std::vector<Hosts>& hosts) const
{
    NS_LOG_FUNCTION(this);
    CheckHostLists(hosts, 1, "ShardedHelper");
    return Install(hosts[0].nodeIds, hosts[0].addresses);
}

void
ShardedHelper::SetGroups(const std::vector<uint32_t>& first, const std::vector<uint32_t>& last)
{
    NS_LOG_FUNCTION(this << first << last);
    m_first = first;
    m_last = last;
}

Ptr<ShardedJob>
ShardedHelper::Install(const std::vector<uint32_t>& nodeIds,
                       const std::vector<uint32_t>& addresses) const
{
    NS_LOG_FUNCTION(this << nodeIds << addresses);
    NodeContainer nodes;
    for (uint32_t id : nodeIds)
    {
        nodes.Add(GetNodeById(id, "ShardedHelper"));
    }
    return Install(nodes, addresses);
}

Ptr<ShardedJob>
ShardedHelper::Install(const NodeContainer& nodes, const std::vector<uint32_t>& addresses) const
{
    NS_LOG_FUNCTION(this << addresses);
    NS_ABORT_MSG_IF(m_bytes.empty(), "ShardedHelper: SetLayers() before Install()");
    Ptr<ShardedJob> job = m_jobFactory.Create<ShardedJob>();
    DescribeLayers(job);
    job->SetGroups(m_first, m_last);
    return InstallRing<ShardedWorker>(job, nodes, addresses, "ShardedHelper");
}

} // namespace ns3
