#include "queue-disc-installer.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/queue-size.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <sstream>
#include <vector>

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
QueueDiscInstaller::InstallBands(Ptr<NetDevice> device,
                                 const std::string& rootType,
                                 uint32_t nBands,
                                 const std::string& priomap,
                                 uint32_t bandLimitPackets,
                                 const std::string& quanta,
                                 const std::string& ecnThresholds,
                                 bool setEct)
{
    TrafficControlHelper tch;
    uint16_t handle = rootType == "ns3::WeightedDrrQueueDisc"
                          ? tch.SetRootQueueDisc(rootType,
                                                 "Priomap",
                                                 StringValue(priomap),
                                                 "Quanta",
                                                 StringValue(quanta))
                          : tch.SetRootQueueDisc(rootType, "Priomap", StringValue(priomap));
    auto classes = tch.AddQueueDiscClasses(handle, nBands, "ns3::QueueDiscClass");
    std::vector<uint32_t> thresholds;
    std::istringstream in(ecnThresholds);
    uint32_t k;
    while (in >> k)
    {
        thresholds.push_back(k);
    }
    for (uint32_t band = 0; band < nBands; ++band)
    {
        uint32_t threshold = band < thresholds.size() ? thresholds[band] : 0;
        if (threshold > 0)
        {
            tch.AddChildQueueDisc(handle,
                                  classes[band],
                                  "ns3::EcnThresholdQueueDisc",
                                  "MaxSize",
                                  Packets(bandLimitPackets),
                                  "MarkThreshold",
                                  UintegerValue(threshold),
                                  "SetEct",
                                  BooleanValue(setEct));
        }
        else
        {
            tch.AddChildQueueDisc(handle,
                                  classes[band],
                                  "ns3::FifoQueueDisc",
                                  "MaxSize",
                                  Packets(bandLimitPackets));
        }
    }
    return tch.Install(device).Get(0);
}

} // namespace ns3
