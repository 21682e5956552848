// The definitions behind binding-instantiations.h's extern declarations.
#define DDNN_BINDING_INSTANTIATIONS_CC
#include "binding-instantiations.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DdnnBindingInstantiations");
#define DDNN_INSTANCE
DDNN_BINDING_TYPES
#undef DDNN_INSTANCE
} // namespace ns3
