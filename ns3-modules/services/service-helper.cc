#include "service-helper.h"

#include "ns3/address.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/pointer.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ServiceHelper");

ServiceHelper::ServiceHelper(Ptr<ServiceLog> log)
    : m_log(log)
{
    NS_LOG_FUNCTION(this << log);
}

Ptr<Application>
ServiceHelper::Install(Ptr<Node> node,
                       const ObjectFactory& factory,
                       std::optional<Ipv4Address> peer,
                       uint16_t port,
                       int64_t stream) const
{
    NS_LOG_FUNCTION(this << node << factory << port << stream);
    auto app = factory.Create<Application>();
    const TypeId tid = app->GetInstanceTypeId();
    TypeId::AttributeInformation info;
    if (tid.LookupAttributeByName("ServiceLog", &info))
    {
        app->SetAttribute("ServiceLog", PointerValue(m_log));
    }
    if (peer)
    {
        if (tid.LookupAttributeByName("RemoteAddress", &info))
        {
            app->SetAttribute("RemoteAddress", Ipv4AddressValue(*peer));
        }
        else
        {
            NS_ABORT_MSG_UNLESS(tid.LookupAttributeByName("Remote", &info),
                                tid.GetName() << " has no RemoteAddress or Remote attribute "
                                                 "for its peer");
            app->SetAttribute("Remote", AddressValue(InetSocketAddress(*peer, port)));
        }
    }
    if (stream >= 0)
    {
        app->AssignStreams(stream);
    }
    node->AddApplication(app);
    return app;
}

} // namespace ns3
