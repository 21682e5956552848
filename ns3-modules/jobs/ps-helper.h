// Installs a parameter-server training job: one PsWorker per worker node and
// one PsServer per shard node (a node may hold both: co-located PS), all
// sharing one PsJob, which Install() returns wired. Plain scalars and
// vectors, so the harness calls it from Python without glue:
//
//   helper = ns.PsHelper()
//   helper.SetLayers(bytes, fp_ns, bp_ns)
//   helper.SetTensorShards(shards)                   # shard of each layer
//   helper.SetScheduler(True, "ns3::ByteScheduler", ["PartitionBytes=160000"])
//   job = helper.Install(worker_node_ids, worker_addresses, shard_node_ids, shard_addresses)
//
// Its recipe lines (ScenarioRecipe hands them over; TrainingJobHelper reads
// the common ones):
//   job ps ns3::PsJob                  this helper (DDNN_JOB_HELPER)
//   job-shards SHARDS                  SetTensorShards (LIST)
//   job-scheduler push|pull TYPEID [NAME=VALUE..]   SetScheduler
//   job-install WORKERS SERVERS        Install: worker r on host WORKERS[r], shard k on
//                                      host SERVERS[k] (LISTs)
#ifndef DDNN_PS_HELPER_H
#define DDNN_PS_HELPER_H

#include "ps-job.h"
#include "ps-server.h"
#include "ps-worker.h"
#include "training-job-helper.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs a parameter-server job (workers, shards, channels) from the harness's plan.
 */
class PsHelper : public TrainingJobHelper
{
  public:
    /// \brief Job attributes: JobId, Port, Barrier, AggregationBytes, DeadlineTos,
    /// LinkBps.
    PsHelper();
    /// \brief The same, creating jobs of `jobType` (PsJob or a type derived from it).
    explicit PsHelper(TypeId jobType);

    /// \brief `job-shards` and `job-scheduler`, then TrainingJobHelper's.
    bool ApplyDirective(const std::string& directive, RecipeArgs& args) override;
    /// \brief Install(): hosts[0] are the workers, hosts[1] the shards.
    Ptr<TrainingJob> Install(const std::vector<Hosts>& hosts) const override;

    /// \brief Shard (PS index) of every tensor, one entry per layer (default: all on 0).
    void SetTensorShards(const std::vector<uint32_t>& shards);
    /// \brief Policy of pushes (push = true) or pulls: a CommScheduler TypeId name
    /// and "Name=Value" attributes.
    void SetScheduler(bool push, const std::string& typeId, const std::vector<std::string>& attributes);

    /// \brief Workers of rank r on node workerNodeIds[r] (NodeList ids) with IPv4
    /// address workerAddresses[r] (host order); shard k on shardNodeIds[k].
    Ptr<PsJob> Install(const std::vector<uint32_t>& workerNodeIds,
                       const std::vector<uint32_t>& workerAddresses,
                       const std::vector<uint32_t>& shardNodeIds,
                       const std::vector<uint32_t>& shardAddresses) const;

  private:
    std::vector<uint32_t> m_shards;
    std::map<bool, std::pair<std::string, std::vector<std::string>>> m_schedulers;
};

} // namespace ns3

#endif
