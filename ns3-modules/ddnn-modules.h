// Umbrella header: what the harness loads from ns3-modules/ besides the
// training jobs (and what the PCH precompiles). The harness includes every
// header of jobs/ after this one (harness/engine/ns3.py, loaded_headers), so
// an architecture's job, workers and helper need no line here. Sources live
// in role folders (apps/, core/, jobs/, schedulers/, network/, rdma/, services/, tcp/,
// trackers/, bindings/, and scenario/: the composition root, ScenarioRecipe, the only
// folder that knows the others), each on the include path, so they include
// each other by file name as within an ns-3 module.

/**
 * \defgroup ddnn Distributed DNN training next to background traffic
 * The harness's own ns-3 code: background-flow apps, training jobs,
 * communication schedulers, the network build and the trackers.
 */

#include "ecmp-routing-helper.h"
#include "ecmp-routing.h"
#include "flow-app-helper.h"
#include "flow-log.h"
#include "flow-send-application.h"
#include "flow-sink-application.h"
#include "link-utilization-tracker.h"
#include "queue-disc-installer.h"
#include "queue-sampler.h"
#include "queue-tracker.h"
#include "weighted-drr-queue-disc.h"
#include "band-queue-disc.h"
#include "pfc-ingress-tag.h"
#include "pfc-port.h"
#include "dcqcn.h"
#include "rdma-header.h"
#include "rdma-rate-control.h"
#include "rdma-socket.h"
#include "rdma-socket-factory.h"
#include "transport-socket.h"
#include "shared-buffer.h"
#include "tcp-dctcp-linux.h"
#include "tcp-socket-ddnn.h"
#include "request-client-application.h"
#include "request-server-application.h"
#include "scenario-recipe.h"
#include "service-helper.h"
#include "service-log.h"
#include "stream-receiver-application.h"
#include "stream-sender-application.h"
#include "topology-builder.h"
#include "binding-instantiations.h"
