// A server's connection to its tracker (tracker.h): it registers the server's device key and
// free sessions, and passes on the tracker's reservation requests. ZeroMQ reconnects on its own
// when the tracker restarts, and since every update carries the whole registration, a restarted
// tracker knows the server again within one update interval.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "runtime/rpc/message.h"
#include "runtime/rpc/zmq_socket.h"

namespace anvil::rpc {

class TrackerLink {
public:
    // `registration`: device_key, port, max_sessions and (optionally) host, the address clients
    // are to use (else the tracker takes the one the server connects from).
    TrackerLink(const ZmqContext& context, const std::string& tracker, const std::string& auth_key,
                Json registration);

    void* socket() const { return socket_.get(); }
    // Tells the tracker the free sessions when they changed or the update interval has passed.
    void update(int free_sessions);
    // The tickets the tracker asks to reserve (reads every waiting message).
    std::vector<std::string> reservation_requests();
    void answer_reservation(const std::string& ticket, bool reserved);
    // Tells the tracker the server stops (best effort).
    void leave();

private:
    bool send(const Json& header);

    ZmqSocket socket_;
    Json registration_;
    int last_free_ = -1;
    std::chrono::steady_clock::time_point last_update_;
};

}  // namespace anvil::rpc
