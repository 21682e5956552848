#include "ring-allreduce-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingAllreduceHelper");

DDNN_JOB_HELPER(RingAllreduceJob, RingAllreduceHelper);

RingAllreduceHelper::RingAllreduceHelper()
    : RingAllreduceHelper(RingAllreduceJob::GetTypeId())
{
    NS_LOG_FUNCTION(this);
}

RingAllreduceHelper::RingAllreduceHelper(TypeId jobType)
    : TrainingJobHelper(jobType),
      m_scheduler("ns3::FifoScheduler", {})
{
    NS_LOG_FUNCTION(this << jobType);
}

bool
RingAllreduceHelper::ApplyDirective(const std::string& directive, RecipeArgs& args)
{
    NS_LOG_FUNCTION(this << directive);
    if (directive == "job-buffers")
    {
        const auto first = args.NextList<uint32_t>();
        const auto last = args.NextList<uint32_t>();
        SetBuffers(first, last, args.NextList<uint64_t>());
        return true;
    }
    if (directive == "job-scheduler")
    {
        const SchedulerLine scheduler = ReadScheduler(args);
        if (!scheduler.push)
        {
            args.Fail("a ring job has one (push) policy");
        }
        SetScheduler(scheduler.typeId, scheduler.attributes);
        return true;
    }
    return TrainingJobHelper::ApplyDirective(directive, args);
}

Ptr<TrainingJob>
RingAllreduceHelper::Install(const std::vector<Hosts>& hosts) const
{
    NS_LOG_FUNCTION(this);
    CheckHostLists(hosts, 1, "RingAllreduceHelper");
    return Install(hosts[0].nodeIds, hosts[0].addresses);
}

void
RingAllreduceHelper::SetBuffers(const std::vector<uint32_t>& first,
                                const std::vector<uint32_t>& last,
                                const std::vector<uint64_t>& bytes)
{
    NS_LOG_FUNCTION(this << first << last << bytes);
    m_first = first;
    m_last = last;
    m_bufferBytes = bytes;
}

void
RingAllreduceHelper::SetScheduler(const std::string& typeId,
                                  const std::vector<std::string>& attributes)
{
    NS_LOG_FUNCTION(this << typeId << attributes);
    m_scheduler = {typeId, attributes};
}

Ptr<RingAllreduceJob>
RingAllreduceHelper::Install(const NodeContainer& nodes,
                             const std::vector<uint32_t>& addresses) const
{
    NS_LOG_FUNCTION(this << addresses);
    NS_ABORT_MSG_IF(m_bytes.empty(), "RingAllreduceHelper: SetLayers() before Install()");
    Ptr<RingAllreduceJob> job = m_jobFactory.Create<RingAllreduceJob>();
    DescribeLayers(job);
    job->SetBuffers(m_first, m_last, m_bufferBytes);
    job->SetScheduler(m_scheduler.first, m_scheduler.second);
    return InstallJob(job, nodes, addresses);
}

Ptr<RingAllreduceJob>
RingAllreduceHelper::Install(const std::vector<uint32_t>& nodeIds,
                             const std::vector<uint32_t>& addresses) const
{
    NS_LOG_FUNCTION(this << nodeIds << addresses);
    NodeContainer nodes;
    for (uint32_t id : nodeIds)
    {
        nodes.Add(GetNodeById(id, "RingAllreduceHelper"));
    }
    return Install(nodes, addresses);
}

Ptr<RingAllreduceJob>
RingAllreduceHelper::InstallJob(Ptr<RingAllreduceJob> job,
                                const NodeContainer& nodes,
                                const std::vector<uint32_t>& addresses) const
{
    NS_LOG_FUNCTION(this << job << addresses);
    return InstallRing<RingAllreduceWorker>(job, nodes, addresses, "RingAllreduceHelper");
}

} // namespace ns3
