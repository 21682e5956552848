// What the harness's TCP applications do alike with their sockets: listen
// for connections, read every byte a socket holds, and put as many bytes
// as its send buffer takes. The background flows' sender and sink and the
// services' request clients and servers share them, so a change to how the
// harness moves bytes through ns-3's TCP is made once.
#ifndef DDNN_TCP_APP_SOCKET_H
#define DDNN_TCP_APP_SOCKET_H

#include "ns3/address.h"
#include "ns3/callback.h"
#include "ns3/node.h"
#include "ns3/socket.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A TCP socket of the harness (CreateTcpSocket) on `node`, listening
 * on every address at `port`, its handshake replies in class `tos`; every
 * connection is accepted and handed to `accepted`.
 */
Ptr<Socket> ListenTcp(Ptr<Node> node,
                      uint16_t port,
                      uint8_t tos,
                      Callback<void, Ptr<Socket>, const Address&> accepted);

/**
 * \ingroup ddnn
 * \brief Read every packet `socket` holds now.
 * \return the bytes read
 */
uint64_t ReceiveAll(Ptr<Socket> socket);

/**
 * \ingroup ddnn
 * \brief Put up to `bytes` bytes (zeros) into `socket`'s send buffer, in
 * chunks of the room it has, until it has no room or refuses.
 * \return how many it took (call again from its send callback for the rest)
 */
uint64_t SendAsMuch(Ptr<Socket> socket, uint64_t bytes);

} // namespace ns3

#endif
