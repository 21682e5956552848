// A UDP packet source: packets of PacketSize bytes at a mean of DataRate,
// either every PacketSize x 8 / DataRate seconds (a constant-bitrate stream:
// voice, video) or with exponential gaps of that mean (Poisson arrivals:
// attribute Poisson). Each packet carries its sequence number and send time
// (ns-3's SeqTsHeader), so that the receiver measures each packet's one-way
// delay and the stream's jitter.
#ifndef DDNN_STREAM_SENDER_APPLICATION_H
#define DDNN_STREAM_SENDER_APPLICATION_H

#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/random-variable-stream.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Sends UDP packets at a constant bitrate or as Poisson arrivals, each stamped with
 * its sequence number and send time.
 */
class StreamSenderApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    StreamSenderApplication();

    /// \brief Packets sent so far.
    uint64_t GetSent() const;

    /**
     * \brief Use a fixed random stream for the Poisson gaps.
     * \param stream first stream index to use
     * \return the number of stream indices assigned (1)
     */
    int64_t AssignStreams(int64_t stream);

    /**
     * \brief Signature of the PacketSent trace source.
     * \param seq the packet's sequence number (0, 1, 2, ...)
     */
    typedef void (*PacketSentCallback)(uint64_t seq);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    /// Send one packet and schedule the next.
    void SendPacket();

    Ipv4Address m_remote;
    uint16_t m_remotePort;
    DataRate m_rate;
    uint32_t m_packetSize;
    uint8_t m_tos;
    bool m_poisson;
    Ptr<ExponentialRandomVariable> m_gap; //!< Poisson gaps (seconds)
    Ptr<Socket> m_socket;
    uint64_t m_sent;
    EventId m_nextEvent;
    TracedCallback<uint64_t> m_packetSentTrace;
};

} // namespace ns3

#endif
