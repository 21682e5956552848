// Template instances the Python harness uses, compiled once here (g++, at
// module-build time) instead of by Cling in every process. Each `extern
// template` below tells Cling the instance already exists in our library, so
// a call from Python costs a small wrapper (~10 ms) instead of code
// generation for CreateObject<T> / Ptr<T> (measured: 50-120 ms each).
// Add a type here when Python starts creating or holding a new one. (Not a
// training job's own type: Python holds every job as Ptr<TrainingJob>, from
// ScenarioRecipe::GetJob, and cppyy casts the object to its class.)
#ifndef DDNN_BINDING_INSTANTIATIONS_H
#define DDNN_BINDING_INSTANTIATIONS_H

#include "flow-log.h"
#include "flow-send-application.h"
#include "flow-sink-application.h"
#include "link-utilization-tracker.h"
#include "queue-sampler.h"
#include "queue-tracker.h"
#include "scenario-recipe.h"
#include "topology-builder.h"

#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/queue-disc.h"

// Objects Python creates: CreateObject<T> and Ptr<T>.
#define DDNN_CREATED_BY_PYTHON(T)                                                                  \
    DDNN_INSTANCE template Ptr<T> CreateObject<T>();                                               \
    DDNN_INSTANCE template class Ptr<T>;
// Objects Python only holds: Ptr<T>.
#define DDNN_HELD_BY_PYTHON(T) DDNN_INSTANCE template class Ptr<T>;

#define DDNN_BINDING_TYPES                                                                         \
    DDNN_CREATED_BY_PYTHON(ScenarioRecipe)                                                         \
    DDNN_HELD_BY_PYTHON(TopologyBuilder)                                                           \
    DDNN_HELD_BY_PYTHON(QueueTracker)                                                              \
    DDNN_HELD_BY_PYTHON(QueueSampler)                                                              \
    DDNN_HELD_BY_PYTHON(LinkUtilizationTracker)                                                    \
    DDNN_HELD_BY_PYTHON(FlowLog)                                                                   \
    DDNN_HELD_BY_PYTHON(TrainingJob)                                                               \
    DDNN_HELD_BY_PYTHON(Node)                                                                      \
    DDNN_HELD_BY_PYTHON(NetDevice)                                                                 \
    DDNN_HELD_BY_PYTHON(QueueDisc)                                                                 \
    DDNN_HELD_BY_PYTHON(FlowSinkApplication)                                                       \
    DDNN_HELD_BY_PYTHON(FlowSendApplication)

#ifndef DDNN_BINDING_INSTANTIATIONS_CC
namespace ns3
{
#define DDNN_INSTANCE extern
DDNN_BINDING_TYPES
#undef DDNN_INSTANCE
} // namespace ns3
#endif

#endif
