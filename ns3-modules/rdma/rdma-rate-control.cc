#include "rdma-rate-control.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaRateControl);

TypeId
RdmaRateControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaRateControl").SetParent<Object>().SetGroupName("Ddnn");
    return tid;
}

RdmaRateControl::~RdmaRateControl() = default;

} // namespace ns3
