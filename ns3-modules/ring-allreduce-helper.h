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

#include "ns3/attribute.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

class RingAllreduceHelper
{
  public:
    RingAllreduceHelper();

    /// An attribute of the jobs this helper creates (JobId, Port,
    /// FusionBufferBytes, QueuePolicy, Barrier, DefaultTos, AckTos).
    void SetJobAttribute(const std::string& name, const AttributeValue& value);
    /// Per-layer bytes and forward/backward compute time in nanoseconds.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// IP ToS of one layer's gradients (default: the job's DefaultTos).
    void SetLayerTos(uint32_t layer, uint8_t tos);
    /// When the workers start (default 0).
    void SetStartTime(Time start);

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

  private:
    ObjectFactory m_jobFactory;
    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::map<uint32_t, uint8_t> m_layerTos;
    Time m_start;
};

} // namespace ns3

#endif
