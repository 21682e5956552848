// The receiving end of a constant-bitrate stream: records every packet's
// sequence number, send time and arrival (one row each), from which the
// harness computes one-way delay, jitter (RFC 3550) and late and lost packets.
#ifndef DDNN_STREAM_RECEIVER_APPLICATION_H
#define DDNN_STREAM_RECEIVER_APPLICATION_H

#include "ns3/application.h"
#include "ns3/nstime.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Receives a stream's UDP packets and records each one's send and arrival time.
 */
class StreamReceiverApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    StreamReceiverApplication();

    /// \brief Packets received so far.
    uint64_t GetReceived() const;
    /// \brief seq,sent_ns,received_ns: one row per packet received, in arrival order.
    std::string ToCsv() const;

    /**
     * \brief Signature of the PacketReceived trace source.
     * \param seq the packet's sequence number
     * \param delay its one-way delay (arrival - send time)
     */
    typedef void (*PacketReceivedCallback)(uint64_t seq, Time delay);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Receive(Ptr<Socket> socket);

    /// One packet received.
    struct Arrival
    {
        uint32_t seq;
        int64_t sentNs;
        int64_t receivedNs;
    };

    uint16_t m_port;
    Ptr<Socket> m_socket;
    std::vector<Arrival> m_arrivals;
    TracedCallback<uint64_t, Time> m_packetReceivedTrace;
};

} // namespace ns3

#endif
