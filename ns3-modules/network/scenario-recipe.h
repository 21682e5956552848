// Builds a whole scenario from a recipe: plain text, one directive per line,
// written by the harness (harness/recipe.py) from its plan. The harness
// (harness/run.py, through cppyy) and the bench's native program
// (bench/native/main.cc) both build from it, so there is one build sequence:
// the recipe's order is the order of the ns-3 calls.
//
// Directives (tokens separated by spaces; LIST = comma-separated, "-" empty):
//   default NAME VALUE                 Config::SetDefault(NAME, StringValue(VALUE))
//   seed SEED / run RUN                RngSeedManager::SetSeed / SetRun (+ ResetNextStreamIndex)
//   nodes N                            TopologyBuilder::CreateNodes; a QueueTracker
//   link A B RATE_BPS DELAY_NS MTU     TopologyBuilder::AddLink
//   queue-disc LINK SIDE FROM TO ROOT BANDS LIMIT PRIOMAP QUANTA ECN_K SET_ECT BUFFER POOL ALPHAS
//                                      QueueDiscInstaller (LIMIT a QueueSize, e.g. 100p or
//                                      150000B; BUFFER per_band|shared|dynamic; POOL port|switch;
//                                      ALPHAS a LIST) + QueueTracker::TrackPrio
//   assign                             TopologyBuilder::AssignAddresses
//   host H LINK                        host H's address is side 0 of LINK
//   route NODE HOST LINK               TopologyBuilder::AddRoute
//   link-rate LINK AT_NS RATE_BPS      TopologyBuilder::ScheduleLinkRate
//   utilization INTERVAL_NS            a LinkUtilizationTracker with that Interval
//   app-ports LO HI APP                LinkUtilizationTracker::AddApplicationPorts
//   track LINK SIDE FROM TO            LinkUtilizationTracker::Track
//   job ring|ps                        starts a job's description (a new helper)
//   job-attribute NAME VALUE           TrainingJobHelper::SetJobAttribute(StringValue)
//   job-start NS                       TrainingJobHelper::SetStartTime
//   job-layers BYTES FP_NS BP_NS       TrainingJobHelper::SetLayers (LISTs)
//   job-layer-classes TOS              TrainingJobHelper::SetLayerClasses (LIST)
//   job-slowdown RANK START_NS END_NS FACTOR   TrainingJobHelper::AddSlowdown
//   job-compute-factors RANK FACTORS   TrainingJobHelper::SetComputeFactors (LIST)
//   job-buffers FIRST LAST BYTES TOS   RingAllreduceHelper::SetBuffers (LISTs)
//   job-scheduler push|pull TYPEID [NAME=VALUE..]
//                                      the policy (ring: push only; PsHelper::SetScheduler)
//   job-shards SHARDS                  PsHelper::SetTensorShards (LIST)
//   job-install WORKERS [SERVERS]      Install: worker r on host WORKERS[r] (LISTs;
//                                      ps: shard k on host SERVERS[k])
//   target COUNT SINCE_NS STOP_DELAY_NS   job 0's TrainingJob::SetMeasurementTarget
//   flow-apps PORT                     a FlowLog and FlowAppHelper(log, PORT)
//   flow-host HOST ACK_TOS LISTEN_TOS  FlowAppHelper::InstallSink + InstallSender
//   flow ID SRC DST SIZE TOS START_NS  FlowLog::AddFlow + the sender's AddFlow
//   window FROM_NS TO_NS               the measurement window: the run ends as soon as every
//                                      flow starting in it is done (FlowLog::StopOnceDone),
//                                      or at once without flows; with a target, the window
//                                      ends when the target is reached (HasEndedEarly)
//   stop DURATION_NS                   the run's length at most (GetStopTime; the caller runs)
#ifndef DDNN_SCENARIO_RECIPE_H
#define DDNN_SCENARIO_RECIPE_H

#include "flow-app-helper.h"
#include "flow-log.h"
#include "link-utilization-tracker.h"
#include "ps-helper.h"
#include "queue-tracker.h"
#include "ring-allreduce-helper.h"
#include "topology-builder.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Builds a scenario (network, trackers, training jobs, background flows) from a recipe.
 */
class ScenarioRecipe : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    /// The first line of every recipe.
    static constexpr const char* FORMAT = "ddnn-recipe 2";

    /// \brief Apply every line of `text` (the FORMAT line first; `#` lines are comments).
    void Apply(const std::string& text);

    /// \brief The network (after a `nodes` directive).
    Ptr<TopologyBuilder> GetTopology() const;
    /// \brief Every egress queue's bands.
    Ptr<QueueTracker> GetQueueTracker() const;
    /// \brief Link utilisation (after a `utilization` directive).
    Ptr<LinkUtilizationTracker> GetUtilizationTracker() const;
    /// \brief The background flows' log (null without `flow-apps`).
    Ptr<FlowLog> GetFlowLog() const;
    /// \brief Training jobs installed, in recipe order.
    uint32_t GetNJobs() const;
    /// \brief Job `i` (recipe order).
    Ptr<TrainingJob> GetJob(uint32_t i) const;
    /// \brief Job `i`, which must be a ring-allreduce job.
    Ptr<RingAllreduceJob> GetRingJob(uint32_t i) const;
    /// \brief Job `i`, which must be a parameter-server job.
    Ptr<PsJob> GetPsJob(uint32_t i) const;
    /// \brief IPv4 address of host `h` (after its `host` directive).
    Ipv4Address GetHostAddress(uint32_t h) const;
    /// \brief The `stop` directive's time (zero without one).
    Time GetStopTime() const;
    /// \brief Whether the run ended before `stop` because the window's flows were done.
    bool HasEndedEarly() const;
    /// \brief Events of the recipe's own that ran (the window's end; not the model's).
    uint32_t GetOwnEvents() const;

  protected:
    void DoDispose() override;

  private:
    /// Apply one directive; `lineNo` for error messages.
    void ApplyLine(const std::string& line, uint32_t lineNo);
    /// The helper of the job being described (`job` directive first).
    TrainingJobHelper& JobHelper(uint32_t lineNo);
    /// The `window` directive's end, without a target: an event of ours.
    void WindowEndEvent();
    /// The measurement window ended now: end the run once its flows are done.
    void WindowEnded();

    Ptr<TopologyBuilder> m_topology;
    Ptr<QueueTracker> m_queues;
    Ptr<LinkUtilizationTracker> m_utilization;
    std::vector<Ipv4Address> m_hostAddresses;
    std::optional<RingAllreduceHelper> m_ringHelper; //!< the ring job being described
    std::optional<PsHelper> m_psHelper;              //!< the PS job being described
    std::vector<Ptr<TrainingJob>> m_jobs;
    Ptr<FlowLog> m_flowLog;
    std::optional<FlowAppHelper> m_flowHelper;
    std::map<uint32_t, Ptr<FlowSendApplication>> m_senders;
    Time m_stop;
    bool m_hasTarget = false;
    bool m_hasWindow = false;
    Time m_windowFrom;
    bool m_endedEarly = false;
    uint32_t m_ownEvents = 0;
};

} // namespace ns3

#endif
