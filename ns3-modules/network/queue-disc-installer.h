// Root queue discs for one egress NetDevice: prio (or weighted DRR) with N
// bands (BandQueueDisc), classifying by the packet's socket priority
// (derived from the IP ToS) through a 16-entry priomap. The harness's
// pfifo_fast is prio with 3 bands and Linux's pfifo_fast priomap.
//
// How the bands share buffer space is the buffer model:
// - per_band: each band has its own limit (Linux since 4.16: one ring per band);
// - shared:   one limit for all bands of the port (ns-3's own
//             PfifoFastQueueDisc, Linux before 4.16): a full buffer drops a
//             high-band arrival even when the high band is empty;
// - dynamic:  a pool (the port's, or the whole switch's) with dynamic
//             thresholds: a band may hold up to alpha x the free pool.
#ifndef DDNN_QUEUE_DISC_INSTALLER_H
#define DDNN_QUEUE_DISC_INSTALLER_H

#include "shared-buffer.h"

#include "ns3/net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/queue-size.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs the scenario's root queue disc and its bands on an egress,
 * with the bands' buffer model (per band, shared, dynamic thresholds).
 */
class QueueDiscInstaller
{
  public:
    /// \brief How the bands of an egress share buffer space.
    enum BufferModel
    {
        PER_BAND, //!< each band its own limit
        SHARED,   //!< one limit shared by the port's bands
        DYNAMIC,  //!< a pool with dynamic thresholds (alpha x free buffer)
    };

    /// \brief A root of `rootType` ("ns3::PrioQueueDisc" or
    /// "ns3::WeightedDrrQueueDisc") with `nBands` bands classifying through
    /// `priomap` (16 band numbers separated by spaces: priority 0..15 ->
    /// band). Bands are FIFOs of 1000 packets each until set otherwise.
    QueueDiscInstaller(const std::string& rootType, uint32_t nBands, const std::string& priomap);

    /// \brief DRR: each band's quantum in bytes, space-separated.
    void SetQuanta(const std::string& quanta);
    /// \brief Each band's ECN marking threshold K in packets, space-separated
    /// (0 or missing = the band does not mark); `setEct`: the marking bands
    /// set ECT(0) on TCP data (a host's egress, with TCP ECN on).
    void SetEcnThresholds(const std::string& thresholds, bool setEct);
    /// \brief The buffer model. `limit`: per band (PER_BAND), per port
    /// (SHARED) or the pool's size (DYNAMIC), in packets or bytes.
    /// `switchPool` (DYNAMIC): one pool for every egress of the node,
    /// aggregated to it, instead of one per port. `alphas`: each band's
    /// dynamic-threshold factor, space-separated (missing = 1).
    void SetBuffer(BufferModel model,
                   QueueSize limit,
                   bool switchPool = false,
                   const std::string& alphas = "");

    /// \brief Install on `device` (before its addresses are assigned).
    /// \return the root queue disc
    Ptr<QueueDisc> Install(Ptr<NetDevice> device) const;

    /// \brief "per_band", "shared" or "dynamic" as a BufferModel.
    static BufferModel ParseBufferModel(const std::string& name);

  private:
    /// \brief The pool the bands of `device` share (null for PER_BAND).
    Ptr<SharedBuffer> PoolFor(Ptr<NetDevice> device) const;

    std::string m_rootType;
    uint32_t m_nBands;
    std::string m_priomap;
    std::string m_quanta;
    std::vector<uint32_t> m_ecnThresholds;
    bool m_setEct = false;
    BufferModel m_model = PER_BAND;
    QueueSize m_limit{"1000p"};
    bool m_switchPool = false;
    std::vector<double> m_alphas;
};

} // namespace ns3

#endif
