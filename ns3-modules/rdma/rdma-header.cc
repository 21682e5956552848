#include "rdma-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaHeader);

TypeId
RdmaHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaHeader")
                            .SetParent<Header>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RdmaHeader>();
    return tid;
}

TypeId
RdmaHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

RdmaHeader::RdmaHeader()
    : m_opcode(DATA),
      m_psn(0),
      m_ackRequest(false)
{
}

RdmaHeader::RdmaHeader(Opcode opcode, uint32_t psn, bool ackRequest)
    : m_opcode(opcode),
      m_psn(psn),
      m_ackRequest(ackRequest)
{
}

RdmaHeader::Opcode
RdmaHeader::GetOpcode() const
{
    return m_opcode;
}

uint32_t
RdmaHeader::GetPsn() const
{
    return m_psn;
}

bool
RdmaHeader::GetAckRequest() const
{
    return m_ackRequest;
}

uint32_t
RdmaHeader::GetSerializedSize() const
{
    return WIRE_BYTES;
}

void
RdmaHeader::Serialize(Buffer::Iterator start) const
{
    // BTH: opcode, flags (the A bit), PSN; the rest (partition key,
    // destination QP, the ICRC) as zeros: the UDP ports name the connection
    start.WriteU8(m_opcode);
    start.WriteU8(m_ackRequest ? 0x80 : 0);
    start.WriteHtonU32(m_psn);
    start.WriteU16(0);
    start.WriteU32(0);
    start.WriteU32(0);
}

uint32_t
RdmaHeader::Deserialize(Buffer::Iterator start)
{
    m_opcode = static_cast<Opcode>(start.ReadU8());
    m_ackRequest = (start.ReadU8() & 0x80) != 0;
    m_psn = start.ReadNtohU32();
    start.ReadU16();
    start.ReadU32();
    start.ReadU32();
    return WIRE_BYTES;
}

void
RdmaHeader::Print(std::ostream& os) const
{
    static const char* names[] = {"DATA", "ACK", "NAK", "CNP", "CONNECT", "CONNECT_REPLY"};
    os << (m_opcode <= CONNECT_REPLY ? names[m_opcode] : "?") << " psn=" << m_psn
       << (m_ackRequest ? " A" : "");
}

} // namespace ns3
