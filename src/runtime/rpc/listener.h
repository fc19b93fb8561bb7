// What the RPC server and the tracker share: a listening ROUTER socket with CurveZMQ and its ZAP
// handler (auth_key.h), the log of refused peers, the "listening on" line, and stopping on
// SIGINT / SIGTERM.
#pragma once

#include <string>
#include <vector>

#include "runtime/rpc/zmq_socket.h"

namespace anvil::rpc {

class Listener {
public:
    // `who` names the service in the log and the "listening on" line ("server", "tracker").
    Listener(const ZmqContext& context, const std::string& who, const std::string& host, int port,
             const std::string& auth_key, int64_t max_frame_bytes, bool quiet);

    ZmqSocket& socket() { return router_; }
    // "anvil rpc WHO listening on HOST:PORT" on stdout.
    void announce() const;

    // Poll items of the listener's own sockets (the ZAP handler, the handshake monitor), to put
    // before the service's; after the poll, handle(items) answers ZAP and logs refusals.
    std::vector<zmq_pollitem_t> poll_items();
    void handle(const std::vector<zmq_pollitem_t>& items);
    static constexpr size_t kPollItems = 2;

    // A line on stderr, "[anvil rpc WHO TIME] LINE"; routine lines are left out when quiet.
    void log(const std::string& line, bool important) const;

private:
    std::string who_;
    bool quiet_;
    ZapAuthenticator zap_;
    ZmqSocket router_;
    ZmqSocket monitor_;
};

// Installs SIGINT / SIGTERM handlers that make stop_requested() true (and ignores SIGPIPE).
void install_stop_handlers();
bool stop_requested();

}  // namespace anvil::rpc
