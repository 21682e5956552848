// Installs a ring-allreduce training job: one RingAllreduceWorker per node
// (rank r on nodes[r]; its right neighbour is rank r+1 mod N), all sharing
// one RingAllreduceJob, which Install() returns. Arguments are plain scalars
// and vectors so the harness calls it from Python without glue:
//
//   helper = ns.RingAllreduceHelper()
//   helper.SetLayers(bytes, fp_ns, bp_ns)            # lists of ints
//   helper.SetLayerClasses(tos)                      # per layer: a buffer takes its lowest's
//   helper.SetBuffers(first, last, bytes)            # planned by harness/training/ring.py
//   helper.SetScheduler("ns3::PriorityScheduler", [])
//   job = helper.Install(node_ids, addresses)        # NodeList ids, Ipv4Address::Get()
//
// Its recipe lines (ScenarioRecipe hands them over; TrainingJobHelper reads
// the common ones):
//   job ring ns3::RingAllreduceJob     this helper (DDNN_JOB_HELPER)
//   job-buffers FIRST LAST BYTES       SetBuffers (LISTs)
//   job-scheduler push TYPEID [NAME=VALUE..]   SetScheduler (a ring has no pull side)
//   job-install WORKERS                Install: worker r on host WORKERS[r] (LIST)
#ifndef DDNN_RING_ALLREDUCE_HELPER_H
#define DDNN_RING_ALLREDUCE_HELPER_H

#include "ring-allreduce-job.h"
#include "ring-allreduce-worker.h"
#include "training-job-helper.h"

#include "ns3/node-container.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs a ring-allreduce job from the harness's plan (buffers, classes, policy).
 */
class RingAllreduceHelper : public TrainingJobHelper
{
  public:
    /// \brief Job attributes: JobId, Port, Barrier, AckTos.
    RingAllreduceHelper();
    /// \brief The same, creating jobs of `jobType` (RingAllreduceJob or a type derived from it).
    explicit RingAllreduceHelper(TypeId jobType);

    /// \brief `job-buffers` and `job-scheduler`, then TrainingJobHelper's.
    bool ApplyDirective(const std::string& directive, RecipeArgs& args) override;
    /// \brief Install(hosts[0].nodeIds, hosts[0].addresses): the one list is the workers.
    Ptr<TrainingJob> Install(const std::vector<Hosts>& hosts) const override;

    /// \brief The buffers the job allreduces (RingAllreduceJob::SetBuffers).
    void SetBuffers(const std::vector<uint32_t>& first,
                    const std::vector<uint32_t>& last,
                    const std::vector<uint64_t>& bytes);
    /// \brief The policy ordering ready buffers (RingAllreduceJob::SetScheduler).
    void SetScheduler(const std::string& typeId, const std::vector<std::string>& attributes);

    /// \brief A new job with a worker of rank r on node nodes.Get(r), whose IPv4
    /// address is addresses[r] (host order, as Ipv4Address::Get()).
    Ptr<RingAllreduceJob> Install(const NodeContainer& nodes,
                                  const std::vector<uint32_t>& addresses) const;
    /// \brief The same with nodes given by NodeList id (Node::GetId()).
    Ptr<RingAllreduceJob> Install(const std::vector<uint32_t>& nodeIds,
                                  const std::vector<uint32_t>& addresses) const;
    /// \brief Install workers of an already configured job (its layers set).
    Ptr<RingAllreduceJob> InstallJob(Ptr<RingAllreduceJob> job,
                                     const NodeContainer& nodes,
                                     const std::vector<uint32_t>& addresses) const;

  private:
    std::vector<uint32_t> m_first;
    std::vector<uint32_t> m_last;
    std::vector<uint64_t> m_bufferBytes;
    std::pair<std::string, std::vector<std::string>> m_scheduler;
};

} // namespace ns3

#endif
