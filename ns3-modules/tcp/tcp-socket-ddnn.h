// ns-3.44's TcpSocketBase with one correction: a connection that leaves its
// ECN window reduction (the CWR state) on a duplicate ACK no longer aborts
// the simulation.
//
// TcpSocketBase counts duplicate ACKs in CWR without acting on them, and
// the ACK that ends CWR (it covers the recovery point) resets the count only
// when it is not itself a duplicate ACK (it carries new SACK information).
// When it is, the connection is back in Open with the CWR's count standing
// (25, say); DupAck then increments it and fails the wheel's assertion
// `m_dupAckCount == 1` ("From OPEN->DISORDER but with 25 dup ACKs"), which
// ends the process. Seen with DCTCP under parameter-server incast.
//
// In Open the count is 0 (Disorder, Recovery and Loss leave to Open with it
// reset), except in that one case; so this socket clears it before an ACK
// is processed in Open. A run that did not abort is unchanged; one that did
// goes on as RFC 6675 says: the duplicate ACK moves Open to Disorder with a
// count of 1, and the SACK scoreboard (IsLost) starts recovery if the
// standing SACKs show a loss.
#ifndef DDNN_TCP_SOCKET_DDNN_H
#define DDNN_TCP_SOCKET_DDNN_H

#include "ns3/node.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/traced-callback.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief TcpSocketBase (ns-3.44) whose duplicate-ACK count starts from 0 in
 * the Open state, so that leaving CWR on a duplicate ACK does not abort.
 *
 * Create it with CreateTcpSocket(node): it is set up as the node's
 * TcpL4Protocol sets up its own sockets (its SocketType, RecoveryType and
 * RttEstimatorType), and its attributes are TcpSocketBase's.
 */
class TcpSocketDdnn : public TcpSocketBase
{
  public:
    /// What delayed this connection besides queueing: its retransmission
    /// timeouts, how many of them were spurious (the segment they resent had
    /// reached the peer application: it, or its ACK, was only late), the
    /// time it waited for them (from its last progress, the head of its send
    /// buffer moving or the connection opening, to each timeout), and its
    /// fast retransmits (entries into loss recovery).
    struct LossEvents
    {
        uint32_t timeouts = 0;
        uint32_t spuriousTimeouts = 0;
        uint32_t fastRetransmits = 0;
        Time timeoutWait;
    };

    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    TcpSocketDdnn();
    /// \brief Copy constructor (Fork). \param sock the socket to copy
    TcpSocketDdnn(const TcpSocketDdnn& sock);
    ~TcpSocketDdnn() override;
    /// \brief This class's TypeId (TcpSocketBase answers its own).
    /// \return the object TypeId
    TypeId GetInstanceTypeId() const override;

    /// \brief What delayed the connection so far. \return its LossEvents
    const LossEvents& GetLossEvents() const;
    /// \brief The LossEvents of `node`'s open TCP connections (of this
    /// class) with a port in [firstPort, lastPort] at either end, summed:
    /// a training job's, read once at the end of a run (a connection
    /// closed before then is no longer the node's, and is left out).
    /// \param node the node \param firstPort the range's first port
    /// \param lastPort its last \return the sum
    static LossEvents SumOnPorts(Ptr<Node> node, uint16_t firstPort, uint16_t lastPort);
    /// \brief The back-off spans of the same connections as SumOnPorts:
    /// for each of their timeouts, the time they waited without progress
    /// before it (the timeoutWait it adds), one "from_ns,to_ns" line each,
    /// so that a job's iterations can say which part of their wait fell
    /// in a back-off. \param node the node \param firstPort the range's
    /// first port \param lastPort its last \return the lines
    static std::string BackoffsOnPorts(Ptr<Node> node, uint16_t firstPort, uint16_t lastPort);
    /**
     * \brief Signature of the Timeout trace source: a retransmission timeout
     * counted (one call per timeout of LossEvents).
     * \param since the last progress it waited from
     * \param at the timeout
     * \param spurious whether the segment it resends had reached the peer
     */
    typedef void (*TimeoutCallback)(Time since, Time at, bool spurious);
    /// \brief Where the peer application's in-order received bytes can be
    /// read (its flow's count in a FlowLog): a timeout whose head segment
    /// had arrived is spurious. Without it no timeout is called spurious.
    /// \param received key -> bytes the peer application has received
    /// \param key this connection's key (its flow id)
    void SetPeerReceived(Callback<uint64_t, uint64_t> received, uint64_t key);
    /// \brief TcpSocketBase's; its time is the first progress.
    /// \param address the peer \return 0 on success
    int Connect(const Address& address) override;
    /// \brief TcpSocketBase's; data into an empty send buffer (an idle
    /// connection given new work) is progress too: a later timeout waits
    /// from it, not from the connection's last ACK before it was idle.
    /// \param p the data \param flags as Socket::Send's \return its bytes, or -1
    int Send(Ptr<Packet> p, uint32_t flags) override;

  protected:
    Ptr<TcpSocketBase> Fork() override;
    /// \brief Counts the timeout (and whether it is spurious) before
    /// TcpSocketBase's backs off and resends.
    void ReTxTimeout() override;
    /// \brief TcpSocketBase's, after clearing a duplicate-ACK count that a
    /// CWR exit left standing in Open.
    void ProcessAck(const SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const SequenceNumber32& oldHeadSequence,
                    bool receivedData) override;

  private:
    /// `node`'s open connections of this class with a port in [firstPort,
    /// lastPort] at either end (SumOnPorts's and BackoffsOnPorts's).
    static std::vector<Ptr<TcpSocketDdnn>> OnPorts(Ptr<Node> node,
                                                   uint16_t firstPort,
                                                   uint16_t lastPort);
    /// The congestion state's trace: an entry into CA_RECOVERY is a fast retransmit.
    void CongStateChanged(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to);
    /// The connection state's trace: ESTABLISHED is progress.
    void StateChanged(TcpStates_t from, TcpStates_t to);
    /// Connects the two traces above (each constructor: a copy has none).
    void WatchStates();

    LossEvents m_loss;               //!< what delayed it so far
    Time m_lastProgress;             //!< its last progress (or last timeout)
    uint64_t m_ackedBytes = 0;       //!< data bytes the peer acknowledged
    Callback<uint64_t, uint64_t> m_peerReceived; //!< the peer's received bytes, by key
    uint64_t m_peerKey = 0;          //!< this connection's key for it
    /// each timeout's wait: (last progress, the timeout), in ns; timeouts
    /// are rare, so a connection keeps them all
    std::vector<std::pair<int64_t, int64_t>> m_backoffs;
    TracedCallback<Time, Time, bool> m_timeoutTrace; //!< the Timeout trace source
};

/**
 * \ingroup ddnn
 * \brief A TcpSocketDdnn on `node`, made as its TcpL4Protocol makes its own
 * TCP sockets (congestion control, recovery and RTT estimator from its
 * attributes); what Socket::CreateSocket(node, TcpSocketFactory) returns
 * otherwise.
 * \param node a node with an Internet stack
 * \return the socket
 */
Ptr<Socket> CreateTcpSocket(Ptr<Node> node);

} // namespace ns3

#endif // DDNN_TCP_SOCKET_DDNN_H
