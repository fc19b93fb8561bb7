#include "runtime/rpc/server.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "runtime/rpc/frame_stream.h"
#include "runtime/rpc/listener.h"
#include "runtime/rpc/message.h"
#include "runtime/rpc/session_process.h"
#include "runtime/rpc/tracker_link.h"
#include "support/error.h"

namespace anvil::rpc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a session reserved by the tracker waits for its client.
constexpr auto kReservationLifetime = std::chrono::seconds(30);

struct Session {
    int id = 0;
    std::string routing_id;
    std::string peer;
    SessionProcess process;
    std::filesystem::path dir;
    bool pending = false;
    Json pending_id;
    std::string pending_op;
    Clock::time_point deadline;     // of the pending request
    Clock::time_point last_active;  // for the idle timeout
};

std::chrono::milliseconds seconds(double s) {
    return std::chrono::milliseconds(static_cast<int64_t>(std::min(s, 1e9) * 1e3));
}

class Server {
public:
    explicit Server(const ServerOptions& options)
        : options_(options),
          listener_(context_, "server", options.host, options.port, options.auth_key,
                    std::max(options.max_message_bytes, MessageLimits{}.max_header_bytes),
                    options.quiet) {
        limits_.max_blob_bytes = options.max_message_bytes;
        make_work_dir();
        if (!options.tracker.empty()) {
            std::string endpoint = listener_.socket().last_endpoint();
            Json registration = {{"device_key", options.device_key},
                                 {"port", std::atoi(endpoint.c_str() + endpoint.rfind(':') + 1)},
                                 {"max_sessions", options.max_sessions}};
            if (!options.custom_addr.empty()) registration["host"] = options.custom_addr;
            tracker_ = std::make_unique<TrackerLink>(context_, options.tracker, options.auth_key,
                                                     registration);
        }
    }

    ~Server() {
        if (tracker_) tracker_->leave();
        while (!sessions_.empty()) close_session(sessions_.begin()->second, "the server stops");
        if (own_work_dir_) {
            std::error_code ignored;
            std::filesystem::remove_all(work_dir_, ignored);
        }
    }

