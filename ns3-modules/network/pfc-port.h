// Priority Flow Control (IEEE 802.1Qbb) at one port: a NetDevice and the
// bands of its egress queue disc.
//
// Receiving side (every port, hosts' NICs too): a pause frame for a band
// with quanta Q stops that band's egress for Q x 512 bit times at the
// port's rate (a new frame restarts the count, Q = 0 resumes at once); the
// root queue disc serves the other bands meanwhile, and is restarted when
// the band resumes.
//
// Sending side (Generate: a switch's ports): the port counts, per lossless
// band, the bytes that came in by it and are still queued in the switch
// (ingress accounting; a PfcIngressTag tells the egress which port to
// charge). Above XOFF (a static threshold, or XoffAlpha x the switch pool's
// free space, as switch MMUs compute it) the port sends a pause frame with
// PauseQuanta upstream, and repeats it every half pause while still above;
// what arrives meanwhile goes to the band's headroom; once the bytes are at
// or below XON (XOFF - XonOffset) and the headroom is empty, it sends
// quanta 0. An arrival the headroom cannot hold is dropped (the band's
// HEADROOM_DROP): a headroom too small for what is in flight, a
// configuration error a lossless run must not have.
//
// A pause frame is 64 bytes on the wire; it reaches the upstream port one
// frame time plus the link's delay after it is decided. (It is not queued
// behind a data frame in transmission, nor does it take the reverse link's
// capacity: at most one frame time earlier than on a real link, and
// 64 bytes per pause; the headroom arithmetic in docs/ counts one more
// frame for it.)
#ifndef DDNN_PFC_PORT_H
#define DDNN_PFC_PORT_H

#include "band-queue-disc.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <array>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief PFC at one port: honours pause frames for its egress bands and,
 * on a switch, accounts its lossless ingress and pauses the upstream port.
 */
class PfcPort : public Object
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    PfcPort();
    ~PfcPort() override;

    /// \brief Bit times of one pause quantum (802.1Qbb).
    static constexpr uint32_t QUANTUM_BITS = 512;
    /// \brief Bytes of a pause frame on the wire.
    static constexpr uint32_t FRAME_BYTES = 64;

    /// \brief Signature of PauseSent / PauseReceived: (band, quanta).
    typedef void (*PauseCallback)(uint32_t band, uint16_t quanta);

    /// \brief Be the PFC port of `device` (aggregated to it): its egress
    /// root queue disc's bands are paused here; with Generate, its arrivals
    /// are tagged for ingress accounting. Before the device's addresses
    /// are assigned (this port sees packets before IP does).
    void Install(Ptr<NetDevice> device);

    /// \brief The PFC port of this node's device `index` (an ingress port).
    Ptr<PfcPort> GetNodePort(uint32_t index) const;

    /// \brief Ingress: may `bytes` of band `band` that came in here be queued?
    /// True and counted (in the shared part, or the headroom once paused),
    /// or false: the headroom is full (a drop).
    bool Charge(uint32_t band, uint32_t bytes);
    /// \brief Ingress: `bytes` of band `band` that came in here left the switch.
    void Credit(uint32_t band, uint32_t bytes);

    /// \brief Egress: a pause frame for `band` with `quanta` arrived.
    void ReceivePause(uint32_t band, uint16_t quanta);

    /// \return pause frames this port sent for `band` (XON frames included)
    uint64_t GetPauseFramesSent(uint32_t band) const;
    /// \return pause frames this port received for `band`
    uint64_t GetPauseFramesReceived(uint32_t band) const;
    /// \return how long `band`'s egress has been paused inside the window, until now
    Time GetPausedTime(uint32_t band) const;
    /// \return how long this port has held `band`'s upstream in pause inside the window
    Time GetPausingTime(uint32_t band) const;
    /// \return the most headroom bytes `band` held here
    uint32_t GetMaxHeadroom(uint32_t band) const;
    /// \return the most bytes of `band` that had come in here and were queued
    uint32_t GetMaxIngressBytes(uint32_t band) const;
    /// \return the number of bands of this port's egress
    uint32_t GetNBands() const;

  protected:
    void DoDispose() override;

  private:
    /** The part of [from, to] inside the measurement window. */
    Time InWindow(Time from, Time to) const;

    /// Per band of the port.
    struct Band
    {
        Ptr<BandQueueDisc> queue; //!< the egress band
        // receiving side
        bool paused = false;
        Time pausedSince;
        Time pausedTotal;
        EventId expiry;
        uint64_t framesReceived = 0;
        // sending side
        uint32_t shared = 0;   //!< bytes in the shared part
        uint32_t headroom = 0; //!< bytes in the headroom
        bool pausing = false;
        Time pausingSince;
        Time pausingTotal;
        EventId refresh;
        uint64_t framesSent = 0;
        uint32_t maxHeadroom = 0;
        uint32_t maxBytes = 0;
    };

    void Arrived(Ptr<NetDevice> device,
                 Ptr<const Packet> packet,
                 uint16_t protocol,
                 const Address& from,
                 const Address& to,
                 NetDevice::PacketType type);
    uint32_t Xoff() const;
    void SendPause(uint32_t band, uint16_t quanta);
    void Refresh(uint32_t band);
    void Resume(uint32_t band);
    DataRate Rate() const;
    Time PauseDuration(uint16_t quanta) const;

    Ptr<NetDevice> m_device;
    Ptr<QueueDisc> m_root;
    Ptr<PfcPort> m_peer; //!< the port at the link's other end (set on first pause)
    std::array<uint16_t, 16> m_priomap{};
    std::vector<Band> m_bands;
    bool m_generate;
    uint32_t m_xoff;
    double m_xoffAlpha;
    uint32_t m_xonOffset;
    uint32_t m_headroom;
    uint16_t m_quanta;
    Time m_windowStart; //!< paused/pausing time counted from here...
    Time m_windowEnd;   //!< ...to here
    TracedCallback<uint32_t, uint16_t> m_pauseSent;
    TracedCallback<uint32_t, uint16_t> m_pauseReceived;
};

} // namespace ns3

#endif
