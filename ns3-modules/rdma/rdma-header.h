// The header of every RoCEv2 packet the harness's RDMA transport sends, over
// UDP: the InfiniBand Base Transport Header's fields a reliable connection
// uses (opcode, packet sequence number, the acknowledge-request bit), and
// the bytes the BTH and the ICRC trailer take on the wire (12 + 4).
#ifndef DDNN_RDMA_HEADER_H
#define DDNN_RDMA_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A RoCEv2 transport header: what a packet is, its PSN, whether it asks for an ACK.
 */
class RdmaHeader : public Header
{
  public:
    /// \brief What a packet is.
    enum Opcode : uint8_t
    {
        DATA = 0,        //!< payload, PSN = its sequence number
        ACK = 1,         //!< every PSN up to and including PSN arrived
        NAK = 2,         //!< PSN is missing (sequence error): go back to it
        CNP = 3,         //!< congestion notification (DCQCN's NP to RP)
        CONNECT = 4,     //!< connection request (the CM's REQ, in band)
        CONNECT_REPLY = 5, //!< connection established (REP)
    };

    /// \brief Bytes on the wire: the BTH (12) and the ICRC trailer (4).
    static constexpr uint32_t WIRE_BYTES = 16;

    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    RdmaHeader();
    /// \brief A header of `opcode`, `psn`, asking for an ACK or not.
    RdmaHeader(Opcode opcode, uint32_t psn, bool ackRequest = false);

    /// \return the opcode
    Opcode GetOpcode() const;
    /// \return the packet sequence number
    uint32_t GetPsn() const;
    /// \return whether the sender asks for an ACK now
    bool GetAckRequest() const;

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    Opcode m_opcode;
    uint32_t m_psn;
    bool m_ackRequest;
};

} // namespace ns3

#endif
