// The queue discs of one egress NetDevice: a root classifying by the
// packet's socket priority (derived from the IP ToS) through a 16-entry
// priomap, prio or weighted DRR, over N bands (BandQueueDisc), configured
// the ns-3 way: this object's attributes say how many bands and how they
// share buffer space, and the root's and the bands' own attributes come as
// recipe components (RecipeComponent). The harness's pfifo_fast is prio
// with 3 bands and Linux's pfifo_fast priomap.
//
// How the bands share buffer space is the buffer model (BufferModel):
// - per_band: each band has its own limit (Linux since 4.16: one ring per band);
// - shared:   one limit for all bands of the port (ns-3's own
//             PfifoFastQueueDisc, Linux before 4.16): a full buffer drops a
//             high-band arrival even when the high band is empty;
// - dynamic:  a pool (the port's, or the whole switch's: BufferPool) with
//             dynamic thresholds: a band may hold up to alpha x the free pool.
#ifndef DDNN_QUEUE_DISC_INSTALLER_H
#define DDNN_QUEUE_DISC_INSTALLER_H

#include "recipe-component.h"
#include "shared-buffer.h"

#include "ns3/net-device.h"
#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/queue-size.h"

#include <optional>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs an egress's root queue disc and its bands, with the
 * bands' buffer model (per band, shared, dynamic thresholds).
 */
class QueueDiscInstaller : public Object
{
  public:
    /// \brief How the bands of an egress share buffer space.
    enum BufferModel
    {
        PER_BAND, //!< each band its own limit
        SHARED,   //!< one limit shared by the port's bands
        DYNAMIC,  //!< a pool with dynamic thresholds (alpha x free buffer)
    };

    /// \brief Whose pool a dynamic buffer is.
    enum BufferPool
    {
        PORT,   //!< one pool per egress
        SWITCH, //!< one pool for every egress of the node, aggregated to it
    };

    /// \brief Attributes Bands, BufferModel, BufferSize, BufferPool.
    /// \return the object TypeId
    static TypeId GetTypeId();
    QueueDiscInstaller();

    /// \return the number of bands (attribute Bands)
    uint32_t GetNBands() const;

    /// \brief The root queue disc: a classful QueueDisc TypeId (e.g.
    /// ns3::PrioQueueDisc with its Priomap) and its attributes.
    void SetRoot(const RecipeComponent& root);
    /// \brief The bands: a QueueDisc TypeId (ns3::BandQueueDisc) configuring
    /// GetNBands() objects, band 0 first. Their MaxSize and Buffer are this
    /// object's: the buffer model decides them.
    void SetBands(const RecipeComponent& bands);

    /// \brief Install on `device` (before its addresses are assigned); aborts
    /// naming the problem if the configuration cannot work (CheckConfig).
    /// \return the root queue disc
    Ptr<QueueDisc> Install(Ptr<NetDevice> device) const;

  private:
    /// \brief Abort unless the attributes and components fit together.
    void CheckConfig() const;
    /// \brief The pool the bands of `device` share (null for PER_BAND).
    Ptr<SharedBuffer> PoolFor(Ptr<NetDevice> device) const;

    uint32_t m_nBands;
    BufferModel m_model;
    QueueSize m_size; //!< per band (PER_BAND), per port (SHARED), the pool's (DYNAMIC)
    BufferPool m_pool;
    std::optional<RecipeComponent> m_root;
    std::optional<RecipeComponent> m_bands;
};

} // namespace ns3

#endif
