// A buffer shared by the bands (child queue discs) of one egress port, or of
// every port of a switch. Buffer sharing decides who pays for a burst: with
// a limit per band, a class sent to a lower band also gets a private buffer;
// with one shared limit (ns-3's PfifoFastQueueDisc, Linux before 4.16), a
// starved low band fills the buffer the high band needs; switch ASICs share
// a pool with dynamic thresholds (Choudhury and Hahne, IEEE/ACM ToN 1998): a
// queue may hold up to alpha x the free buffer, so a starved queue cannot
// take the whole pool and an idle queue's share goes to the others.
//
// The buffer only keeps the pool's occupancy and decides admission; the
// bands (BandQueueDisc) ask before they queue and report what leaves.
#ifndef DDNN_SHARED_BUFFER_H
#define DDNN_SHARED_BUFFER_H

#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/queue-size.h"
#include "ns3/traced-value.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A buffer pool shared by several bands: a static limit, or dynamic
 * thresholds (a band may hold up to alpha x the free buffer).
 */
class SharedBuffer : public Object
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    SharedBuffer();
    ~SharedBuffer() override;

    /// \brief Drop reason: the pool was full.
    static constexpr const char* POOL_FULL_DROP = "Shared buffer full";
    /// \brief Drop reason: the band held its dynamic threshold or more.
    static constexpr const char* THRESHOLD_DROP = "Band at its dynamic threshold";

    /**
     * \brief May `item` join a band that holds `bandPackets` packets of
     * `bandBytes` bytes?
     * \param item the arriving packet
     * \param bandPackets the band's occupancy in packets
     * \param bandBytes the band's occupancy in bytes
     * \param alpha the band's dynamic-threshold factor (ignored by a static pool)
     * \return nullptr if admitted, else the drop reason
     */
    const char* Admit(Ptr<const QueueDiscItem> item,
                      uint32_t bandPackets,
                      uint32_t bandBytes,
                      double alpha) const;

    /// \brief A packet joined one of the pool's bands.
    void Add(Ptr<const QueueDiscItem> item);
    /// \brief A packet left one of the pool's bands.
    void Remove(Ptr<const QueueDiscItem> item);

    /// \brief The pool's occupancy, in the unit of its Size.
    uint32_t GetOccupancy() const;
    /// \brief The pool's size.
    QueueSize GetSize() const;

  private:
    /// \brief A packet's size in the pool's unit.
    uint32_t Units(Ptr<const QueueDiscItem> item) const;

    QueueSize m_size;                //!< the pool's capacity (packets or bytes)
    bool m_dynamic;                  //!< dynamic thresholds, else one static limit
    TracedValue<uint32_t> m_used;    //!< occupancy, in the unit of m_size
};

} // namespace ns3

#endif
