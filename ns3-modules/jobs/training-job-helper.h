// What every training-job helper takes before Install(): the job's
// attributes, its layers (bytes and compute times), per-layer IP ToS, the
// applications' start time and periods of slower compute per worker; and
// the NodeList lookup the Python side needs.
// RingAllreduceHelper and PsHelper add their architecture's part.
#ifndef DDNN_TRAINING_JOB_HELPER_H
#define DDNN_TRAINING_JOB_HELPER_H

#include "layer-compute.h"
#include "training-job.h"

#include "ns3/attribute.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief What installing any training job has in common: the per-layer table, attributes, policy.
 */
class TrainingJobHelper
{
  public:
    /// \brief An attribute of the jobs this helper creates.
    void SetJobAttribute(const std::string& name, const AttributeValue& value);
    /// \brief Per-layer bytes and forward/backward compute time in nanoseconds.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// \brief IP ToS of every layer's gradients, one entry per layer (as planned in Python).
    void SetLayerClasses(const std::vector<uint32_t>& tos);
    /// \brief IP ToS of one layer's gradients (default: the job's DefaultTos).
    void SetLayerTos(uint32_t layer, uint8_t tos);
    /// \brief When the applications start (default 0).
    void SetStartTime(Time start);
    /// \brief Worker `rank` computes `factor` times slower in [startNs, endNs).
    void AddSlowdown(uint32_t rank, int64_t startNs, int64_t endNs, double factor);
    /// Worker `rank` computes iteration k `factors[k]` times slower (stragglers).
    void SetComputeFactors(uint32_t rank, const std::vector<double>& factors);

  protected:
    /// `jobType`: the TypeId of the jobs Install() creates.
    explicit TrainingJobHelper(TypeId jobType);
    /// The node of NodeList id `id`; aborts naming `who` if there is none.
    static Ptr<Node> GetNodeById(uint32_t id, const std::string& who);
    /// The slowdowns of worker `rank` (AddSlowdown).
    std::vector<LayerCompute::Slowdown> GetSlowdowns(uint32_t rank) const;
    /// The per-iteration compute factors of worker `rank` (empty: none).
    std::vector<double> GetComputeFactors(uint32_t rank) const;
    /// Hand the per-layer table (layers, classes) to `job`.
    void DescribeLayers(Ptr<TrainingJob> job) const;

    ObjectFactory m_jobFactory;
    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::vector<uint32_t> m_layerClasses; //!< every layer's ToS; empty: DefaultTos
    std::map<uint32_t, uint8_t> m_layerTos;
    Time m_start;
    std::map<uint32_t, std::vector<LayerCompute::Slowdown>> m_slowdowns;
    std::map<uint32_t, std::vector<double>> m_computeFactors;
};

} // namespace ns3

#endif
