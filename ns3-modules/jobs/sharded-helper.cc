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
    const uint32_t n = nodes.GetN();
    NS_ABORT_MSG_IF(n < 2, "ShardedHelper: a ring needs at least 2 nodes (got " << n << ")");
    NS_ABORT_MSG_IF(addresses.size() != n,
                    "ShardedHelper: " << n << " nodes but " << addresses.size() << " addresses");
    Ptr<ShardedJob> job = m_jobFactory.Create<ShardedJob>();
    DescribeLayers(job);
    job->SetGroups(m_first, m_last);
    for (uint32_t r = 0; r < n; ++r)
    {
        auto worker = CreateObject<ShardedWorker>();
        const uint32_t rank = job->AddWorker(worker);
        worker->Setup(job,
                      rank,
                      Ipv4Address(addresses[(r + n - 1) % n]),
                      Ipv4Address(addresses[(r + 1) % n]));
        worker->SetSlowdowns(GetSlowdowns(r));
        worker->SetComputeFactors(GetComputeFactors(r));
        worker->SetStartTime(m_start);
        nodes.Get(r)->AddApplication(worker);
    }
    job->Validate();
    return job;
}

} // namespace ns3
