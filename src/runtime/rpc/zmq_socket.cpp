#include "runtime/rpc/zmq_socket.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "support/error.h"

namespace anvil::rpc {

ZmqContext::ZmqContext() : ctx_(zmq_ctx_new()) {
    if (ctx_ == nullptr)
        user_error() << "RPC: cannot create a ZeroMQ context: " << zmq_strerror(errno);
}

ZmqContext::~ZmqContext() {
    zmq_ctx_term(ctx_);
}

ZmqSocket::ZmqSocket(const ZmqContext& context, int type)
    : socket_(zmq_socket(context.get(), type)) {
    if (socket_ == nullptr) user_error() << "RPC: cannot create a socket: " << zmq_strerror(errno);
    // Unsent messages never hold up closing (and with it the context's termination).
    set(ZMQ_LINGER, 0);
}

ZmqSocket::~ZmqSocket() {
    zmq_close(socket_);
}

void ZmqSocket::set(int option, int value) {
    set(option, &value, sizeof value);
}
void ZmqSocket::set(int option, int64_t value) {
    set(option, &value, sizeof value);
}

void ZmqSocket::set(int option, const void* data, size_t size) {
    if (zmq_setsockopt(socket_, option, data, size) != 0) {
        user_error() << "RPC: socket option " << option << ": " << zmq_strerror(errno);
    }
}

void ZmqSocket::bind(const std::string& endpoint) {
    if (zmq_bind(socket_, endpoint.c_str()) != 0) {
        user_error() << "RPC: cannot listen on " << endpoint << ": " << zmq_strerror(errno);
    }
}

void ZmqSocket::connect(const std::string& endpoint) {
    if (zmq_connect(socket_, endpoint.c_str()) != 0) {
        user_error() << "RPC: cannot connect to " << endpoint << ": " << zmq_strerror(errno);
    }
}

std::string ZmqSocket::last_endpoint() const {
    char buffer[256] = {};
    size_t size = sizeof buffer;
    if (zmq_getsockopt(socket_, ZMQ_LAST_ENDPOINT, buffer, &size) != 0) return "";
    return buffer;
}

std::string tcp_endpoint(const std::string& host, int port) {
    bool ipv6 = host.find(':') != std::string::npos;
    return "tcp://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& option) {
    size_t colon = text.rfind(':');
    std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    int port = -1;
    if (colon != std::string::npos) {
        const char* first = text.data() + colon + 1;
        const char* last = text.data() + text.size();
        auto [end, ec] = std::from_chars(first, last, port);
        if (ec != std::errc() || end != last) port = -1;
    }
    if (host.empty() || port < 1 || port > 65535) {
        user_error() << option << ": expected HOST:PORT (e.g. 127.0.0.1:9190), got '" << text
                     << "'";
    }
    return {host, port};
}

bool send_frames(void* socket, const std::vector<std::string>& frames, bool dont_wait) {
    for (size_t i = 0; i < frames.size(); ++i) {
        int flags = (i + 1 < frames.size() ? ZMQ_SNDMORE : 0) | (dont_wait ? ZMQ_DONTWAIT : 0);
        while (zmq_send(socket, frames[i].data(), frames[i].size(), flags) < 0) {
            if (errno == EINTR) continue;
            // Once the first frame is in, the rest of the message goes too.
            if (errno == EAGAIN && i == 0) return false;
            user_error() << "RPC: sending failed: " << zmq_strerror(errno);
        }
    }
    return true;
}

ReceiveStatus receive_frames(void* socket, std::vector<std::string>* frames, int max_frames,
                             int64_t max_bytes, bool dont_wait, std::string* peer_address) {
    frames->clear();
    if (peer_address != nullptr) peer_address->clear();
    bool too_large = false;
    int64_t total = 0;
    for (bool first = true;; first = false) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        // Once the first part is in, the rest of the message is already here: block for it.
        int rc = zmq_msg_recv(&part, socket, first && dont_wait ? ZMQ_DONTWAIT : 0);
        if (rc < 0) {
            zmq_msg_close(&part);
            if (first && (errno == EAGAIN || errno == EINTR)) return ReceiveStatus::none;
            if (errno == EINTR) continue;
            user_error() << "RPC: receiving failed: " << zmq_strerror(errno);
        }
        if (peer_address != nullptr) {
            // A ROUTER's routing-id part carries no metadata; the parts after it do.
            const char* address = zmq_msg_gets(&part, "Peer-Address");
            if (address != nullptr) peer_address->assign(address);
        }
        size_t size = zmq_msg_size(&part);
        total += static_cast<int64_t>(size);
        if (static_cast<int>(frames->size()) >= max_frames || total > max_bytes) too_large = true;
        if (!too_large) {
            frames->emplace_back(
                std::string_view(static_cast<const char*>(zmq_msg_data(&part)), size));
        }
        bool more = zmq_msg_more(&part) != 0;
        zmq_msg_close(&part);
        if (!more) break;
    }
    if (too_large) {
        frames->resize(std::min<size_t>(frames->size(), 1));
        return ReceiveStatus::too_large;
    }
    return ReceiveStatus::ok;
}

