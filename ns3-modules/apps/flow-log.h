// The table of background flows of one run: what each flow is (endpoints,
// size, ToS, planned start) and what happened to it (start, bytes received,
// completion time, socket errors). Senders and sinks share one FlowLog; a
// sink learns which flow an accepted connection carries from the sender's
// (address, port), so no bytes are tagged on the wire.
#ifndef DDNN_FLOW_LOG_H
#define DDNN_FLOW_LOG_H

#include "tcp-socket-ddnn.h"

#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief The table of one run's background flows: what each flow is and what happened to it.
 */
class FlowLog : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    /// \brief Add a flow; returns its id (ids are 0, 1, 2, ... in call order).
    uint64_t AddFlow(uint32_t srcNode,
                     uint32_t dstNode,
                     Ipv4Address dst,
                     uint64_t size,
                     uint8_t tos,
                     Time start);

    /// \brief Number of flows added.
    uint64_t GetNFlows() const;
    /// \brief Number of flows whose last byte arrived.
    uint64_t GetNCompleted() const;
    /// \brief Number of flows with a socket error before completing.
    uint64_t GetNErrors() const;
    /// \brief Size in bytes of flow `id`.
    uint64_t GetSize(uint64_t id) const;
    /// \brief IP ToS of flow `id`.
    uint8_t GetTos(uint64_t id) const;
    /// \brief Destination address of flow `id`.
    Ipv4Address GetDestination(uint64_t id) const;
    /// \brief Planned start of flow `id`.
    Time GetPlannedStart(uint64_t id) const;

    /// \brief The sender opened the connection of flow `id` from (src, port).
    void NotifyStarted(uint64_t id, Ipv4Address src, uint16_t port);
    /// \brief The sink accepted a connection from (src, port): which flow is it?
    /// Returns false if no started flow matches.
    bool ClaimConnection(Ipv4Address src, uint16_t port, uint64_t& id);
    /// \brief The sink received `bytes` of flow `id`; records the completion time
    /// when the last byte arrives.
    void NotifyReceived(uint64_t id, uint64_t bytes);
    /// \brief A socket of flow `id` failed (connection refused, reset, timeout)
    /// before the flow completed; ignored once the sink has every byte.
    void NotifyError(uint64_t id, const std::string& what);

    /// \brief Flow `id` sends on `socket`: its timeouts, spurious timeouts
    /// (judged against the sink's received bytes), time waiting for them and
    /// fast retransmits are its row's, read when it ends (SenderEnded) or,
    /// still open at the end of the run, by ToCsv.
    void WatchSender(uint64_t id, Ptr<TcpSocketDdnn> socket);
    /// \brief Flow `id`'s sending socket closed or failed: its events kept.
    void SenderEnded(uint64_t id);
    /// \brief Bytes the sink of flow `id` has received, in order.
    uint64_t GetReceived(uint64_t id) const;

    /// \brief End the run (Simulator::Stop) as soon as every flow that starts
    /// in [from, to] has completed or failed: now, if they all have. Call it at
    /// `to` or later (the end of a measurement window: no flow of it is
    /// still to be added).
    void StopOnceDone(Time from, Time to);
    /// \brief Whether StopOnceDone has stopped the run.
    bool HasStoppedOnceDone() const;

    /// \brief id,src_node,dst_node,size,tos,start_ns,end_ns,received_bytes,error
    /// (end_ns = -1 for a flow that did not complete)
    std::string ToCsv() const;

    /**
     * \brief Signature of the Completed trace source: a flow's last byte arrived.
     * \param id the flow's id (its row in ToCsv())
     * \param size the flow's size in bytes
     * \param start when its sender opened the connection (start_ns)
     * \param fct its flow completion time (end_ns - start_ns)
     */
    typedef void (*CompletedCallback)(uint64_t id, uint64_t size, Time start, Time fct);

  private:
    struct Flow
    {
        uint32_t srcNode;
        uint32_t dstNode;
        Ipv4Address dst;
        uint64_t size;
        uint8_t tos;
        Time start;
        Time end;
        bool started = false;
        bool completed = false;
        uint64_t received = 0;
        std::string error;
        TcpSocketDdnn::LossEvents loss;   //!< its sender's, once it ended
    };

    /// A flow completed or failed: StopOnceDone's count.
    void FlowEnded(const Flow& f);

    static uint64_t Key(Ipv4Address src, uint16_t port);

    std::vector<Flow> m_flows;
    std::unordered_map<uint64_t, Ptr<TcpSocketDdnn>> m_senders; //!< flow id -> open sender
    std::unordered_map<uint64_t, uint64_t> m_connections; //!< (src, port) -> flow id
    uint64_t m_completed = 0;
    uint64_t m_errors = 0;
    bool m_stopArmed = false;  //!< StopOnceDone was called
    Time m_stopFrom;           //!< its window
    Time m_stopTo;
    uint64_t m_stopPending = 0; //!< flows of the window not yet done
    bool m_stoppedOnceDone = false;
    /// A flow's last byte arrived: (id, size, start, FCT); see CompletedCallback.
    TracedCallback<uint64_t, uint64_t, Time, Time> m_completedTrace;
};

} // namespace ns3

#endif
