#include "runtime/rpc/listener.h"

#include <signal.h>

#include <cstdio>
#include <ctime>

#include "support/error.h"

namespace anvil::rpc {

namespace {

volatile sig_atomic_t stop_flag = 0;
void on_stop_signal(int) {
    stop_flag = 1;
}

}  // namespace

Listener::Listener(const ZmqContext& context, const std::string& who, const std::string& host,
                   int port, const std::string& auth_key, int64_t max_frame_bytes, bool quiet)
    : who_(who),
      quiet_(quiet),
      zap_(context, auth_key),  // before the listening socket: see configure_serving_end
      router_(context, ZMQ_ROUTER),
      monitor_(context, ZMQ_PAIR) {
    configure_serving_end(router_, auth_key);
    // ZeroMQ checks a frame as it arrives, encrypted: allow for CurveZMQ's box around it.
    router_.set(ZMQ_MAXMSGSIZE, max_frame_bytes + 4096);
    router_.set(ZMQ_HANDSHAKE_IVL, 10000);
    router_.set(ZMQ_TCP_KEEPALIVE, 1);
    // Handshakes that fail before ZAP is asked (a wrong auth key, garbage bytes) show only in the
    // socket's events.
    std::string monitor = "inproc://anvil-rpc-" + who + "-monitor";
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    if (zmq_socket_monitor(router_.get(), monitor.c_str(), events) != 0) {
        user_error() << "RPC " << who << ": cannot monitor its socket: " << zmq_strerror(errno);
    }
    monitor_.connect(monitor);
    bool ipv6 = host.find(':') != std::string::npos;
    if (ipv6) router_.set(ZMQ_IPV6, 1);
    router_.bind("tcp://" + (ipv6 ? "[" + host + "]" : host) + ":" +
                 (port == 0 ? "*" : std::to_string(port)));
}

void Listener::announce() const {
    std::string endpoint = router_.last_endpoint();
    std::printf("anvil rpc %s listening on %s\n", who_.c_str(),
                endpoint.substr(endpoint.find("//") + 2).c_str());
    std::fflush(stdout);
}

std::vector<zmq_pollitem_t> Listener::poll_items() {
    return {{zap_.socket(), 0, ZMQ_POLLIN, 0}, {monitor_.get(), 0, ZMQ_POLLIN, 0}};
}

void Listener::handle(const std::vector<zmq_pollitem_t>& items) {
    if (items[0].revents & ZMQ_POLLIN) {
        for (std::string refusal; !(refusal = zap_.handle()).empty();) log(refusal, true);
    }
    if (items[1].revents & ZMQ_POLLIN) {
        std::vector<std::string> frames;
        while (receive_frames(monitor_.get(), &frames, 4, 1 << 12, true) == ReceiveStatus::ok) {
            log("a handshake failed (a peer without the auth key, or not an RPC client)", true);
        }
    }
}

void Listener::log(const std::string& line, bool important) const {
    if (quiet_ && !important) return;
    std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    std::fprintf(stderr, "[anvil rpc %s %s] %s\n", who_.c_str(), stamp, line.c_str());
    std::fflush(stderr);
}

void install_stop_handlers() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    signal(SIGPIPE, SIG_IGN);
    stop_flag = 0;
}

bool stop_requested() {
    return stop_flag != 0;
}

}  // namespace anvil::rpc
