// What every training-job helper takes before Install(): the job's
// attributes, its layers (bytes and compute times), per-layer IP ToS, the
// applications' start time and periods of slower compute per worker; and
// the NodeList lookup the Python side needs.
// RingAllreduceHelper and PsHelper add their architecture's part.
//
// It is also the plug-in boundary of the scenario recipe: ScenarioRecipe
// creates the helper of a job by the job's TypeId (`job NAME TYPEID`), hands
// it the job's `job-*` lines (ApplyDirective) and installs the job on the
// hosts of `job-install` (Install). A helper registers itself for its job
// type with DDNN_JOB_HELPER, in its own .cc file: ScenarioRecipe names no
// architecture. The directives every helper reads:
//   job-attribute NAME VALUE           SetJobAttribute(StringValue)
//   job-start NS                       SetStartTime
//   job-layers BYTES FP_NS BP_NS       SetLayers (LISTs)
//   job-layer-classes TOS              SetLayerClasses (LIST)
//   job-slowdown RANK START_NS END_NS FACTOR   AddSlowdown
//   job-compute-factors RANK FACTORS   SetComputeFactors (LIST)
#ifndef DDNN_TRAINING_JOB_HELPER_H
#define DDNN_TRAINING_JOB_HELPER_H

#include "layer-compute.h"
#include "recipe-args.h"
#include "training-job.h"

#include "ns3/abort.h"
#include "ns3/attribute.h"
#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <map>
#include <memory>
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
    virtual ~TrainingJobHelper() = default;

    /// The hosts of one `job-install` list, as the helpers' Install() take them.
    struct Hosts
    {
        std::vector<uint32_t> nodeIds;   //!< NodeList ids (Node::GetId())
        std::vector<uint32_t> addresses; //!< their IPv4 addresses, host order (Ipv4Address::Get())
    };

    /**
     * \brief Creates the helper of a job type (DDNN_JOB_HELPER registers one).
     * \param jobType the TypeId the helper's jobs are created with
     * \return the helper
     */
    typedef std::unique_ptr<TrainingJobHelper> (*Factory)(TypeId jobType);
    /**
     * \brief Make `factory` create the helper of `jobType` and of the job
     * types derived from it (DDNN_JOB_HELPER calls this).
     * \param jobType a TrainingJob TypeId
     * \param factory creates its helper
     * \return true (the value initialises DDNN_JOB_HELPER's static)
     */
    static bool Register(TypeId jobType, Factory factory);
    /**
     * \brief A helper for jobs of `jobType`: that of the nearest registered
     * type among `jobType` and its parents, so that a job derived from a
     * registered one is installed as its parent is, with its own TypeId.
     * \param jobType a TrainingJob TypeId
     * \return the helper; null if no type on the way is registered
     */
    static std::unique_ptr<TrainingJobHelper> Create(TypeId jobType);

    /**
     * \brief Apply one of the job's own recipe lines. ScenarioRecipe hands
     * over every `job-*` line between `job` and `job-install`, so that an
     * architecture's directives live with its helper. Override to read an
     * architecture's own directives and defer to this for the others.
     * \param directive the line's directive ("job-layers")
     * \param args its arguments, to read all of
     * \return false if the directive is not one of this helper's
     */
    virtual bool ApplyDirective(const std::string& directive, RecipeArgs& args);
    /**
     * \brief Install the job described so far (`job-install`).
     * \param hosts the lists of `job-install`, in order: what each holds is
     * the architecture's (ring: the workers; PS: the workers, then the shards)
     * \return the job
     */
    virtual Ptr<TrainingJob> Install(const std::vector<Hosts>& hosts) const = 0;

    /// \brief An attribute of the jobs this helper creates.
    void SetJobAttribute(const std::string& name, const AttributeValue& value);
    /// \brief Per-layer bytes and forward/backward compute time in nanoseconds.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// \brief IP ToS of every layer's gradients, one entry per layer (as planned in
    /// Python; default: class 0).
    void SetLayerClasses(const std::vector<uint32_t>& tos);
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
    /// Install one `Worker` per node of `nodes` around a ring (worker r's left
    /// neighbour is r - 1, its right r + 1, at `addresses`), each with this
    /// helper's slowdowns, compute factors and start time; then validate the
    /// job. `who` names the helper in the aborts. (RingAllreduceHelper,
    /// ShardedHelper: their workers derive from RingWorker.)
    template <typename Worker, typename Job>
    Ptr<Job> InstallRing(Ptr<Job> job,
                         const NodeContainer& nodes,
                         const std::vector<uint32_t>& addresses,
                         const std::string& who) const
    {
        const uint32_t n = nodes.GetN();
        NS_ABORT_MSG_IF(n < 2, who << ": a ring needs at least 2 nodes (got " << n << ")");
        NS_ABORT_MSG_IF(addresses.size() != n,
                        who << ": " << n << " nodes but " << addresses.size() << " addresses");
        NS_ABORT_MSG_IF(job->GetNWorkers() != 0, who << ": the job already has workers");
        for (uint32_t r = 0; r < n; ++r)
        {
            auto worker = CreateObject<Worker>();
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
    /// The `job-scheduler` line: push (true) or pull, a CommScheduler TypeId,
    /// its "Name=Value" attributes.
    struct SchedulerLine
    {
        bool push;                           //!< `push` (true) or `pull`
        std::string typeId;                  //!< the CommScheduler TypeId name
        std::vector<std::string> attributes; //!< "Name=Value" each
    };
    /// Read `job-scheduler push|pull TYPEID [NAME=VALUE..]`.
    static SchedulerLine ReadScheduler(RecipeArgs& args);
    /// Abort naming the helper unless `hosts` has `n` lists.
    static void CheckHostLists(const std::vector<Hosts>& hosts, size_t n, const std::string& who);

    ObjectFactory m_jobFactory;
    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::vector<uint32_t> m_layerClasses; //!< every layer's ToS; empty: class 0
    Time m_start;
    std::map<uint32_t, std::vector<LayerCompute::Slowdown>> m_slowdowns;
    std::map<uint32_t, std::vector<double>> m_computeFactors;
};

} // namespace ns3

/**
 * \ingroup ddnn
 * \brief Make HELPER the helper ScenarioRecipe creates for jobs of type JOB
 * (and of types derived from it): `job NAME TYPEID` then needs no branch in
 * ScenarioRecipe. Write it once, in the helper's .cc file, inside namespace
 * ns3. HELPER has a constructor taking the job's TypeId.
 */
#define DDNN_JOB_HELPER(JOB, HELPER)                                                               \
    static const bool g_##HELPER##Registered = TrainingJobHelper::Register(                        \
        JOB::GetTypeId(),                                                                          \
        [](TypeId jobType) -> std::unique_ptr<TrainingJobHelper> {                                 \
            return std::make_unique<HELPER>(jobType);                                              \
        })

#endif
