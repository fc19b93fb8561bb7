#include "runtime/rpc/server.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "runtime/rpc/frame_stream.h"
#include "runtime/rpc/message.h"
#include "runtime/rpc/session_handler.h"
#include "runtime/rpc/zmq_socket.h"
#include "support/error.h"

namespace anvil::rpc {

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t stop_requested = 0;
void request_stop(int) {
    stop_requested = 1;
}

struct Session {
    int id = 0;
    std::string routing_id;
    std::string peer;
    pid_t pid = -1;
    int fd = -1;
    std::filesystem::path dir;
    bool pending = false;
    Json pending_id;
    std::string pending_op;
    Clock::time_point deadline;     // of the pending request
    Clock::time_point last_active;  // for the idle timeout
};

std::string describe_exit(int status) {
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

std::chrono::milliseconds seconds(double s) {
    return std::chrono::milliseconds(static_cast<int64_t>(std::min(s, 1e9) * 1e3));
}

class Server {
public:
    explicit Server(const ServerOptions& options)
        : options_(options),
          zap_(context_, options.auth_key),
          router_(context_, ZMQ_ROUTER),
          monitor_(context_, ZMQ_PAIR) {
        limits_.max_blob_bytes = options.max_message_bytes;
        configure_serving_end(router_, options.auth_key);
        // ZeroMQ checks the frame as it arrives, encrypted: allow for CurveZMQ's box around it.
        router_.set(ZMQ_MAXMSGSIZE,
                    std::max(options.max_message_bytes, limits_.max_header_bytes) + 4096);
        router_.set(ZMQ_HANDSHAKE_IVL, 10000);
        router_.set(ZMQ_TCP_KEEPALIVE, 1);
        std::string port = options.port == 0 ? "*" : std::to_string(options.port);
        std::string host =
            options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
        if (options.host.find(':') != std::string::npos) router_.set(ZMQ_IPV6, 1);
        // Handshakes that fail before ZAP is asked (a wrong auth key, garbage bytes) are logged
        // from the socket's events.
        int events = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
        if (zmq_socket_monitor(router_.get(), "inproc://anvil-rpc-server-monitor", events) != 0) {
            user_error() << "RPC server: cannot monitor its socket: " << zmq_strerror(errno);
        }
        monitor_.connect("inproc://anvil-rpc-server-monitor");
        router_.bind("tcp://" + host + ":" + port);
        make_work_dir();
    }

    ~Server() {
        while (!sessions_.empty()) close_session(sessions_.begin()->second, "the server stops");
        if (own_work_dir_) {
            std::error_code ignored;
            std::filesystem::remove_all(work_dir_, ignored);
        }
    }

    void run() {
        std::string endpoint = router_.last_endpoint();
        std::printf("anvil rpc server listening on %s\n",
                    endpoint.substr(endpoint.find("//") + 2).c_str());
        std::fflush(stdout);
        while (!stop_requested) {
            std::vector<zmq_pollitem_t> items = {{router_.get(), 0, ZMQ_POLLIN, 0},
                                                 {zap_.socket(), 0, ZMQ_POLLIN, 0},
                                                 {monitor_.get(), 0, ZMQ_POLLIN, 0}};
            std::vector<int> polled;
            for (auto& [id, s] : sessions_) {
                items.push_back({nullptr, s.fd, ZMQ_POLLIN, 0});
                polled.push_back(id);
            }
            int rc = zmq_poll(items.data(), static_cast<int>(items.size()), 1000);
            if (rc < 0) {
                if (errno == EINTR) continue;
                user_error() << "RPC server: poll failed: " << zmq_strerror(errno);
            }
            if (items[1].revents & ZMQ_POLLIN) {
                for (std::string refusal; !(refusal = zap_.handle()).empty();) log(refusal, true);
            }
            if (items[2].revents & ZMQ_POLLIN) log_failed_handshakes();
            if (items[0].revents & ZMQ_POLLIN) serve_clients();
            for (size_t i = 0; i < polled.size(); ++i) {
                if (!(items[i + 3].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) continue;
                auto it = sessions_.find(polled[i]);
                if (it != sessions_.end()) relay_reply(it->second);
            }
            enforce_timeouts();
        }
        log("stopping", false);
    }

private:
    void log(const std::string& line, bool important) {
        if (options_.quiet && !important) return;
        std::time_t now = std::time(nullptr);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
        std::fprintf(stderr, "[anvil rpc server %s] %s\n", stamp, line.c_str());
        std::fflush(stderr);
    }

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

    void send(const std::string& routing_id, const Message& message) {
        std::vector<std::string> frames = message_frames(message);
        frames.insert(frames.begin(), routing_id);
        try {
            send_frames(router_.get(), frames);
        } catch (const Error& e) {
            log(std::string("could not send a reply: ") + e.what(), true);
        }
    }

    // All frames of one request together: two of the largest (e.g. a model's two inputs).
    int64_t max_request_bytes() const {
        return 2 * options_.max_message_bytes + limits_.max_header_bytes;
    }

    void log_failed_handshakes() {
        std::vector<std::string> frames;
        while (receive_frames(monitor_.get(), &frames, 4, 1 << 12, true) == ReceiveStatus::ok) {
            log("a handshake failed (a peer without the auth key, or not an RPC client)", true);
        }
    }

    // Reads every message waiting on the listening socket.
    void serve_clients() {
        for (;;) {
            std::vector<std::string> frames;
            std::string peer;
            ReceiveStatus status = receive_frames(router_.get(), &frames, limits_.max_blobs + 2,
                                                  max_request_bytes(), true, &peer);
            if (status == ReceiveStatus::none) return;
            if (status == ReceiveStatus::too_large && !frames.empty()) {
                log("refused an oversized message from " + peer, true);
                send(frames[0],
                     make_error_reply(
                         Json(), "message too large: at most " + std::to_string(limits_.max_blobs) +
                                     " blobs and " + std::to_string(max_request_bytes()) +
                                     " bytes in all"));
                continue;
            }
            if (frames.size() < 2) {
                log("dropped an empty message from " + peer, true);
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
            // Parsed here only to check it and find its op; the session's process parses it again.
            request = parse_frames(frames, limits_);
            op = header_op(request.header);
        } catch (const Error& e) {
            log("malformed request from " + peer + ": " + e.what(), true);
            send(routing_id,
                 make_error_reply(Json(), std::string("malformed request: ") + e.what()));
            return;
        }
        Json id = request.header.contains("id") ? request.header["id"] : Json();
        Session* session = find_session(routing_id);
        if (op == "session.open") {
            send(routing_id, open_session(routing_id, peer, request));
            return;
        }
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
            write_frames(session->fd, frames);
        } catch (const Error& e) {
            // The session's process is gone; relay_reply reports how when the poll sees it.
        }
        session->pending = true;
        session->pending_id = id;
        session->pending_op = op;
        session->deadline = Clock::now() + seconds(options_.request_timeout_s);
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
        if (static_cast<int>(sessions_.size()) >= options_.max_sessions) {
            log("refused a session from " + peer + ": " + std::to_string(sessions_.size()) +
                    " sessions open (the limit)",
                true);
            return make_error_reply(id,
                                    "the server is serving " + std::to_string(sessions_.size()) +
                                        " sessions, its limit (--max-sessions); try again later");
        }
        Session s;
        s.id = next_session_id_++;
        s.routing_id = routing_id;
        s.peer = peer;
        s.dir = work_dir_ / ("session-" + std::to_string(s.id));
        std::error_code ec;
        std::filesystem::remove_all(s.dir, ec);
        std::filesystem::create_directories(s.dir, ec);
        if (ec)
            return make_error_reply(id,
                                    "the server cannot make a session directory: " + ec.message());
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
            return make_error_reply(
                id, std::string("the server cannot start a session: ") + std::strerror(errno));
        }
        std::fflush(stdout);
        std::fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            return make_error_reply(id, std::string("the server cannot start a session process: ") +
                                            std::strerror(errno));
        }
        if (pid == 0) become_session_process(fds[1], s.dir);
        close(fds[1]);
        s.pid = pid;
        s.fd = fds[0];
        s.last_active = Clock::now();
        log("session " + std::to_string(s.id) + " opened for " + peer + " (process " +
                std::to_string(pid) + ")",
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

    [[noreturn]] void become_session_process(int fd, const std::filesystem::path& dir) {
        // Dies with the server; leaves the server's descriptors (ZeroMQ's above all) alone.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_IGN);  // a Ctrl-C at the server's terminal is the server's to handle
        signal(SIGTERM, SIG_DFL);
        if (fd != 3) {
            dup2(fd, 3);
            close(fd);
        }
        close_range(4, ~0U, 0);
        SessionConfig config{.dir = dir,
                             .max_upload_bytes = options_.max_upload_bytes,
                             .max_tensor_bytes = options_.max_tensor_bytes};
        run_session_process(3, config);
    }

    // The session's process has something to say: its reply, or (EOF) that it died.
    void relay_reply(Session& s) {
        std::vector<std::string> frames;
        bool got = false;
        std::string failure;
        try {
            got = read_frames(s.fd, &frames, 1 << 20, int64_t{1} << 62);
        } catch (const Error& e) {
            failure = e.what();
        }
        if (got && s.pending) {
            s.pending = false;
            s.last_active = Clock::now();
            frames.insert(frames.begin(), s.routing_id);
            try {
                send_frames(router_.get(), frames);
            } catch (const Error& e) {
                log(std::string("could not send a reply: ") + e.what(), true);
            }
            return;
        }
        if (got) return;  // nothing was asked; drop it
        int status = 0;
        kill(s.pid, SIGKILL);
        waitpid(s.pid, &status, 0);
        s.pid = -1;
        std::string why = "the session's process " + describe_exit(status);
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
                     make_error_reply(s.pending_id,
                                      "'" + s.pending_op +
                                          "' ran past the server's request timeout of " +
                                          std::to_string(options_.request_timeout_s) +
                                          " s; the session is closed (connect again)"));
                expired.push_back(id);
            } else if (!s.pending && now - s.last_active > seconds(options_.idle_timeout_s)) {
                expired.push_back(id);
            }
        }
        for (int id : expired) {
            Session& s = sessions_.at(id);
            close_session(s, s.pending ? "request timeout" : "idle timeout");
        }
    }

    void close_session(Session& s, const std::string& why) {
        if (s.pid > 0) {
            kill(s.pid, SIGKILL);
            waitpid(s.pid, nullptr, 0);
        }
        close(s.fd);
        std::error_code ignored;
        std::filesystem::remove_all(s.dir, ignored);
        bool important = why.find("process") != std::string::npos || why.find("timeout") == 0;
        log("session " + std::to_string(s.id) + " of " + s.peer + " closed: " + why, important);
        sessions_.erase(s.id);
    }

    ServerOptions options_;
    MessageLimits limits_;
    ZmqContext context_;
    ZapAuthenticator zap_;
    ZmqSocket router_;
    ZmqSocket monitor_;
    std::filesystem::path work_dir_;
    bool own_work_dir_ = false;
    std::map<int, Session> sessions_;
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
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    signal(SIGPIPE, SIG_IGN);
    stop_requested = 0;
    Server server(options);
    server.run();
}

}  // namespace anvil::rpc
