#include "queue-disc-installer.h"

#include "ns3/log.h"
#include "ns3/queue-size.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QueueDiscInstaller");

namespace
{
QueueSizeValue
Packets(uint32_t n)
{
    return QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, n));
}
} // namespace

Ptr<QueueDisc>
QueueDiscInstaller::InstallPrio(Ptr<NetDevice> device,
                                uint32_t nBands,
                                const std::string& priomap,
                                uint32_t bandLimitPackets)
{
    TrafficControlHelper tch;
    uint16_t handle =
        tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap", StringValue(priomap));
    auto classes = tch.AddQueueDiscClasses(handle, nBands, "ns3::QueueDiscClass");
    tch.AddChildQueueDiscs(handle, classes, "ns3::FifoQueueDisc", "MaxSize", Packets(bandLimitPackets));
    return tch.Install(device).Get(0);
}

} // namespace ns3
