// Installs a sharded data-parallel training job (FSDP / ZeRO-3 style): one
// ShardedWorker per node (rank r on nodes[r]; its right neighbour is rank
// r+1 mod N), all sharing one ShardedJob, which Install() returns. Arguments
// are plain scalars and vectors so the harness calls it from Python without
// glue:
//
//   helper = ns.ShardedHelper()
//   helper.SetLayers(bytes, fp_ns, bp_ns)            # lists of ints
//   helper.SetLayerClasses(tos)                      # per layer: a group takes its lowest's
//   helper.SetGroups(first, last)                    # planned by harness/training/sharded.py
//   helper.SetJobAttribute("PrefetchDepth", ns.UintegerValue(1))
//   job = helper.Install(node_ids, addresses)        # NodeList ids, Ipv4Address::Get()
//
// Its recipe lines (ScenarioRecipe hands them over; TrainingJobHelper reads
// the common ones, `job-attribute PrefetchDepth 1` among them):
//   job sharded ns3::ShardedJob        this helper (DDNN_JOB_HELPER)
//   job-groups FIRST LAST              SetGroups (LISTs)
//   job-install WORKERS                Install: worker r on host WORKERS[r] (LIST)
#ifndef DDNN_SHARDED_HELPER_H
#define DDNN_SHARDED_HELPER_H

#include "sharded-job.h"
#include "sharded-worker.h"
#include "training-job-helper.h"

#include "ns3/node-container.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs a sharded data-parallel job from the harness's plan (layer groups, classes).
 */
class ShardedHelper : public TrainingJobHelper
{
  public:
    /// \brief Job attributes: JobId, Port, AckTos, PrefetchDepth, Reshard.
    ShardedHelper();
    /// \brief The same, creating jobs of `jobType` (ShardedJob or a type derived from it).
    explicit ShardedHelper(TypeId jobType);

    /// \brief `job-groups`, then TrainingJobHelper's.
    bool ApplyDirective(const std::string& directive, RecipeArgs& args) override;
    /// \brief Install(hosts[0].nodeIds, hosts[0].addresses): the one list is the workers.
    Ptr<TrainingJob> Install(const std::vector<Hosts>& hosts) const override;

    /// \brief The layer groups (ShardedJob::SetGroups).
    void SetGroups(const std::vector<uint32_t>& first, const std::vector<uint32_t>& last);

    /// \brief A new job with a worker of rank r on node nodes.Get(r), whose IPv4
    /// address is addresses[r] (host order, as Ipv4Address::Get()).
    Ptr<ShardedJob> Install(const NodeContainer& nodes,
                            const std::vector<uint32_t>& addresses) const;
    /// \brief The same with nodes given by NodeList id (Node::GetId()).
    Ptr<ShardedJob> Install(const std::vector<uint32_t>& nodeIds,
                            const std::vector<uint32_t>& addresses) const;

  private:
    std::vector<uint32_t> m_first;
    std::vector<uint32_t> m_last;
};

} // namespace ns3

#endif
