// Root queue discs for one egress NetDevice: prio with N FIFO children, each
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
    /// \brief prio with `nBands` FIFO children of `bandLimitPackets` each; `priomap`
    /// is 16 band numbers separated by spaces (priority 0..15 -> band).
    static Ptr<QueueDisc> InstallPrio(Ptr<NetDevice> device,
                                      uint32_t nBands,
                                      const std::string& priomap,
                                      uint32_t bandLimitPackets);
};

} // namespace ns3

#endif
