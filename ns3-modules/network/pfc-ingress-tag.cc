#include "pfc-ingress-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PfcIngressTag);

TypeId
PfcIngressTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PfcIngressTag")
                            .SetParent<Tag>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<PfcIngressTag>();
    return tid;
}

TypeId
PfcIngressTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

PfcIngressTag::PfcIngressTag()
    : m_device(0)
{
}

PfcIngressTag::PfcIngressTag(uint32_t device)
    : m_device(device)
{
}

uint32_t
PfcIngressTag::GetDevice() const
{
    return m_device;
}

uint32_t
PfcIngressTag::GetSerializedSize() const
{
    return 4;
}

void
PfcIngressTag::Serialize(TagBuffer i) const
{
    i.WriteU32(m_device);
}

void
PfcIngressTag::Deserialize(TagBuffer i)
{
    m_device = i.ReadU32();
}

void
PfcIngressTag::Print(std::ostream& os) const
{
    os << "ingress=" << m_device;
}

} // namespace ns3
