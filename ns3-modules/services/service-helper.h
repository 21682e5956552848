// Installs a service's applications on nodes, each configured the ns-3 way
// (a TypeId and its attributes: an ObjectFactory, read from a recipe line's
// component), and wires it to the run: the ServiceLog every request-and-
// response application records into, its peer's address, its random stream.
// It names no application: a kind of service is its applications' TypeIds.
#ifndef DDNN_SERVICE_HELPER_H
#define DDNN_SERVICE_HELPER_H

#include "service-log.h"

#include "ns3/application.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"

#include <optional>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs service applications on nodes, sharing one ServiceLog.
 */
class ServiceHelper
{
  public:
    /// \brief Applications that record into `log` (those with a ServiceLog attribute).
    explicit ServiceHelper(Ptr<ServiceLog> log);

    /**
     * \brief An application made by `factory` on `node`. Where its TypeId has
     * them, these attributes are set for it: ServiceLog (the helper's log);
     * with a peer, RemoteAddress (the peer's address) or else Remote (the
     * peer's address and `port`, as ns-3's own source applications take it).
     * \param node where it runs
     * \param factory its TypeId and the attributes the recipe gave it
     * \param peer the address of the host it sends to, if any
     * \param port the peer's port (for a Remote address)
     * \param stream its random stream (AssignStreams), or -1 for none
     * \return the application, added to `node`
     */
    Ptr<Application> Install(Ptr<Node> node,
                             const ObjectFactory& factory,
                             std::optional<Ipv4Address> peer,
                             uint16_t port,
                             int64_t stream) const;

  private:
    Ptr<ServiceLog> m_log;
};

} // namespace ns3

#endif
