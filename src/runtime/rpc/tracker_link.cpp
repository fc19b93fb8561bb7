#include "runtime/rpc/tracker_link.h"

#include "runtime/rpc/tracker.h"

namespace anvil::rpc {

TrackerLink::TrackerLink(const ZmqContext& context, const std::string& tracker,
                         const std::string& auth_key, Json registration)
    : socket_(context, ZMQ_DEALER), registration_(std::move(registration)) {
    auto [host, port] = parse_host_port(tracker, "--tracker");
    configure_connecting_end(socket_, auth_key);
    // Updates wait for a finished handshake instead of piling up for a tracker that is down.
    socket_.set(ZMQ_IMMEDIATE, 1);
    if (host.find(':') != std::string::npos) socket_.set(ZMQ_IPV6, 1);
    socket_.connect(tcp_endpoint(host, port));
}

bool TrackerLink::send(const Json& header) {
    // Never blocks: while the tracker is away nothing is queued (ZMQ_IMMEDIATE) and the send
    // fails; the next update tries again.
    std::string text = header.dump();
    return zmq_send(socket_.get(), text.data(), text.size(), ZMQ_DONTWAIT) >= 0;
}

void TrackerLink::update(int free_sessions) {
    auto now = std::chrono::steady_clock::now();
    if (free_sessions == last_free_ &&
        now - last_update_ < std::chrono::duration<double>(kTrackerUpdateInterval_s)) {
        return;
    }
    Json header = registration_;
    header["op"] = "tracker.update";
    header["free"] = free_sessions;
    if (send(header)) {
        last_free_ = free_sessions;
        last_update_ = now;
    }
}

std::vector<std::string> TrackerLink::reservation_requests() {
    std::vector<std::string> tickets;
    std::vector<std::string> frames;
    while (receive_frames(socket_.get(), &frames, 4, 1 << 16, true) == ReceiveStatus::ok) {
        try {
            Message m = parse_frames(std::move(frames), {});
            if (header_op(m.header) == "tracker.reserve") {
                tickets.push_back(header_string(m.header, "ticket"));
            }
        } catch (const std::exception&) {
            // Only the tracker, authenticated, talks on this socket; ignore what is not ours.
        }
    }
    return tickets;
}

void TrackerLink::answer_reservation(const std::string& ticket, bool reserved) {
    send({{"op", "tracker.reserved"}, {"ticket", ticket}, {"ok", reserved}});
}

void TrackerLink::leave() {
    socket_.set(ZMQ_LINGER, 500);  // give the message a moment to go out as the socket closes
    send({{"op", "tracker.leave"}});
}

}  // namespace anvil::rpc
