// The congestion control of an RDMA queue pair's sender (the reaction
// point): the rate the queue pair paces its packets at, and what changes
// it. DCQCN (Dcqcn) is the one the harness ships; another (a delay-based
// one, HPCC) is a subclass with its own attributes, named by the socket's
// RateControl attribute.
#ifndef DDNN_RDMA_RATE_CONTROL_H
#define DDNN_RDMA_RATE_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A queue pair's rate: starts at the line rate, moved by congestion signals.
 */
class RdmaRateControl : public Object
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    ~RdmaRateControl() override;

    /// \brief The queue pair starts sending on a link of `lineRate`.
    virtual void Start(DataRate lineRate) = 0;
    /// \return the rate to pace the next packet at
    virtual DataRate GetRate() = 0;
    /// \brief A congestion notification packet (CNP) arrived.
    virtual void OnCongestionNotification() = 0;
    /// \brief `bytes` of payload were sent (first transmission or again).
    virtual void OnSent(uint32_t bytes) = 0;
    /// \return how many times the rate was cut
    virtual uint64_t GetRateCuts() const = 0;
};

} // namespace ns3

#endif
