// RPC messages: frames in and out, the limits a received message is held to, and the checked
// reads of request fields whose errors name the op and the field.
#include "runtime/rpc/message.h"

#include <gtest/gtest.h>

#include "support/error.h"

namespace anvil::rpc {
namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(RpcMessage, FramesRoundTrip) {
    Message m;
    m.header = {{"op", "upload"}, {"id", 7}, {"name", "a.so"}};
    m.blobs = {std::string("\0\1\2", 3), ""};
    Message back = parse_frames(message_frames(m), {});
    EXPECT_EQ(back.header, m.header);
    EXPECT_EQ(back.blobs, m.blobs);
}

TEST(RpcMessage, LimitsAndMalformedHeadersAreRefused) {
    MessageLimits limits{.max_header_bytes = 64, .max_blob_bytes = 8, .max_blobs = 2};
    EXPECT_NE(error_of([&] { parse_frames({}, limits); }).find("empty message"), std::string::npos);
    EXPECT_NE(error_of([&] {
                  parse_frames({"{}", "", "", ""}, limits);
              }).find("3 blobs; at most 2"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  parse_frames({std::string(65, ' ')}, limits);
              }).find("header of 65 bytes; at most 64"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  parse_frames({"{}", std::string(9, 'x')}, limits);
              }).find("blob of 9 bytes; at most 8"),
              std::string::npos);
    for (std::string garbage : {"[1, 2]", "{\"op\": ", "\xff\xfe", "42", ""}) {
        EXPECT_NE(error_of([&] { parse_frames({garbage}, limits); }).find("not a JSON object"),
                  std::string::npos)
            << garbage;
    }
}

TEST(RpcMessage, FieldReadsNameTheOpAndTheField) {
    Json h = {{"op", "tensor.empty"}, {"shape", {1, "x"}}, {"dtype", 3}, {"n", 2.5}};
    EXPECT_EQ(error_of([&] { header_int(h, "tensor"); }),
              "request 'tensor.empty': field 'tensor' is missing");
    EXPECT_EQ(error_of([&] { header_int(h, "n"); }),
              "request 'tensor.empty': field 'n' is not an integer");
    EXPECT_EQ(error_of([&] { header_string(h, "dtype"); }),
              "request 'tensor.empty': field 'dtype' is not a string");
    EXPECT_EQ(error_of([&] { header_int_list(h, "shape"); }),
              "request 'tensor.empty': field 'shape' is not a list of integers");
    EXPECT_EQ(error_of([&] { header_bool_or(h, "n", false); }),
              "request 'tensor.empty': field 'n' is not true or false");
    EXPECT_EQ(error_of([&] { header_op(Json::object()); }), "request without an 'op'");
    EXPECT_EQ(header_int_or(h, "absent", 5), 5);
    EXPECT_EQ(header_number_or(h, "n", 0), 2.5);
}

TEST(RpcMessage, RepliesEchoTheRequestId) {
    Message request;
    request.header = {{"op", "free"}, {"id", 12}};
    EXPECT_EQ(make_reply(request).header["id"], 12);
    Message error = make_error_reply(12, "no");
    EXPECT_EQ(error.header["error"], "no");
    EXPECT_EQ(error.header["id"], 12);
}

}  // namespace
}  // namespace anvil::rpc
