#include "runtime/rpc/tracker.h"

#include <sodium.h>

#include <chrono>
#include <deque>
#include <map>

#include "runtime/rpc/listener.h"
#include "runtime/rpc/message.h"
#include "support/error.h"

namespace anvil::rpc {

namespace {

using Clock = std::chrono::steady_clock;

struct Device {
    std::string key;
    std::string host;
    int port = 0;
    int max_sessions = 0;
    int free = 0;     // as the server last said
    int pending = 0;  // reservations asked of it and not answered yet
    Clock::time_point last_seen;
};

struct Waiting {
    std::string routing_id;  // the client's
    Json request_id;
    std::string key;
    int64_t priority = 0;
    uint64_t order = 0;  // arrival
    Clock::time_point deadline;
};

struct Reservation {
    std::string device;  // routing id of the server asked
    Waiting client;
};

std::string make_ticket() {
    uint8_t bytes[16];
    randombytes_buf(bytes, sizeof bytes);
    static const char* digits = "0123456789abcdef";
    std::string ticket;
    for (uint8_t b : bytes) {
        ticket += digits[b >> 4];
        ticket += digits[b & 15];
    }
    return ticket;
}

class Tracker {
public:
    explicit Tracker(const TrackerOptions& options)
        : options_(options),
          listener_(context_, "tracker", options.host, options.port, options.auth_key, 1 << 20,
                    options.quiet) {}

    void run() {
        listener_.announce();
        while (!stop_requested()) {
            std::vector<zmq_pollitem_t> items = listener_.poll_items();
            items.push_back({listener_.socket().get(), 0, ZMQ_POLLIN, 0});
            int rc = zmq_poll(items.data(), static_cast<int>(items.size()), 500);
            if (rc < 0) {
                if (errno == EINTR) continue;
                user_error() << "RPC tracker: poll failed: " << zmq_strerror(errno);
            }
            listener_.handle(items);
            if (items[Listener::kPollItems].revents & ZMQ_POLLIN) serve();
            expire();
            dispatch();
        }
        listener_.log("stopping", false);
    }

private:
    void send(const std::string& routing_id, const Json& header) {
        Message m;
        m.header = header;
        std::vector<std::string> frames = message_frames(m);
        frames.insert(frames.begin(), routing_id);
        try {
            send_frames(listener_.socket().get(), frames);
        } catch (const Error& e) {
            listener_.log(std::string("could not send: ") + e.what(), true);
        }
    }

    void serve() {
        for (;;) {
            std::vector<std::string> frames;
            std::string peer;
            ReceiveStatus status =
                receive_frames(listener_.socket().get(), &frames, 2, 1 << 20, true, &peer);
            if (status == ReceiveStatus::none) return;
            if (status == ReceiveStatus::too_large || frames.size() != 2) {
                listener_.log("dropped a malformed message from " + peer, true);
                if (!frames.empty()) {
                    send(frames[0], make_error_reply(Json(),
                                                     "malformed message: the tracker "
                                                     "takes one JSON header")
                                        .header);
                }
                continue;
            }
            std::string routing_id = std::move(frames[0]);
            Json id;
            try {
                Message m = parse_frames({frames[1]}, {});
                id = m.header.contains("id") ? m.header["id"] : Json();
                handle(routing_id, peer, m.header);
            } catch (const Error& e) {
                listener_.log("malformed message from " + peer + ": " + e.what(), true);
                send(routing_id,
                     make_error_reply(id, std::string("malformed message: ") + e.what()).header);
            }
        }
    }

    void handle(const std::string& routing_id, const std::string& peer, const Json& h) {
        std::string op = header_op(h);
        if (op == "tracker.update") {
            bool known = devices_.contains(routing_id);
            Device& d = devices_[routing_id];
            d.key = header_string(h, "device_key");
            d.host = h.contains("host") ? header_string(h, "host") : peer;
            d.port = static_cast<int>(header_int(h, "port"));
            d.max_sessions = static_cast<int>(header_int(h, "max_sessions"));
            d.free = static_cast<int>(header_int(h, "free"));
            d.last_seen = Clock::now();
            if (!known) {
                listener_.log(
                    "device '" + d.key + "' registered at " + d.host + ":" + std::to_string(d.port),
                    false);
            }
        } else if (op == "tracker.leave") {
            drop_device(routing_id, "left");
        } else if (op == "tracker.reserved") {
            reserved(routing_id, header_string(h, "ticket"), header_bool_or(h, "ok", false));
        } else if (op == "tracker.request") {
            Waiting w{.routing_id = routing_id,
                      .request_id = h.contains("id") ? h["id"] : Json(),
                      .key = header_string(h, "device_key"),
                      .priority = header_int_or(h, "priority", 1),
                      .order = next_order_++,
                      .deadline = Clock::now() +
                                  std::chrono::milliseconds(static_cast<int64_t>(
                                      std::min(header_number_or(h, "wait_s", 1e9), 1e9) * 1e3))};
            if (!has_key(w.key)) {
                send(routing_id, make_error_reply(w.request_id, no_device_message(w.key)).header);
                return;
            }
            queue_.push_back(std::move(w));
        } else if (op == "tracker.status") {
            Json reply = {{"id", h.contains("id") ? h["id"] : Json()}};
            reply["devices"] = Json::array();
            for (const auto& [rid, d] : devices_) {
                reply["devices"].push_back({{"device_key", d.key},
                                            {"address", d.host + ":" + std::to_string(d.port)},
                                            {"free", d.free},
                                            {"max_sessions", d.max_sessions}});
            }
            reply["queues"] = Json::object();
            for (const Waiting& w : queue_) {
                reply["queues"][w.key] = reply["queues"].value(w.key, 0) + 1;
            }
            send(routing_id, reply);
        } else {
            user_error() << "unknown request '" << op << "'";
        }
    }

