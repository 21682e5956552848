#include "ps-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PsHelper");

DDNN_JOB_HELPER(PsJob, PsHelper);

PsHelper::PsHelper()
    : PsHelper(PsJob::GetTypeId())
{
    NS_LOG_FUNCTION(this);
}

PsHelper::PsHelper(TypeId jobType)
    : TrainingJobHelper(jobType)
{
    NS_LOG_FUNCTION(this << jobType);
}

bool
PsHelper::ApplyDirective(const std::string& directive, RecipeArgs& args)
{
    NS_LOG_FUNCTION(this << directive);
    if (directive == "job-shards")
    {
        SetTensorShards(args.NextList<uint32_t>());
        return true;
    }
    if (directive == "job-scheduler")
    {
        const SchedulerLine scheduler = ReadScheduler(args);
        SetScheduler(scheduler.push, scheduler.typeId, scheduler.attributes);
        return true;
    }
    return TrainingJobHelper::ApplyDirective(directive, args);
}

Ptr<TrainingJob>
PsHelper::Install(const std::vector<Hosts>& hosts) const
{
    NS_LOG_FUNCTION(this);
    CheckHostLists(hosts, 2, "PsHelper");
    return Install(hosts[0].nodeIds, hosts[0].addresses, hosts[1].nodeIds, hosts[1].addresses);
}

void
PsHelper::SetTensorShards(const std::vector<uint32_t>& shards)
{
    NS_LOG_FUNCTION(this << shards);
    m_shards = shards;
}

void
PsHelper::SetScheduler(bool push, const std::string& typeId, const std::vector<std::string>& attributes)
{
    NS_LOG_FUNCTION(this << push << typeId << attributes);
    m_schedulers[push] = {typeId, attributes};
}

Ptr<PsJob>
PsHelper::Install(const std::vector<uint32_t>& workerNodeIds,
                  const std::vector<uint32_t>& workerAddresses,
                  const std::vector<uint32_t>& shardNodeIds,
                  const std::vector<uint32_t>& shardAddresses) const
{
    NS_LOG_FUNCTION(this << workerNodeIds << workerAddresses << shardNodeIds << shardAddresses);
    NS_ABORT_MSG_IF(m_bytes.empty(), "PsHelper: SetLayers() before Install()");
    NS_ABORT_MSG_IF(workerNodeIds.empty() || workerNodeIds.size() != workerAddresses.size(),
                    "PsHelper: " << workerNodeIds.size() << " worker nodes, "
                                 << workerAddresses.size() << " addresses");
    NS_ABORT_MSG_IF(shardNodeIds.empty() || shardNodeIds.size() != shardAddresses.size(),
                    "PsHelper: " << shardNodeIds.size() << " shard nodes, "
                                 << shardAddresses.size() << " addresses");
    Ptr<PsJob> job = m_jobFactory.Create<PsJob>();
    DescribeLayers(job);
    job->SetTensorShards(m_shards.empty() ? std::vector<uint32_t>(m_bytes.size(), 0) : m_shards);
    for (const auto& [push, scheduler] : m_schedulers)
    {
        job->SetScheduler(push, scheduler.first, scheduler.second);
    }
    auto node = [](uint32_t id) { return GetNodeById(id, "PsHelper"); };
    for (uint32_t r = 0; r < workerNodeIds.size(); ++r)
    {
        auto worker = CreateObject<PsWorker>();
        worker->Setup(job, job->AddWorker(worker, Ipv4Address(workerAddresses[r])));
        worker->SetSlowdowns(GetSlowdowns(r));
        worker->SetComputeFactors(GetComputeFactors(r));
        worker->SetStartTime(m_start);
        node(workerNodeIds[r])->AddApplication(worker);
    }
    for (uint32_t k = 0; k < shardNodeIds.size(); ++k)
    {
        auto server = CreateObject<PsServer>();
        server->Setup(job, job->AddServer(server, Ipv4Address(shardAddresses[k])));
        server->SetStartTime(m_start);
        node(shardNodeIds[k])->AddApplication(server);
    }
    job->Wire();
    return job;
}

} // namespace ns3
