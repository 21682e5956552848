// Root queue discs for one egress NetDevice: prio (or weighted DRR) with N
// FIFO (or ECN step-marking) children, each
// with its own packet limit, classifying by the packet's socket priority
// (derived from the IP ToS) through a 16-entry priomap. The harness's
// pfifo_fast is this with 3 bands and Linux's pfifo_fast priomap: ns-3's own
// PfifoFastQueueDisc has one limit shared by its bands, and the model (SPEC
// §3) has a limit per band.
#ifndef DDNN_QUEUE_DISC_INSTALLER_H
#define DDNN_QUEUE_DISC_INSTALLER_H

#include "ns3/net-device.h"
#include "ns3/queue-disc.h"

#include <string>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs the scenario's queue disc (and its bands) on both sides of a link.
 */
class QueueDiscInstaller
{
  public:
    /// \brief A root queue disc of `rootType` ("ns3::PrioQueueDisc" or
    /// "ns3::WeightedDrrQueueDisc") with `nBands` bands of `bandLimitPackets`
    /// each, classifying through `priomap` (16 band numbers separated by
    /// spaces: priority 0..15 -> band; pfifo_fast is prio with Linux's
    /// priomap). `quanta`: the
    /// DRR quantum of each band in bytes, space-separated ("" for prio).
    /// `ecnThresholds`: each band's ECN marking threshold K in packets,
    /// space-separated; 0 (or "" for all bands) = a plain FIFO band, else an
    /// EcnThresholdQueueDisc band. `setEct`: the marking bands set ECT(0) on
    /// TCP data (a host's egress, with TCP ECN on).
    static Ptr<QueueDisc> InstallBands(Ptr<NetDevice> device,
                                       const std::string& rootType,
                                       uint32_t nBands,
                                       const std::string& priomap,
                                       uint32_t bandLimitPackets,
                                       const std::string& quanta,
                                       const std::string& ecnThresholds,
                                       bool setEct);
};

} // namespace ns3

#endif