    bool has_key(const std::string& key) const {
        for (const auto& [rid, d] : devices_) {
            if (d.key == key) return true;
        }
        return false;
    }

    std::string no_device_message(const std::string& key) const {
        std::map<std::string, int> keys;
        for (const auto& [rid, d] : devices_) ++keys[d.key];
        std::string known;
        for (const auto& [k, n] : keys) known += (known.empty() ? "'" : ", '") + k + "'";
        return "no device of key '" + key + "' is registered with the tracker" +
               (known.empty() ? " (none is)" : "; it has " + known);
    }

    // Hands free sessions to waiting clients: the highest priority first, then the earliest.
    void dispatch() {
        std::stable_sort(queue_.begin(), queue_.end(), [](const Waiting& a, const Waiting& b) {
            return a.priority != b.priority ? a.priority > b.priority : a.order < b.order;
        });
        for (auto it = queue_.begin(); it != queue_.end();) {
            Device* best = nullptr;
            std::string best_id;
            for (auto& [rid, d] : devices_) {
                if (d.key == it->key && d.free - d.pending > 0 &&
                    (best == nullptr || d.free - d.pending > best->free - best->pending)) {
                    best = &d;
                    best_id = rid;
                }
            }
            if (best == nullptr) {
                ++it;
                continue;
            }
            std::string ticket = make_ticket();
            best->pending += 1;
            reservations_[ticket] = {best_id, *it};
            send(best_id, {{"op", "tracker.reserve"}, {"ticket", ticket}});
            it = queue_.erase(it);
        }
    }

    void reserved(const std::string& device_id, const std::string& ticket, bool ok) {
        auto it = reservations_.find(ticket);
        if (it == reservations_.end() || it->second.device != device_id) return;
        Reservation r = std::move(it->second);
        reservations_.erase(it);
        auto d = devices_.find(device_id);
        if (d != devices_.end()) {
            d->second.pending = std::max(0, d->second.pending - 1);
            // Until the server's next update says: one session fewer, or none (it refused).
            d->second.free = ok ? d->second.free - 1 : 0;
        }
        if (!ok || d == devices_.end()) {
            queue_.push_front(std::move(r.client));  // its turn is kept: order is unchanged
            return;
        }
        listener_.log("device '" + d->second.key + "' at " + d->second.host + ":" +
                          std::to_string(d->second.port) + " given to a client",
                      false);
        send(r.client.routing_id, {{"id", r.client.request_id},
                                   {"host", d->second.host},
                                   {"port", d->second.port},
                                   {"ticket", ticket}});
    }

    void drop_device(const std::string& routing_id, const std::string& why) {
        auto d = devices_.find(routing_id);
        if (d == devices_.end()) return;
        listener_.log("device '" + d->second.key + "' at " + d->second.host + ":" +
                          std::to_string(d->second.port) + " " + why,
                      true);
        devices_.erase(d);
        // Its unanswered reservations go back to the queue.
        for (auto it = reservations_.begin(); it != reservations_.end();) {
            if (it->second.device == routing_id) {
                queue_.push_front(std::move(it->second.client));
                it = reservations_.erase(it);
            } else {
                ++it;
            }
        }
    }

    void expire() {
        Clock::time_point now = Clock::now();
        auto limit =
            std::chrono::milliseconds(static_cast<int64_t>(options_.server_expiry_s * 1e3));
        std::vector<std::string> silent;
        for (const auto& [rid, d] : devices_) {
            if (now - d.last_seen > limit) silent.push_back(rid);
        }
        for (const std::string& rid : silent) drop_device(rid, "dropped (silent)");
        for (auto it = queue_.begin(); it != queue_.end();) {
            std::string error;
            if (!has_key(it->key)) {
                error = no_device_message(it->key) + " any more";
            } else if (now > it->deadline) {
                error = "no device of key '" + it->key + "' became free in time";
            }
            if (error.empty()) {
                ++it;
                continue;
            }
            send(it->routing_id, make_error_reply(it->request_id, error).header);
            it = queue_.erase(it);
        }
    }

    TrackerOptions options_;
    ZmqContext context_;
    Listener listener_;
    std::map<std::string, Device> devices_;  // by the server's routing id
    std::deque<Waiting> queue_;
    std::map<std::string, Reservation> reservations_;  // by ticket
    uint64_t next_order_ = 0;
};

}  // namespace

void run_rpc_tracker(const TrackerOptions& options) {
    if (options.auth_key.empty()) user_error() << "the RPC tracker needs an auth key";
    if (sodium_init() < 0) user_error() << "RPC tracker: libsodium could not be initialised";
    install_stop_handlers();
    Tracker tracker(options);
    tracker.run();
}

}  // namespace anvil::rpc
