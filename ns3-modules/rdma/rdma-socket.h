// A reliable-connected RDMA queue pair (RoCEv2: the InfiniBand transport
// over UDP/IP), offered as an ns-3 stream socket so that every training job
// moves its bytes over it as over TCP (Connect, Listen/Accept, Send, Recv
// and their callbacks).
//
// Sending: what the application writes is cut into packets of at most
// PayloadSize bytes, each with a PSN, paced at the rate control's rate (not
// a window); every AckInterval-th packet, and the last one the sender has,
// asks for an ACK. A gap at the receiver is answered with a NAK and the
// sender goes back to the missing PSN (go-back-N), as it does when nothing
// is acknowledged for RetransmitTimeout. While the host's egress band for
// the packet's class holds NicQueuePackets or more (paused by PFC, or
// shared with other queue pairs), the queue pair waits for the NIC
// (RdmaSocketFactory) to send some: a NIC holds a queue pair rather than
// dropping its packets.
//
// Receiving (DCQCN's notification point): a data packet marked CE makes the
// receiver send a CNP to the sender, at most one per CnpInterval.
// ACKs, NAKs and CNPs travel in the class of the receiving socket's ToS
// (CNPs in CnpTos if set); data is ECN-capable (ECT(0)).
//
// A listening socket binds its UDP port and accepts each new peer (address,
// port) as a connection of its own, which sends through the listener's UDP
// socket; a connecting socket binds an ephemeral port, so each queue pair is
// a distinct UDP 5-tuple (ECMP hashes it, as RoCEv2's source port is meant
// for).
#ifndef DDNN_RDMA_SOCKET_H
#define DDNN_RDMA_SOCKET_H

#include "rdma-header.h"
#include "rdma-rate-control.h"

#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/queue-disc.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <map>
#include <utility>

namespace ns3
{

class RdmaSocketFactory;

/**
 * \ingroup ddnn
 * \brief An RDMA reliable-connected queue pair as a stream socket: rate-paced, go-back-N, DCQCN.
 */
class RdmaSocket : public Socket
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    RdmaSocket();
    ~RdmaSocket() override;

    /// \brief The socket's node and the stack (NIC) it belongs to.
    void SetStack(Ptr<Node> node, Ptr<RdmaSocketFactory> stack);

    // ns3::Socket
    SocketErrno GetErrno() const override;
    SocketType GetSocketType() const override;
    Ptr<Node> GetNode() const override;
    int Bind(const Address& address) override;
    int Bind() override;
    int Bind6() override;
    int Close() override;
    int ShutdownSend() override;
    int ShutdownRecv() override;
    int Connect(const Address& address) override;
    int Listen() override;
    uint32_t GetTxAvailable() const override;
    int Send(Ptr<Packet> p, uint32_t flags) override;
    int SendTo(Ptr<Packet> p, uint32_t flags, const Address& toAddress) override;
    uint32_t GetRxAvailable() const override;
    Ptr<Packet> Recv(uint32_t maxSize, uint32_t flags) override;
    Ptr<Packet> RecvFrom(uint32_t maxSize, uint32_t flags, Address& fromAddress) override;
    int GetSockName(Address& address) const override;
    int GetPeerName(Address& address) const override;
    bool SetAllowBroadcast(bool allowBroadcast) override;
    bool GetAllowBroadcast() const override;

    /// \brief The NIC has room again: send what the rate allows.
    void NicReady();

    /// \return packets sent again (go-back-N)
    uint64_t GetRetransmissions() const;
    /// \return CNPs this end received (as a sender)
    uint64_t GetCnpsReceived() const;
    /// \return CNPs this end sent (as a receiver)
    uint64_t GetCnpsSent() const;
    /// \return times the sender went back (NAK or timeout)
    uint64_t GetGoBacks() const;
    /// \return the rate control (null before the connection is up)
    Ptr<RdmaRateControl> GetRateControl() const;
    /// \return payload bytes delivered in order to this end
    uint64_t GetBytesReceived() const;
    /// \return payload bytes sent at least once from this end
    uint64_t GetBytesSent() const;
    /// \return payload bytes of this end acknowledged by the peer
    uint64_t GetBytesAcknowledged() const;
    /// \return the other end's address
    Ipv4Address GetPeerAddress() const;
    /// \return whether this end was accepted by a listener (else it connected)
    bool IsAccepted() const;
    /// \return whether this is a listening socket (no queue pair of its own)
    bool IsListening() const;

