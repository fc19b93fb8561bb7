#include "runtime/rpc/connection.h"

#include <atomic>
#include <chrono>
#include <cstring>

#include "support/error.h"

namespace anvil::rpc {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> next_monitor_id{0};

Clock::time_point deadline_after(double seconds) {
    return Clock::now() +
           std::chrono::milliseconds(static_cast<int64_t>(std::min(seconds, 1e9) * 1e3));
}

int64_t ms_until(Clock::time_point deadline) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

}  // namespace

Connection::Connection(const std::string& host, int port, const std::string& auth_key,
                       double timeout_s) {
    if (auth_key.empty()) user_error() << "RPC: an auth key is needed to connect";
    if (port < 1 || port > 65535) user_error() << "RPC: port " << port << " is out of range";
    bool ipv6 = host.find(':') != std::string::npos;
    address_ = (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
    configure_connecting_end(socket_, auth_key);
    // Messages wait for a finished handshake instead of queueing for a connection that may fail.
    socket_.set(ZMQ_IMMEDIATE, 1);
    socket_.set(ZMQ_HANDSHAKE_IVL, static_cast<int>(std::min(timeout_s, 1e6) * 1e3));
    if (ipv6) socket_.set(ZMQ_IPV6, 1);
    std::string monitor = "inproc://anvil-rpc-monitor-" + std::to_string(next_monitor_id++);
    int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                 ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED;
    if (zmq_socket_monitor(socket_.get(), monitor.c_str(), events) != 0) {
        user_error() << "RPC: cannot monitor the connection: " << zmq_strerror(errno);
    }
    monitor_.connect(monitor);
    socket_.connect(tcp_endpoint(host, port));
    Clock::time_point deadline = deadline_after(timeout_s);
    for (;;) {
        int64_t left = ms_until(deadline);
        if (left <= 0) {
            user_error() << "no answer from " << address_ << " within " << timeout_s
                         << " s (is it an Anvil RPC server or tracker, and reachable?)";
        }
        int event = next_event(static_cast<int>(std::min<int64_t>(left, 1 << 30)));
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) return;
        std::string failure = failure_of(event);
        if (!failure.empty()) user_error() << failure;
    }
}

int Connection::next_event(int timeout_ms) {
    zmq_pollitem_t item{monitor_.get(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, timeout_ms) <= 0) return 0;
    std::vector<std::string> frames;
    if (receive_frames(monitor_.get(), &frames, 4, 1 << 12, true) != ReceiveStatus::ok ||
        frames.empty() || frames[0].size() < 2) {
        return 0;
    }
    uint16_t event = 0;
    std::memcpy(&event, frames[0].data(), sizeof event);
    return event;
}

std::string Connection::failure_of(int event) const {
    switch (event) {
        case ZMQ_EVENT_CONNECT_RETRIED:
            return "cannot connect to " + address_ + " (refused; is the server running?)";
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            return "the server at " + address_ +
                   " refused this client's key: the auth key is not the server's";
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_DISCONNECTED:
            return "the handshake with " + address_ +
                   " failed: the auth key is not the server's, or it is not an Anvil RPC "
                   "server";
        default:
            return "";
    }
}

Message Connection::round_trip(Message request, double timeout_s) {
    if (!lost_.empty()) user_error() << lost_;
    int64_t id = next_id_++;
    request.header["id"] = id;
    std::string op = header_op(request.header);
    // Never blocks: with no connection (the server went away) the message cannot be queued.
    if (!send_frames(socket_.get(), message_frames(request), /*dont_wait=*/true)) {
        lost_ = "the connection to " + address_ + " is lost (the server is gone?)";
        user_error() << lost_;
    }
    Clock::time_point deadline = deadline_after(timeout_s);
    const MessageLimits trusted{.max_header_bytes = int64_t{1} << 30,
                                .max_blob_bytes = int64_t{1} << 62,
                                .max_blobs = 1 << 20};
    for (;;) {
        int64_t left = ms_until(deadline);
        if (left <= 0) {
            lost_ = "no reply from " + address_ + " to '" + op + "' within " +
                    std::to_string(static_cast<int64_t>(timeout_s)) + " s";
            user_error() << lost_;
        }
        zmq_pollitem_t items[] = {{socket_.get(), 0, ZMQ_POLLIN, 0},
                                  {monitor_.get(), 0, ZMQ_POLLIN, 0}};
        int rc = zmq_poll(items, 2, static_cast<long>(std::min<int64_t>(left, 1000)));
        if (rc < 0 && errno != EINTR) user_error() << "RPC: poll failed: " << zmq_strerror(errno);
        if (rc <= 0) continue;
        if ((items[1].revents & ZMQ_POLLIN) && next_event(0) == ZMQ_EVENT_DISCONNECTED) {
            lost_ = "the connection to " + address_ + " was lost during '" + op + "'";
            user_error() << lost_;
        }
        if (!(items[0].revents & ZMQ_POLLIN)) continue;
        std::vector<std::string> frames;
        if (receive_frames(socket_.get(), &frames, trusted.max_blobs, int64_t{1} << 62, true) !=
            ReceiveStatus::ok) {
            continue;
        }
        Message reply = parse_frames(std::move(frames), trusted);
        const Json& reply_id = reply.header["id"];
        if (reply.header.contains("error")) {
            const Json& error = reply.header["error"];
            // An error without an id answers a request the server could not read: ours.
            if (reply_id.is_null() || reply_id == id) {
                user_error() << "remote " << address_ << ": "
                             << (error.is_string() ? error.get<std::string>() : error.dump());
            }
        }
        if (reply_id == id) return reply;
        // A late reply to a request given up on: not ours.
    }
}

}  // namespace anvil::rpc
