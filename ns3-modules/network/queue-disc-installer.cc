#include "queue-disc-installer.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QueueDiscInstaller");

NS_OBJECT_ENSURE_REGISTERED(QueueDiscInstaller);

TypeId
QueueDiscInstaller::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::QueueDiscInstaller")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<QueueDiscInstaller>()
            .AddAttribute("Bands",
                          "Number of bands (classes of the root, one BandQueueDisc each)",
                          UintegerValue(3),
                          MakeUintegerAccessor(&QueueDiscInstaller::m_nBands),
                          MakeUintegerChecker<uint32_t>(1, 16))
            .AddAttribute("BufferModel",
                          "How the bands share buffer space: per_band (each its own "
                          "BufferSize), shared (one BufferSize for the port) or dynamic (a "
                          "pool of BufferSize with dynamic thresholds)",
                          EnumValue(QueueDiscInstaller::SHARED),
                          MakeEnumAccessor<BufferModel>(&QueueDiscInstaller::m_model),
                          MakeEnumChecker(QueueDiscInstaller::PER_BAND,
                                          "per_band",
                                          QueueDiscInstaller::SHARED,
                                          "shared",
                                          QueueDiscInstaller::DYNAMIC,
                                          "dynamic"))
            .AddAttribute("BufferSize",
                          "A band's limit (per_band), the port's (shared) or the pool's "
                          "(dynamic), in packets or bytes",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&QueueDiscInstaller::m_size),
                          MakeQueueSizeChecker())
            .AddAttribute("BufferPool",
                          "dynamic: one pool per egress (port) or one for every egress of "
                          "the node (switch)",
                          EnumValue(QueueDiscInstaller::PORT),
                          MakeEnumAccessor<BufferPool>(&QueueDiscInstaller::m_pool),
                          MakeEnumChecker(QueueDiscInstaller::PORT,
                                          "port",
                                          QueueDiscInstaller::SWITCH,
                                          "switch"));
    return tid;
}

QueueDiscInstaller::QueueDiscInstaller()
    : m_nBands(3),
      m_model(SHARED),
      m_size("1000p"),
      m_pool(PORT)
{
    NS_LOG_FUNCTION(this);
}

uint32_t
QueueDiscInstaller::GetNBands() const
{
    NS_LOG_FUNCTION(this);
    return m_nBands;
}

void
QueueDiscInstaller::SetRoot(const RecipeComponent& root)
{
    NS_LOG_FUNCTION(this);
    m_root = root;
}

void
QueueDiscInstaller::SetBands(const RecipeComponent& bands)
{
    NS_LOG_FUNCTION(this);
    m_bands = bands;
}

void
QueueDiscInstaller::CheckConfig() const
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_root || !m_bands, "QueueDiscInstaller: SetRoot and SetBands first");
    NS_ABORT_MSG_IF(m_bands->GetCount() != m_nBands,
                    "QueueDiscInstaller: the bands' component configures "
                        << m_bands->GetCount() << " bands, not Bands = " << m_nBands);
    NS_ABORT_MSG_IF(m_pool == SWITCH && m_model != DYNAMIC,
                    "QueueDiscInstaller: BufferPool = switch needs BufferModel = dynamic");
    NS_ABORT_MSG_IF(m_size.GetValue() == 0, "QueueDiscInstaller: BufferSize must hold something");
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
                                                        QueueSizeValue(m_size),
                                                        "DynamicThresholds",
                                                        BooleanValue(m_model == DYNAMIC));
    };
    if (m_model == DYNAMIC && m_pool == SWITCH)
    {
        // One pool per node: the first egress installed creates it.
        Ptr<Node> node = device->GetNode();
        Ptr<SharedBuffer> pool = node->GetObject<SharedBuffer>();
        if (!pool)
        {
            pool = makePool();
            node->AggregateObject(pool);
        }
        NS_ABORT_MSG_UNLESS(pool->GetSize() == m_size,
                            "the egresses of one switch name different pool sizes");
        return pool;
    }
    return makePool();
}

Ptr<QueueDisc>
QueueDiscInstaller::Install(Ptr<NetDevice> device) const
{
    NS_LOG_FUNCTION(this << device);
    CheckConfig();
    TrafficControlHelper tch;
    uint16_t handle = tch.SetRootQueueDisc(m_root->GetTypeId().GetName());
    auto classes = tch.AddQueueDiscClasses(handle, m_nBands, "ns3::QueueDiscClass");
    Ptr<SharedBuffer> pool = PoolFor(device);
    for (uint32_t band = 0; band < m_nBands; ++band)
    {
        // Under a shared buffer a band's own limit is the pool's size: the
        // pool decides.
        tch.AddChildQueueDisc(handle,
                              classes[band],
                              m_bands->GetTypeId().GetName(),
                              "MaxSize",
                              QueueSizeValue(m_size),
                              "Buffer",
                              PointerValue(pool));
    }
    Ptr<QueueDisc> root = tch.Install(device).Get(0);
    // the components' own attributes, before the queue discs are initialised
    m_root->Apply(root);
    for (uint32_t band = 0; band < m_nBands; ++band)
    {
        m_bands->Apply(root->GetQueueDiscClass(band)->GetQueueDisc(), band);
    }
    return root;
}

} // namespace ns3
