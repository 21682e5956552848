// Builds a whole scenario from a recipe: plain text, one directive per line,
// written by the harness (harness/engine/recipe.py) from its plan. The harness
// (harness/engine/simulation.py, through cppyy) and the bench's native program
// (bench/native/main.cc) both build from it, so there is one build sequence:
// the recipe's order is the order of the ns-3 calls.
//
// The composition root: it alone knows every part (network, trackers, jobs,
// background flows), each of which knows none of the others.
//
// Directives (tokens separated by spaces; LIST = comma-separated, "-" empty;
// COMPONENT = a TypeId and its Name=Value attributes, RecipeComponent):
//   default NAME VALUE                 Config::SetDefault(NAME, StringValue(VALUE))
//   seed SEED / run RUN                RngSeedManager::SetSeed / SetRun (+ ResetNextStreamIndex)
//   nodes N                            TopologyBuilder::CreateNodes; a QueueTracker
//   link A B RATE_BPS DELAY_NS MTU     TopologyBuilder::AddLink
//   queue-disc LINK SIDE FROM TO EGRESS ROOT BANDS
//                                      three COMPONENTs: EGRESS an ns3::QueueDiscInstaller
//                                      (Bands, BufferModel, BufferSize, BufferPool), ROOT its
//                                      root queue disc (e.g. ns3::PrioQueueDisc Priomap=...),
//                                      BANDS its bands (ns3::BandQueueDisc; a value with
//                                      commas: one per band); QueueDiscInstaller::Install on
//                                      the link's SIDE, + QueueTracker::TrackPrio. E.g.
//                                      queue-disc 0 0 0 4 ns3::QueueDiscInstaller Bands=3
//                                      BufferModel=shared BufferSize=100p BufferPool=port
//                                      ns3::PrioQueueDisc Priomap=1,2,2,2,1,2,0,0,1,1,1,1,1,1,1,1
//                                      ns3::BandQueueDisc MarkThreshold=0,0,20 SetEct=0,0,1
//   pfc LINK SIDE FROM TO COMPONENT    PFC at the link's SIDE device: COMPONENT an ns3::PfcPort
//                                      (Generate, Xoff, XoffAlpha, XonOffset, Headroom,
//                                      PauseQuanta), PfcPort::Install; after its queue-disc
//                                      line, before `assign`; numbered from 0 (GetPfcPort)
//   rdma HOST COMPONENT                an RDMA (RoCEv2) stack on HOST: COMPONENT an
//                                      ns3::RdmaSocketFactory, aggregated to the node; its
//                                      sockets' defaults are `default ns3::RdmaSocket::...`
//   assign                             TopologyBuilder::AssignAddresses
//   host H LINK                        host H's address is side 0 of LINK, and H's
//                                      default route is LINK (AddDefaultRoute)
//   route NODE HOST LINK               TopologyBuilder::AddRoute (switches only)
//   link-rate LINK AT_NS RATE_BPS      TopologyBuilder::ScheduleLinkRate
//   loss LINK SIDE RATE STREAM         a RateErrorModel (packet unit, ErrorRate RATE, random
//                                      stream STREAM) as the ReceiveErrorModel of the link's
//                                      SIDE device: packets arriving there are lost at random
//   utilization INTERVAL_NS            a LinkUtilizationTracker with that Interval
//   app-ports LO HI APP                LinkUtilizationTracker::AddApplicationPorts
//   track LINK SIDE FROM TO            LinkUtilizationTracker::Track
//   queue-sampler INTERVAL_NS START_NS STOP_NS
//                                      a QueueSampler with that Interval, Start and Stop
//   sample-queue LINK SIDE FROM TO BANDS
//                                      QueueSampler::Track of the root queue disc on the
//                                      link's SIDE (BANDS: a LIST, "-" every band)
//   job NAME TYPEID                    starts a job's description: the helper registered for
//                                      the TrainingJob TypeId TYPEID (DDNN_JOB_HELPER; NAME,
//                                      the architecture, names the job in messages)
//   job-*                              the job's own lines, read by its helper
//                                      (TrainingJobHelper::ApplyDirective; the directives are
//                                      listed in training-job-helper.h and in the helpers')
//   job-install HOSTS...               TrainingJobHelper::Install: one LIST of hosts per group
//                                      the architecture places (ring: the workers; ps: the
//                                      workers, then the shards)
//   target COUNT SINCE_NS STOP_DELAY_NS   job 0's TrainingJob::SetMeasurementTarget
//   flow-apps PORT                     a FlowLog and FlowAppHelper(log, PORT)
//   flow-host HOST ACK_TOS LISTEN_TOS  FlowAppHelper::InstallSink + InstallSender
//   flow ID SRC DST SIZE TOS START_NS  FlowLog::AddFlow + the sender's AddFlow
//   service-log                        a ServiceLog and a ServiceHelper (every service's requests)
//   service-app SERVICE HOST PEER PORT STREAM COMPONENT
//                                      one application of service SERVICE on HOST: COMPONENT
//                                      an Application TypeId and its attributes (e.g.
//                                      ns3::StreamReceiverApplication Port=7002), installed by
//                                      ServiceHelper::Install, which sets its ServiceLog, its
//                                      peer's address (PEER a host, -1 none; PORT its port for
//                                      a Remote address) and its random stream (STREAM, -1
//                                      none); numbered from 0 in recipe order (GetServiceApp)
//   service-request ID SERVICE QUERY CLIENT SERVER REQUEST_BYTES RESPONSE_BYTES START_NS
//                                      ServiceLog::AddRequest + the AddRequest of the service's
//                                      RequestClientApplication on CLIENT (START_NS -1: closed
//                                      loop; QUERY -1: not a query's)
//   service-note-rx APP FROM_NS TO_NS  the bytes service app APP (a PacketSink) has received,
//                                      noted at FROM_NS and TO_NS (the window; GetServiceRx)
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
#include "pfc-port.h"
#include "rdma-socket-factory.h"
#include "queue-sampler.h"
#include "queue-tracker.h"
#include "recipe-args.h"
#include "recipe-component.h"
#include "request-client-application.h"
#include "service-helper.h"
#include "topology-builder.h"
#include "training-job-helper.h"

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
    static constexpr const char* FORMAT = "ddnn-recipe 6";

    /// The simulator's default event queue, set by Apply (attribute
    /// EventQueue). ns-3's default (a std::map) chases pointers through a
    /// tree that grows with the fabric's pending events; a binary heap on a
    /// vector keeps them together, and PurgingScheduler also drops the
    /// cancelled timers TCP leaves behind on every acknowledgement. All pop
    /// events in (time, uid) order, so runs are identical
    /// (docs/performance/scaling.md).
    static constexpr const char* EVENT_QUEUE = "ns3::PurgingScheduler";

    /// \brief Apply every line of `text` (the FORMAT line first; `#` lines are
    /// comments), with the simulator's event queue set to EventQueue first.
    void Apply(const std::string& text);

    /// \brief The network (after a `nodes` directive).
    Ptr<TopologyBuilder> GetTopology() const;
    /// \brief Every egress queue's bands.
    Ptr<QueueTracker> GetQueueTracker() const;
    /// \brief Link utilisation (after a `utilization` directive).
    Ptr<LinkUtilizationTracker> GetUtilizationTracker() const;
    /// \brief The queue-length sampler (null without a `queue-sampler` directive).
    Ptr<QueueSampler> GetQueueSampler() const;
    /// \brief The background flows' log (null without `flow-apps`).
    Ptr<FlowLog> GetFlowLog() const;
    /// \brief The services' request log (null without `service-log`).
    Ptr<ServiceLog> GetServiceLog() const;
    /// \brief Service applications installed (`service-app` lines).
    uint32_t GetNServiceApps() const;
    /// \brief Service application `i` (recipe order); cppyy gives it its own class.
    Ptr<Application> GetServiceApp(uint32_t i) const;
    /// \brief The service (its place among the scenario's) of service application `i`.
    uint32_t GetServiceAppService(uint32_t i) const;
    /// \brief Whether a `service-note-rx` line notes service application `i`'s bytes.
    bool HasServiceRx(uint32_t i) const;
    /// \brief Bytes service application `i` had received at its FROM_NS (atEnd false) or TO_NS.
    uint64_t GetServiceRx(uint32_t i, bool atEnd) const;
    /// \brief PFC ports installed (`pfc` lines).
    uint32_t GetNPfcPorts() const;
    /// \brief PFC port `i` (recipe order).
    Ptr<PfcPort> GetPfcPort(uint32_t i) const;
    /// \brief RDMA stacks installed (`rdma` lines).
    uint32_t GetNRdmaStacks() const;
    /// \brief RDMA stack `i` (recipe order).
    Ptr<RdmaSocketFactory> GetRdmaStack(uint32_t i) const;
    /// \brief The host of RDMA stack `i`.
    uint32_t GetRdmaStackHost(uint32_t i) const;
    /// \brief Training jobs installed, in recipe order.
    uint32_t GetNJobs() const;
    /// \brief Job `i` (recipe order). Python sees it as its own class (cppyy
    /// casts to the object's type), C++ callers DynamicCast it.
    Ptr<TrainingJob> GetJob(uint32_t i) const;
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
    /// Apply one line: its directive's handler reads the arguments.
    void ApplyLine(const std::string& line, uint32_t lineNo);

    /// A directive's handler: reads every argument of its line from `args`.
    typedef void (ScenarioRecipe::*Handler)(RecipeArgs& args);
    /// \brief The dispatch table: directive -> handler.
    /// \return the handlers of every directive listed above
    static const std::map<std::string, Handler>& GetHandlers();

    // ---- network
    void ApplyDefault(RecipeArgs& args);   //!< `default NAME VALUE`
    void ApplySeed(RecipeArgs& args);      //!< `seed SEED`
    void ApplyRun(RecipeArgs& args);       //!< `run RUN`
    void ApplyNodes(RecipeArgs& args);     //!< `nodes N`
    void ApplyLink(RecipeArgs& args);      //!< `link A B RATE_BPS DELAY_NS MTU`
    void ApplyQueueDisc(RecipeArgs& args); //!< `queue-disc LINK SIDE FROM TO EGRESS ROOT BANDS`
    void ApplyPfc(RecipeArgs& args);       //!< `pfc LINK SIDE FROM TO COMPONENT`
    void ApplyRdma(RecipeArgs& args);      //!< `rdma HOST COMPONENT`
    void ApplyAssign(RecipeArgs& args);    //!< `assign`
    void ApplyHost(RecipeArgs& args);      //!< `host H LINK`
    void ApplyRoute(RecipeArgs& args);     //!< `route NODE HOST LINK`
    void ApplyLinkRate(RecipeArgs& args);  //!< `link-rate LINK AT_NS RATE_BPS`
    void ApplyLoss(RecipeArgs& args);      //!< `loss LINK SIDE RATE STREAM`
    // ---- measurement
    void ApplyUtilization(RecipeArgs& args); //!< `utilization INTERVAL_NS`
    void ApplyAppPorts(RecipeArgs& args);    //!< `app-ports LO HI APP`
    void ApplyTrack(RecipeArgs& args);       //!< `track LINK SIDE FROM TO`
    void ApplyQueueSampler(RecipeArgs& args); //!< `queue-sampler INTERVAL_NS START_NS STOP_NS`
    void ApplySampleQueue(RecipeArgs& args);  //!< `sample-queue LINK SIDE FROM TO BANDS`
    // ---- training jobs
    void ApplyJob(RecipeArgs& args);          //!< `job NAME TYPEID`
    void ApplyJobDirective(RecipeArgs& args); //!< `job-*`: the job's helper reads it
    void ApplyJobInstall(RecipeArgs& args);   //!< `job-install HOSTS...`
    void ApplyTarget(RecipeArgs& args);       //!< `target COUNT SINCE_NS STOP_DELAY_NS`
    // ---- background flows and the run
    void ApplyFlowApps(RecipeArgs& args); //!< `flow-apps PORT`
    void ApplyFlowHost(RecipeArgs& args); //!< `flow-host HOST ACK_TOS LISTEN_TOS`
    void ApplyFlow(RecipeArgs& args);     //!< `flow ID SRC DST SIZE TOS START_NS`
    void ApplyWindow(RecipeArgs& args);   //!< `window FROM_NS TO_NS`
    // ---- services
    void ApplyServiceLog(RecipeArgs& args);     //!< `service-log`
    void ApplyServiceApp(RecipeArgs& args);     //!< `service-app SERVICE HOST PEER PORT ...`
    void ApplyServiceRequest(RecipeArgs& args); //!< `service-request ID SERVICE QUERY ...`
    void ApplyServiceNoteRx(RecipeArgs& args);  //!< `service-note-rx APP FROM_NS TO_NS`
    /// Note service application `i`'s bytes received now (an event of ours).
    void NoteServiceRx(uint32_t i, bool atEnd);
    void ApplyStop(RecipeArgs& args);     //!< `stop DURATION_NS`

    /// The helper of the job being described (`job` directive first).
    TrainingJobHelper& JobHelper(const RecipeArgs& args);
    /// The hosts of a `job-install` list: their nodes and addresses.
    TrainingJobHelper::Hosts HostsOf(const std::vector<uint32_t>& hosts) const;
    /// The `window` directive's end, without a target: an event of ours.
    void WindowEndEvent();
    /// The measurement window ended now: end the run once its flows are done.
    void WindowEnded();

    Ptr<TopologyBuilder> m_topology;
    std::vector<Ptr<PfcPort>> m_pfcPorts;
    std::vector<std::pair<uint32_t, Ptr<RdmaSocketFactory>>> m_rdmaStacks;
    Ptr<QueueTracker> m_queues;
    Ptr<LinkUtilizationTracker> m_utilization;
    Ptr<QueueSampler> m_sampler;
    std::vector<Ipv4Address> m_hostAddresses;
    std::unique_ptr<TrainingJobHelper> m_job; //!< the helper of the job being described
    std::string m_jobName;                    //!< its `job` directive's NAME
    std::vector<Ptr<TrainingJob>> m_jobs;
    Ptr<FlowLog> m_flowLog;
    std::optional<FlowAppHelper> m_flowHelper;
    std::map<uint32_t, Ptr<FlowSendApplication>> m_senders;
    Ptr<ServiceLog> m_serviceLog;
    std::optional<ServiceHelper> m_serviceHelper;
    /// (service, host) -> its client
    std::map<std::pair<uint32_t, uint32_t>, Ptr<RequestClientApplication>> m_serviceClients;
    std::vector<Ptr<Application>> m_serviceApps; //!< `service-app` lines, in order
    std::vector<uint32_t> m_serviceAppServices;  //!< each one's service
    /// service app -> its bytes received (at FROM_NS, at TO_NS), `service-note-rx`
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> m_serviceRx;
    Time m_stop;
    std::string m_eventQueue; //!< the Scheduler TypeId Apply sets (EventQueue)
    bool m_hasTarget = false;
    bool m_hasWindow = false;
    Time m_windowFrom;
    bool m_endedEarly = false;
    uint32_t m_ownEvents = 0;
};

} // namespace ns3

#endif