void configure_serving_end(ZmqSocket& socket, const std::string& auth_key) {
    CurveKeyPair own = derive_key_pair(auth_key, PeerRole::serving);
    socket.set(ZMQ_CURVE_SERVER, 1);
    socket.set(ZMQ_CURVE_SECRETKEY, own.secret_key.data(), own.secret_key.size());
    socket.set(ZMQ_CURVE_PUBLICKEY, own.public_key.data(), own.public_key.size());
    // ZAP decides who gets in: libzmq asks the handler bound in the socket's context
    // (ZapAuthenticator, made before any serving socket) about every CURVE handshake. Without a
    // handler CURVE would let in any client key, so the server binds one first.
    socket.set(ZMQ_ZAP_DOMAIN, std::string("anvil"));
}

void configure_connecting_end(ZmqSocket& socket, const std::string& auth_key) {
    CurveKeyPair own = derive_key_pair(auth_key, PeerRole::connecting);
    CurveKeyPair server = derive_key_pair(auth_key, PeerRole::serving);
    socket.set(ZMQ_CURVE_SERVERKEY, server.public_key.data(), server.public_key.size());
    socket.set(ZMQ_CURVE_SECRETKEY, own.secret_key.data(), own.secret_key.size());
    socket.set(ZMQ_CURVE_PUBLICKEY, own.public_key.data(), own.public_key.size());
}

ZapAuthenticator::ZapAuthenticator(const ZmqContext& context, const std::string& auth_key)
    : socket_(context, ZMQ_REP), allowed_(derive_key_pair(auth_key, PeerRole::connecting)) {
    socket_.bind("inproc://zeromq.zap.01");
}

std::string ZapAuthenticator::handle() {
    std::vector<std::string> frames;
    if (receive_frames(socket_.get(), &frames, 16, 1 << 16, true) != ReceiveStatus::ok) return "";
    // version, request id, domain, address, routing id, mechanism, credentials...
    if (frames.size() < 6) {
        send_frames(socket_.get(), {"1.0", "", "500", "malformed ZAP request", "", ""});
        return "malformed ZAP request";
    }
    const std::string& address = frames[3];
    const std::string& mechanism = frames[5];
    bool accepted = mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32 &&
                    std::memcmp(frames[6].data(), allowed_.public_key.data(), 32) == 0;
    send_frames(socket_.get(),
                {"1.0", frames[1], accepted ? "200" : "400", accepted ? "OK" : "not the auth key",
                 accepted ? "client" : "", ""});
    if (accepted) return "";
    return "refused a connection from " + address + ": " +
           (mechanism == "CURVE" ? "its key is not the auth key's"
                                 : "no authentication (" + mechanism + ")");
}

}  // namespace anvil::rpc
