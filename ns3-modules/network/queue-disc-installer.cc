#include "queue-disc-installer.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QueueDiscInstaller");

namespace
{
template <typename T>
std::vector<T>
SpacedList(const std::string& text)
{
    std::vector<T> out;
    std::istringstream in(text);
    T value;
    while (in >> value)
    {
        out.push_back(value);
    }
    return out;
}
} // namespace

QueueDiscInstaller::QueueDiscInstaller(const std::string& rootType,
                                       uint32_t nBands,
                                       const std::string& priomap)
    : m_rootType(rootType),
      m_nBands(nBands),
      m_priomap(priomap)
{
    NS_LOG_FUNCTION(this << rootType << nBands << priomap);
}

void
QueueDiscInstaller::SetQuanta(const std::string& quanta)
{
    NS_LOG_FUNCTION(this << quanta);
    m_quanta = quanta;
}

void
QueueDiscInstaller::SetEcnThresholds(const std::string& thresholds, bool setEct)
{
    NS_LOG_FUNCTION(this << thresholds << setEct);
    m_ecnThresholds = SpacedList<uint32_t>(thresholds);
    m_setEct = setEct;
}

void
QueueDiscInstaller::SetBuffer(BufferModel model,
                              QueueSize limit,
                              bool switchPool,
                              const std::string& alphas)
{
    NS_LOG_FUNCTION(this << limit << switchPool << alphas);
    m_model = model;
    m_limit = limit;
    m_switchPool = switchPool;
    m_alphas = SpacedList<double>(alphas);
}

QueueDiscInstaller::BufferModel
QueueDiscInstaller::ParseBufferModel(const std::string& name)
{
    NS_LOG_FUNCTION(name);
    if (name == "per_band")
    {
        return PER_BAND;
    }
    if (name == "shared")
    {
        return SHARED;
    }
    NS_ABORT_MSG_UNLESS(name == "dynamic", "unknown buffer model " << name);
    return DYNAMIC;
}

Ptr<SharedBuffer>
QueueDiscInstaller::PoolFor(Ptr<NetDevice> device) const
{
    NS_LOG_FUNCTION(this << device);
    if (m_model == PER_BAND)
    {
        return nullptr;
    }
    auto makePool = [this]() {
        return CreateObjectWithAttributes<SharedBuffer>("Size",
                                                        QueueSizeValue(m_limit),
                                                        "DynamicThresholds",
                                                        BooleanValue(m_model == DYNAMIC));
    };
    if (m_model == DYNAMIC && m_switchPool)
    {
        // One pool per node: the first egress installed creates it.
        Ptr<Node> node = device->GetNode();
        Ptr<SharedBuffer> pool = node->GetObject<SharedBuffer>();
        if (!pool)
        {
            pool = makePool();
            node->AggregateObject(pool);
        }
        NS_ABORT_MSG_UNLESS(pool->GetSize() == m_limit,
                            "the egresses of one switch name different pool sizes");
        return pool;
    }
    return makePool();
}

Ptr<QueueDisc>
QueueDiscInstaller::Install(Ptr<NetDevice> device) const
{
    NS_LOG_FUNCTION(this << device);
    TrafficControlHelper tch;
    uint16_t handle = m_rootType == "ns3::WeightedDrrQueueDisc"
                          ? tch.SetRootQueueDisc(m_rootType,
                                                 "Priomap",
                                                 StringValue(m_priomap),
                                                 "Quanta",
                                                 StringValue(m_quanta))
                          : tch.SetRootQueueDisc(m_rootType, "Priomap", StringValue(m_priomap));
    auto classes = tch.AddQueueDiscClasses(handle, m_nBands, "ns3::QueueDiscClass");
    Ptr<SharedBuffer> pool = PoolFor(device);
    for (uint32_t band = 0; band < m_nBands; ++band)
    {
        uint32_t threshold = band < m_ecnThresholds.size() ? m_ecnThresholds[band] : 0;
        double alpha = band < m_alphas.size() ? m_alphas[band] : 1.0;
        // Under a shared buffer a band's own limit is the pool's size: the
        // pool decides.
        tch.AddChildQueueDisc(handle,
                              classes[band],
                              "ns3::BandQueueDisc",
                              "MaxSize",
                              QueueSizeValue(m_limit),
                              "MarkThreshold",
                              UintegerValue(threshold),
                              "SetEct",
                              BooleanValue(threshold > 0 && m_setEct),
                              "Buffer",
                              PointerValue(pool),
                              "Alpha",
                              DoubleValue(alpha));
    }
    return tch.Install(device).Get(0);
}

} // namespace ns3
