// Root queue discs for one egress NetDevice. The harness picks one strategy
// per link (pfifo_fast or prio); both classify by the packet's socket
// priority (derived from the IP ToS) through a 16-entry priomap.
#ifndef DDNN_QUEUE_DISC_INSTALLER_H
#define DDNN_QUEUE_DISC_INSTALLER_H

#include "ns3/net-device.h"
#include "ns3/queue-disc.h"

#include <string>

namespace ns3
{

class QueueDiscInstaller
{
  public:
    /// Linux pfifo_fast: 3 strict-priority bands of `bandLimitPackets` each.
    static Ptr<QueueDisc> InstallPfifoFast(Ptr<NetDevice> device, uint32_t bandLimitPackets);
    /// prio with `nBands` FIFO children of `bandLimitPackets` each; `priomap`
    /// is 16 band numbers separated by spaces (priority 0..15 -> band).
    static Ptr<QueueDisc> InstallPrio(Ptr<NetDevice> device,
                                      uint32_t nBands,
                                      const std::string& priomap,
                                      uint32_t bandLimitPackets);
};

} // namespace ns3

#endif
