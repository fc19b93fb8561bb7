// ZeroMQ, the RPC transport: RAII owners of a context and its sockets, whole-message send and
// receive with size limits, and CurveZMQ set-up (auth_key.h) for both ends.
//
// Why ZeroMQ (libzmq5 from Debian) and not gRPC: it is one small C library (about 1 MB, against
// gRPC's tens with protobuf and abseil), Debian ships it for arm64 too, so the RPC server
// cross-builds and runs on a board with nothing but libzmq5 beside the runtime, and it has
// authenticated encryption built in (CurveZMQ, with the ZAP hook to decide who may connect), where
// gRPC would need TLS certificates to be made and handed out. Its message framing, reconnection and
// per-message size limit (ZMQ_MAXMSGSIZE) are what the RPC needs of a transport.
#pragma once

#include <zmq.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/rpc/auth_key.h"

namespace anvil::rpc {

class ZmqContext {
public:
    ZmqContext();
    ~ZmqContext();
    ZmqContext(const ZmqContext&) = delete;
    ZmqContext& operator=(const ZmqContext&) = delete;
    void* get() const { return ctx_; }

private:
    void* ctx_;
};

class ZmqSocket {
public:
    ZmqSocket(const ZmqContext& context, int type);
    ~ZmqSocket();
    ZmqSocket(const ZmqSocket&) = delete;
    ZmqSocket& operator=(const ZmqSocket&) = delete;
    void* get() const { return socket_; }

    void set(int option, int value);
    void set(int option, int64_t value);
    void set(int option, const void* data, size_t size);
    void set(int option, const std::string& value) { set(option, value.data(), value.size()); }
    // UserError naming the endpoint when binding or connecting fails.
    void bind(const std::string& endpoint);
    void connect(const std::string& endpoint);
    // The endpoint bound last, with the port the system chose for port 0 ("tcp://127.0.0.1:41235").
    std::string last_endpoint() const;

private:
    void* socket_;
};

// "tcp://HOST:PORT"; a host that is an IPv6 address is bracketed.
std::string tcp_endpoint(const std::string& host, int port);
// Splits "HOST:PORT" (the form of --rpc and --tracker); UserError naming `option` when malformed.
std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& option);

// Sends the frames as one message; UserError when the socket refuses (e.g. closed). With
// `dont_wait`, returns false instead of blocking when the message cannot go now (a DEALER with
// ZMQ_IMMEDIATE and no connection).
bool send_frames(void* socket, const std::vector<std::string>& frames, bool dont_wait = false);

enum class ReceiveStatus {
    ok,
    none,       // nothing to receive (non-blocking) or interrupted
    too_large,  // the message broke a limit: all its frames were read, all but the first dropped
};

// Receives one whole message (every part), non-blocking when `dont_wait`. Frames beyond
// `max_frames`, or bytes beyond `max_bytes` in all, drop the message (too_large). `peer_address`,
// when given, receives the sender's IP address (for logs).
ReceiveStatus receive_frames(void* socket, std::vector<std::string>* frames, int max_frames,
                             int64_t max_bytes, bool dont_wait,
                             std::string* peer_address = nullptr);

// CurveZMQ for the serving end of `auth_key` (a server or tracker socket before bind): its key
// pair, and ZAP in the "anvil" domain to check who connects (see ZapAuthenticator).
void configure_serving_end(ZmqSocket& socket, const std::string& auth_key);
// CurveZMQ for the connecting end (a client or a server registering with a tracker, before
// connect): its key pair, and the public key the serving end of `auth_key` has.
void configure_connecting_end(ZmqSocket& socket, const std::string& auth_key);

// Answers ZeroMQ's authentication requests (ZAP, RFC 27) for the sockets of one context: a peer
// is let in only when it runs CURVE with the connecting-end public key of the auth key. The owner
// polls socket() and calls handle() when it is readable, so handshakes are decided on the owner's
// thread; handle() returns a line for the log when a peer was refused, else "".
class ZapAuthenticator {
public:
    ZapAuthenticator(const ZmqContext& context, const std::string& auth_key);
    void* socket() const { return socket_.get(); }
    std::string handle();

private:
    ZmqSocket socket_;
    CurveKeyPair allowed_;
};

}  // namespace anvil::rpc
