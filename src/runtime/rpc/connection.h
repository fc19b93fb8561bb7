// One authenticated connection from a client to a server or tracker: the handshake, and requests
// answered in turn (what RpcSession and TrackerClient, client.h, are built on).
//
// The connection watches its socket's events, so a failure is told for what it is: refused (no
// server there), a failed handshake (the auth key is not the server's), a lost connection, or
// no reply in time.
#pragma once

#include <memory>
#include <string>

#include "runtime/rpc/message.h"
#include "runtime/rpc/zmq_socket.h"

namespace anvil::rpc {

class Connection {
public:
    // Connects and completes the CurveZMQ handshake within `timeout_s`; UserError saying why not.
    Connection(const std::string& host, int port, const std::string& auth_key, double timeout_s);

    // Sends `request` (its "id" is set here) and waits up to `timeout_s` for its reply; UserError
    // "remote HOST:PORT: ..." for an error reply, and for a lost connection or no reply (after
    // which the connection is unusable).
    Message round_trip(Message request, double timeout_s);

    const std::string& address() const { return address_; }
    bool usable() const { return lost_.empty(); }

private:
    // The next event of the socket's monitor within `timeout_ms` (0 when none).
    int next_event(int timeout_ms);
    std::string failure_of(int event) const;

    std::string address_;
    ZmqContext context_;
    ZmqSocket socket_{context_, ZMQ_DEALER};
    ZmqSocket monitor_{context_, ZMQ_PAIR};
    int64_t next_id_ = 1;
    std::string lost_;  // why the connection is unusable, once it is
};

}  // namespace anvil::rpc
