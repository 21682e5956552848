// Installs a ring-allreduce training job: one RingAllreduceWorker per node
// (rank r on nodes[r]; its right neighbour is rank r+1 mod N), all sharing
// one RingAllreduceJob, which Install() returns. Arguments are plain scalars
// and vectors so the harness calls it from Python without glue:
//
//   helper = ns.RingAllreduceHelper()
//   helper.SetLayers(bytes, fp_ns, bp_ns)            # lists of ints
//   helper.SetJobAttribute("QueuePolicy", ns.StringValue("priority"))
//   job = helper.Install(node_ids, addresses)        # NodeList ids, Ipv4Address::Get()
#ifndef DDNN_RING_ALLREDUCE_HELPER_H
#define DDNN_RING_ALLREDUCE_HELPER_H

#include "ring-allreduce-job.h"
#include "ring-allreduce-worker.h"
#include "training-job-helper.h"

#include "ns3/node-container.h"

#include <vector>

namespace ns3
{

class RingAllreduceHelper : public TrainingJobHelper
{
  public:
    /// Job attributes: JobId, Port, FusionBufferBytes, PartitionBytes,
    /// QueuePolicy, Barrier, DefaultTos, AckTos.
    RingAllreduceHelper();

    /// A new job with a worker of rank r on node nodes.Get(r), whose IPv4
    /// address is addresses[r] (host order, as Ipv4Address::Get()).
    Ptr<RingAllreduceJob> Install(const NodeContainer& nodes,
                                  const std::vector<uint32_t>& addresses) const;
    /// The same with nodes given by NodeList id (Node::GetId()).
    Ptr<RingAllreduceJob> Install(const std::vector<uint32_t>& nodeIds,
                                  const std::vector<uint32_t>& addresses) const;
    /// Install workers of an already configured job (its layers set).
    Ptr<RingAllreduceJob> InstallJob(Ptr<RingAllreduceJob> job,
                                     const NodeContainer& nodes,
                                     const std::vector<uint32_t>& addresses) const;
};

} // namespace ns3

#endif
