// RPC messages: what clients, servers, session processes and the tracker exchange.
//
// A message is a JSON object (the header) followed by zero or more binary blobs: tensor bytes, a
// chunk of an uploaded file. On a ZeroMQ socket each is one frame (header first); between a server
// and its session process (frame_stream.h) the same frames go length-prefixed over a socket pair.
//
// Requests carry "op" (what to do) and "id" (echoed by the reply, so a client can drop the reply
// to a request it gave up on); a reply carries "id" and either "error" (a message for the user)
// or the op's results. Every field a peer sends is checked on arrival (header_int, ...): a
// malformed request gets an error reply that names the op and the field, never a crash.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace anvil::rpc {

using Json = nlohmann::json;

struct Message {
    Json header = Json::object();
    std::vector<std::string> blobs;  // raw bytes
};

// What one incoming message may hold; anything larger is refused before it is parsed.
struct MessageLimits {
    int64_t max_header_bytes = int64_t{1} << 20;
    int64_t max_blob_bytes = int64_t{256} << 20;
    int max_blobs = 64;
};

// The frames of `message`: its header as JSON text, then its blobs.
std::vector<std::string> message_frames(const Message& message);
// Parses received frames; UserError saying what is wrong (no frames, a header that is not a JSON
// object, too many or too large frames).
Message parse_frames(std::vector<std::string> frames, const MessageLimits& limits);

// A reply to `request` ("id" copied).
Message make_reply(const Message& request);
Message make_error_reply(const Json& request_id, const std::string& error);

// Checked reads of request fields; UserError "request 'OP': field 'KEY' ..." when the field is
// missing or of another type.
int64_t header_int(const Json& header, const char* key);
int64_t header_int_or(const Json& header, const char* key, int64_t fallback);
double header_number_or(const Json& header, const char* key, double fallback);
bool header_bool_or(const Json& header, const char* key, bool fallback);
std::string header_string(const Json& header, const char* key);
const Json& header_array(const Json& header, const char* key);
std::vector<int64_t> header_int_list(const Json& header, const char* key);
// The request's "op" (UserError when missing).
std::string header_op(const Json& header);

}  // namespace anvil::rpc
