// The port a packet entered a switch by, for PFC's ingress accounting: a
// switch's PfcPort tags each packet of a lossless band as it arrives, and the
// band it joins at the egress charges (and, as the packet leaves, credits)
// that ingress port. The tag is removed at the egress, so a packet carries
// at most one (the next switch tags it again).
#ifndef DDNN_PFC_INGRESS_TAG_H
#define DDNN_PFC_INGRESS_TAG_H

#include "ns3/tag.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief The interface index (NetDevice index on its node) a packet arrived by.
 */
class PfcIngressTag : public Tag
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    /// \brief A tag for device index 0.
    PfcIngressTag();
    /// \brief A tag for device index `device`.
    explicit PfcIngressTag(uint32_t device);

    /// \return the ingress device's index on its node
    uint32_t GetDevice() const;

    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

  private:
    uint32_t m_device;
};

} // namespace ns3

#endif