  protected:
    void DoDispose() override;

  private:
    enum State
    {
        CLOSED,
        LISTENING,
        CONNECTING,
        CONNECTED,
    };

    /// \brief A packet of this connection arrived (after the UDP demux).
    void Process(Ptr<Packet> packet, uint8_t tos);
    void ReadUdp(Ptr<Socket> udp);
    void Accept(const InetSocketAddress& from);
    void Established();
    void SendConnect();
    void SendControl(RdmaHeader::Opcode opcode, uint32_t psn, int32_t tos);
    void Transmit(Ptr<Packet> packet, uint8_t tos);
    void ScheduleSend();
    void SendNext();
    void GoBack(uint32_t psn);
    void Acknowledged(uint32_t psn);
    void RetransmitTimeout();
    /// Go back to the first unacknowledged packet (go-back-N).
    void Rewind();
    void Received(const RdmaHeader& header, uint32_t bytes, uint8_t tos);
    Ptr<QueueDisc> EgressBand() const;

    // attributes
    uint32_t m_sndBufSize;
    uint32_t m_payload;
    uint32_t m_ackInterval;
    Time m_rto;
    Time m_cnpInterval;
    int32_t m_cnpTos;
    uint32_t m_nicQueuePackets;
    Time m_connectTimeout;
    TypeId m_rateControlType;

    Ptr<Node> m_node;
    Ptr<RdmaSocketFactory> m_stack;
    State m_state;
    SocketErrno m_errno;
    Ptr<Socket> m_udp;          //!< own UDP socket, or the listener's (an accepted one)
    bool m_ownsUdp;
    InetSocketAddress m_peer;   //!< the other end
    uint16_t m_localPort;
    std::map<std::pair<uint32_t, uint16_t>, Ptr<RdmaSocket>> m_accepted; //!< a listener's
    Ptr<RdmaSocket> m_listener; //!< an accepted socket's listener
    EventId m_connectEvent;
    uint32_t m_connectTries{0};
    Ptr<NetDevice> m_egress;    //!< the host's device toward the peer
    Ptr<QueueDisc> m_egressRoot; //!< its root queue disc
    std::array<uint16_t, 16> m_egressPriomap{}; //!< the root's priority -> band

    // sender
    Ptr<RdmaRateControl> m_rate;
    uint64_t m_appEnd{0};   //!< bytes the application wrote
    uint64_t m_sndNxt{0};   //!< the next byte to send
    uint64_t m_sndUna{0};   //!< bytes acknowledged
    uint64_t m_highestSent{0}; //!< bytes sent at least once
    uint32_t m_nextPsn{0}; //!< the PSN of the next packet never sent
    std::deque<std::pair<uint32_t, uint64_t>> m_unacked; //!< (PSN, its last byte + 1)
    //! Packets to send again after a go-back, as first sent: a PSN always
    //! carries the same bytes, which the receiver may already hold
    std::deque<std::pair<uint32_t, uint64_t>> m_resend;
    uint32_t m_sinceAckRequest{0};
    EventId m_sendEvent;
    EventId m_rtoEvent;
    Time m_nextSendAt;
    bool m_waitingNic{false};
    uint64_t m_retransmissions{0};
    uint64_t m_goBacks{0};
    uint64_t m_cnpsReceived{0};

    // receiver
    uint32_t m_expectedPsn{0};
    uint32_t m_sinceAck{0};
    bool m_nakSent{false};
    Time m_lastCnp;
    bool m_cnpSent{false};
    uint64_t m_rxAvailable{0};
    uint64_t m_rxTotal{0};
    uint64_t m_cnpsSent{0};
};

} // namespace ns3

#endif