    void run() {
        listener_.announce();
        if (tracker_) {
            listener_.log("registering as '" + options_.device_key + "' with the tracker at " +
                              options_.tracker,
                          false);
        }
        while (!stop_requested()) {
            std::vector<zmq_pollitem_t> items = listener_.poll_items();
            items.push_back({listener_.socket().get(), 0, ZMQ_POLLIN, 0});
            items.push_back({tracker_ ? tracker_->socket() : nullptr, -1,
                             static_cast<short>(tracker_ ? ZMQ_POLLIN : 0), 0});
            const size_t first_session = items.size();
            std::vector<int> polled;
            for (auto& [id, s] : sessions_) {
                items.push_back({nullptr, s.process.fd, ZMQ_POLLIN, 0});
                polled.push_back(id);
            }
            int rc = zmq_poll(items.data(), static_cast<int>(items.size()), 500);
            if (rc < 0) {
                if (errno == EINTR) continue;
                user_error() << "RPC server: poll failed: " << zmq_strerror(errno);
            }
            listener_.handle(items);
            if (items[Listener::kPollItems].revents & ZMQ_POLLIN) serve_clients();
            if (items[Listener::kPollItems + 1].revents & ZMQ_POLLIN) serve_tracker();
            for (size_t i = 0; i < polled.size(); ++i) {
                if (!(items[first_session + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) continue;
                auto it = sessions_.find(polled[i]);
                if (it != sessions_.end()) relay_reply(it->second);
            }
            enforce_timeouts();
            if (tracker_) tracker_->update(free_sessions());
        }
        listener_.log("stopping", false);
    }

private:
    void make_work_dir() {
        if (!options_.work_dir.empty()) {
            work_dir_ = options_.work_dir;
            std::filesystem::create_directories(work_dir_);
            return;
        }
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/anvil-rpc-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) {
            user_error() << "RPC server: cannot make a work directory under " << pattern << ": "
                         << std::strerror(errno);
        }
        work_dir_ = pattern;
        own_work_dir_ = true;
    }

    int free_sessions() const {
        return options_.max_sessions - static_cast<int>(sessions_.size()) -
               static_cast<int>(reservations_.size());
    }

    void send(const std::string& routing_id, const Message& message) {
        std::vector<std::string> frames = message_frames(message);
        frames.insert(frames.begin(), routing_id);
        try {
            send_frames(listener_.socket().get(), frames);
        } catch (const Error& e) {
            listener_.log(std::string("could not send a reply: ") + e.what(), true);
        }
    }

    // All frames of one request together: two of the largest (e.g. a model's two inputs).
    int64_t max_request_bytes() const {
        return 2 * options_.max_message_bytes + limits_.max_header_bytes;
    }

    // The tracker asks for sessions to be held for its clients.
    void serve_tracker() {
        for (const std::string& ticket : tracker_->reservation_requests()) {
            bool ok = free_sessions() > 0;
            if (ok) reservations_[ticket] = Clock::now() + kReservationLifetime;
            tracker_->answer_reservation(ticket, ok);
        }
    }

    // Reads every message waiting on the listening socket.
    void serve_clients() {
        for (;;) {
            std::vector<std::string> frames;
            std::string peer;
            ReceiveStatus status =
                receive_frames(listener_.socket().get(), &frames, limits_.max_blobs + 2,
                               max_request_bytes(), true, &peer);
            if (status == ReceiveStatus::none) return;
            if (status == ReceiveStatus::too_large && !frames.empty()) {
                listener_.log("refused an oversized message from " + peer, true);
                send(frames[0],
                     make_error_reply(
                         Json(), "message too large: at most " + std::to_string(limits_.max_blobs) +
                                     " blobs and " + std::to_string(max_request_bytes()) +
                                     " bytes in all"));
                continue;
            }
            if (frames.size() < 2) {
                listener_.log("dropped an empty message from " + peer, true);
                continue;
            }
            std::string routing_id = std::move(frames[0]);
            frames.erase(frames.begin());
            serve_request(routing_id, peer, std::move(frames));
        }
    }

    void serve_request(const std::string& routing_id, const std::string& peer,
                       std::vector<std::string> frames) {
        Message request;
        std::string op;
        try {
            // Parsed here only to check it and find its op; the session's process parses it
            // again.
            request = parse_frames(frames, limits_);
            op = header_op(request.header);
        } catch (const Error& e) {
            listener_.log("malformed request from " + peer + ": " + e.what(), true);
            send(routing_id,
                 make_error_reply(Json(), std::string("malformed request: ") + e.what()));
            return;
        }
        Json id = request.header.contains("id") ? request.header["id"] : Json();
        if (op == "session.open") {
            send(routing_id, open_session(routing_id, peer, request));
            return;
        }
        Session* session = find_session(routing_id);
        if (session == nullptr) {
            send(routing_id, make_error_reply(id,
                                              "no session is open on this connection (it was "
                                              "closed, or timed out); connect again"));
            return;
        }
        session->last_active = Clock::now();
        if (op == "session.close") {
            close_session(*session, "closed by the client");
            send(routing_id, make_reply(request));
            return;
        }
        if (session->pending) {
            send(routing_id,
                 make_error_reply(id, "the session is still serving '" + session->pending_op +
                                          "'; one request at a time"));
            return;
        }
        try {
            write_frames(session->process.fd, frames);
        } catch (const Error&) {
            // The session's process is gone; relay_reply reports how when the poll sees it.
        }
        session->pending = true;
        session->pending_id = id;
        session->pending_op = op;
        // A request may ask for a shorter limit than the server's (a tuner's per-candidate one).
        double limit = options_.request_timeout_s;
        auto asked = request.header.find("timeout_s");
        if (asked != request.header.end() && asked->is_number() && asked->get<double>() > 0) {
            limit = std::min(limit, asked->get<double>());
        }
        session->deadline = Clock::now() + seconds(limit);
    }

    Session* find_session(const std::string& routing_id) {
        for (auto& [id, s] : sessions_) {
            if (s.routing_id == routing_id) return &s;
        }
        return nullptr;
    }

    Message open_session(const std::string& routing_id, const std::string& peer,
                         const Message& request) {
        Json id = request.header.contains("id") ? request.header["id"] : Json();
        if (find_session(routing_id) != nullptr) {
            return make_error_reply(id, "a session is already open on this connection");
        }
        // A client the tracker sent holds a ticket for the session reserved for it.
        std::optional<std::string> ticket;
        if (request.header.contains("ticket")) {
            ticket = request.header["ticket"].is_string()
                         ? request.header["ticket"].get<std::string>()
                         : std::string();
            if (!reservations_.contains(*ticket)) {
                return make_error_reply(id,
                                        "the tracker's ticket is unknown or expired; request "
                                        "a device again");
            }
            reservations_.erase(*ticket);
        } else if (free_sessions() <= 0) {
            listener_.log("refused a session from " + peer + ": " +
                              std::to_string(sessions_.size()) + " sessions open, " +
                              std::to_string(reservations_.size()) + " reserved (the limit)",
                          true);
            return make_error_reply(
                id, "the server is serving " + std::to_string(sessions_.size()) +
                        " sessions, its limit (--max-sessions" +
                        (reservations_.empty() ? "" : ", with sessions reserved by its tracker") +
                        "); try again later");
        }
        Session s;
        s.id = next_session_id_++;
        s.routing_id = routing_id;
        s.peer = peer;
        s.dir = work_dir_ / ("session-" + std::to_string(s.id));
        std::error_code ec;
        std::filesystem::remove_all(s.dir, ec);
        std::filesystem::create_directories(s.dir, ec);
        if (ec) {
            return make_error_reply(id,
                                    "the server cannot make a session directory: " + ec.message());
        }
        try {
            s.process = start_session_process({.dir = s.dir,
                                               .max_upload_bytes = options_.max_upload_bytes,
                                               .max_tensor_bytes = options_.max_tensor_bytes});
        } catch (const Error& e) {
            return make_error_reply(id, e.what());
        }
        s.last_active = Clock::now();
        listener_.log("session " + std::to_string(s.id) + " opened for " + peer + " (process " +
                          std::to_string(s.process.pid) + ")",
                      false);
        sessions_.emplace(s.id, s);
        Message reply = make_reply(request);
        reply.header["session"] = s.id;
        reply.header["limits"] = {{"max_message_bytes", options_.max_message_bytes},
                                  {"max_upload_bytes", options_.max_upload_bytes},
                                  {"max_tensor_bytes", options_.max_tensor_bytes},
                                  {"request_timeout_s", options_.request_timeout_s},
                                  {"idle_timeout_s", options_.idle_timeout_s}};
        return reply;
    }

    // The session's process has something to say: its reply, or (EOF) that it died.
    void relay_reply(Session& s) {
        std::vector<std::string> frames;
        bool got = false;
        std::string failure;
        try {
            got = read_frames(s.process.fd, &frames, 1 << 20, int64_t{1} << 62);
        } catch (const Error& e) {
            failure = e.what();
        }
        if (got) {
            if (!s.pending) return;  // nothing was asked; drop it
            s.pending = false;
            s.last_active = Clock::now();
            frames.insert(frames.begin(), s.routing_id);
            try {
                send_frames(listener_.socket().get(), frames);
            } catch (const Error& e) {
                listener_.log(std::string("could not send a reply: ") + e.what(), true);
            }
            return;
        }
        std::string why = "the session's process " + stop_session_process(s.process);
        if (!failure.empty()) why += " (" + failure + ")";
        if (s.pending) {
            why += " while serving '" + s.pending_op + "'";
            send(s.routing_id,
                 make_error_reply(s.pending_id, why + "; the session is closed (connect again)"));
        }
        close_session(s, why);
    }

    void enforce_timeouts() {
        Clock::time_point now = Clock::now();
        std::vector<int> expired;
        for (auto& [id, s] : sessions_) {
            if (s.pending && now > s.deadline) {
                send(s.routing_id,
                     make_error_reply(s.pending_id, "'" + s.pending_op +
                                                        "' ran past its time limit; the session "
                                                        "is closed (connect again)"));
                expired.push_back(id);
            } else if (!s.pending && now - s.last_active > seconds(options_.idle_timeout_s)) {
                expired.push_back(id);
            }
        }
        for (int id : expired) {
            Session& s = sessions_.at(id);
            close_session(s, s.pending ? "timeout of '" + s.pending_op + "'" : "idle timeout");
        }
        std::erase_if(reservations_, [&](const auto& r) { return now > r.second; });
    }

    void close_session(Session& s, const std::string& why) {
        stop_session_process(s.process);
        std::error_code ignored;
        std::filesystem::remove_all(s.dir, ignored);
        bool important = why.find("process") != std::string::npos || why.find("timeout") == 0;
        listener_.log("session " + std::to_string(s.id) + " of " + s.peer + " closed: " + why,
                      important);
        sessions_.erase(s.id);
    }

    ServerOptions options_;
    MessageLimits limits_;
    ZmqContext context_;
    Listener listener_;
    std::unique_ptr<TrackerLink> tracker_;
    std::filesystem::path work_dir_;
    bool own_work_dir_ = false;
    std::map<int, Session> sessions_;
    std::map<std::string, Clock::time_point> reservations_;  // ticket -> expiry
    int next_session_id_ = 1;
};

}  // namespace

void run_rpc_server(const ServerOptions& options) {
    if (options.auth_key.empty()) user_error() << "the RPC server needs an auth key";
    if (options.max_sessions < 1 || options.request_timeout_s <= 0 || options.idle_timeout_s <= 0 ||
        options.max_message_bytes < 1024 || options.max_upload_bytes < 0) {
        user_error() << "RPC server: the limits must be positive (--max-sessions, timeouts) and "
                        "--max-message-mb at least 1";
    }
    if (options.tracker.empty() != options.device_key.empty()) {
        user_error() << "RPC server: --tracker and --device-key go together (the tracker lists "
                        "the server under its device key)";
    }
    install_stop_handlers();
    Server server(options);
    server.run();
}

}  // namespace anvil::rpc
