#include "runtime/rpc/message.h"

#include "support/error.h"

namespace anvil::rpc {

std::vector<std::string> message_frames(const Message& message) {
    std::vector<std::string> frames;
    frames.reserve(message.blobs.size() + 1);
    frames.push_back(message.header.dump());
    for (const std::string& blob : message.blobs) frames.push_back(blob);
    return frames;
}

Message parse_frames(std::vector<std::string> frames, const MessageLimits& limits) {
    if (frames.empty()) user_error() << "empty message";
    if (static_cast<int64_t>(frames.size()) - 1 > limits.max_blobs) {
        user_error() << "message has " << frames.size() - 1 << " blobs; at most "
                     << limits.max_blobs << " are accepted";
    }
    if (static_cast<int64_t>(frames[0].size()) > limits.max_header_bytes) {
        user_error() << "message header of " << frames[0].size() << " bytes; at most "
                     << limits.max_header_bytes << " are accepted";
    }
    for (size_t i = 1; i < frames.size(); ++i) {
        if (static_cast<int64_t>(frames[i].size()) > limits.max_blob_bytes) {
            user_error() << "message blob of " << frames[i].size() << " bytes; at most "
                         << limits.max_blob_bytes << " are accepted";
        }
    }
    Message message;
    message.header = Json::parse(frames[0], nullptr, /*allow_exceptions=*/false);
    if (!message.header.is_object()) {
        user_error() << "message header is not a JSON object";
    }
    frames.erase(frames.begin());
    message.blobs = std::move(frames);
    return message;
}

Message make_reply(const Message& request) {
    Message reply;
    reply.header["id"] = request.header.contains("id") ? request.header["id"] : Json();
    return reply;
}

Message make_error_reply(const Json& request_id, const std::string& error) {
    Message reply;
    reply.header["id"] = request_id;
    reply.header["error"] = error;
    return reply;
}

namespace {

std::string op_of(const Json& header) {
    auto it = header.find("op");
    return it != header.end() && it->is_string() ? it->get<std::string>() : "?";
}

const Json& field(const Json& header, const char* key) {
    auto it = header.find(key);
    if (it == header.end()) {
        user_error() << "request '" << op_of(header) << "': field '" << key << "' is missing";
    }
    return *it;
}

[[noreturn]] void wrong_type(const Json& header, const char* key, const char* expected) {
    user_error() << "request '" << op_of(header) << "': field '" << key << "' is not " << expected;
    ANVIL_UNREACHABLE();
}

}  // namespace

int64_t header_int(const Json& header, const char* key) {
    const Json& v = field(header, key);
    if (!v.is_number_integer()) wrong_type(header, key, "an integer");
    return v.get<int64_t>();
}

int64_t header_int_or(const Json& header, const char* key, int64_t fallback) {
    return header.contains(key) ? header_int(header, key) : fallback;
}

double header_number_or(const Json& header, const char* key, double fallback) {
    if (!header.contains(key)) return fallback;
    const Json& v = header[key];
    if (!v.is_number()) wrong_type(header, key, "a number");
    return v.get<double>();
}

bool header_bool_or(const Json& header, const char* key, bool fallback) {
    if (!header.contains(key)) return fallback;
    const Json& v = header[key];
    if (!v.is_boolean()) wrong_type(header, key, "true or false");
    return v.get<bool>();
}

std::string header_string(const Json& header, const char* key) {
    const Json& v = field(header, key);
    if (!v.is_string()) wrong_type(header, key, "a string");
    return v.get<std::string>();
}

const Json& header_array(const Json& header, const char* key) {
    const Json& v = field(header, key);
    if (!v.is_array()) wrong_type(header, key, "a list");
    return v;
}

std::vector<int64_t> header_int_list(const Json& header, const char* key) {
    std::vector<int64_t> values;
    for (const Json& v : header_array(header, key)) {
        if (!v.is_number_integer()) wrong_type(header, key, "a list of integers");
        values.push_back(v.get<int64_t>());
    }
    return values;
}

std::string header_op(const Json& header) {
    auto it = header.find("op");
    if (it == header.end() || !it->is_string()) user_error() << "request without an 'op'";
    return it->get<std::string>();
}

}  // namespace anvil::rpc
