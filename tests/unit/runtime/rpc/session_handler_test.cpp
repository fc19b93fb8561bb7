// A session's requests answered in process (no server, no fork): uploads and their limits,
// tensors, handles, and the error replies of requests that are wrong in every way a client can
// make them wrong. The handler never throws; each error names the request and what is wrong.
#include "runtime/rpc/session_handler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace anvil::rpc {
namespace {

class SessionHandlerTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("anvil_rpc_session_" + std::to_string(getpid()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        handler_ = std::make_unique<SessionHandler>(
            SessionConfig{.dir = dir_, .max_upload_bytes = 1000, .max_tensor_bytes = 4096});
    }
    void TearDown() override {
        handler_.reset();
        std::filesystem::remove_all(dir_);
    }

    Message send(Json header, std::vector<std::string> blobs = {}) {
        Message m;
        m.header = std::move(header);
        m.header["id"] = next_id_++;
        m.blobs = std::move(blobs);
        Message reply = handler_->handle(m);
        EXPECT_EQ(reply.header["id"], m.header["id"]);
        return reply;
    }
    std::string error(Json header, std::vector<std::string> blobs = {}) {
        Message reply = send(std::move(header), std::move(blobs));
        return reply.header.value("error", std::string("(no error)"));
    }

    std::filesystem::path dir_;
    std::unique_ptr<SessionHandler> handler_;
    int next_id_ = 1;
};

TEST_F(SessionHandlerTest, UploadsGoInChunksWithinTheLimit) {
    EXPECT_EQ(send({{"op", "upload"}, {"name", "m.so"}, {"offset", 0}}, {"abc"}).header["size"], 3);
    EXPECT_EQ(send({{"op", "upload"}, {"name", "m.so"}, {"offset", 3}}, {"def"}).header["size"], 6);
    std::ifstream in(dir_ / "m.so");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "abcdef");
    EXPECT_EQ(error({{"op", "upload"}, {"name", "m.so"}, {"offset", 2}}, {"x"}),
              "upload 'm.so': chunk at offset 2, but the file has 6 bytes (chunks continue at the "
              "end; offset 0 starts anew)");
    // Offset 0 starts the file anew, and the limit counts every file of the session.
    EXPECT_EQ(send({{"op", "upload"}, {"name", "m.so"}, {"offset", 0}}, {std::string(600, 'a')})
                  .header["size"],
              600);
    EXPECT_EQ(
        error({{"op", "upload"}, {"name", "other.so"}, {"offset", 0}}, {std::string(401, 'b')}),
        "upload 'other.so': the session's uploads would take 1001 bytes; the server allows "
        "1000");
    EXPECT_EQ(error({{"op", "upload"}, {"name", "m.so"}, {"offset", 0}}),
              "upload: expected one blob of data, got 0");
}

TEST_F(SessionHandlerTest, DeletedUploadsFreeTheirShareOfTheLimit) {
    send({{"op", "upload"}, {"name", "a.so"}, {"offset", 0}}, {std::string(900, 'a')});
    EXPECT_NE(error({{"op", "upload"}, {"name", "b.so"}, {"offset", 0}}, {std::string(200, 'b')})
                  .find("would take 1100 bytes"),
              std::string::npos);
    EXPECT_FALSE(send({{"op", "delete"}, {"name", "a.so"}}).header.contains("error"));
    EXPECT_FALSE(std::filesystem::exists(dir_ / "a.so"));
    EXPECT_EQ(error({{"op", "load_module"}, {"name", "a.so"}}),
              "load_module: no file 'a.so' was uploaded to this session");
    EXPECT_EQ(send({{"op", "upload"}, {"name", "b.so"}, {"offset", 0}}, {std::string(200, 'b')})
                  .header["size"],
              200);
    EXPECT_NE(error({{"op", "delete"}, {"name", "../b.so"}}).find("is not a plain file name"),
              std::string::npos);
}

TEST_F(SessionHandlerTest, UploadNamesArePlainFileNames) {
    for (std::string name : std::vector<std::string>{"../escape.so", "/etc/passwd", ".hidden", "",
                                                     "a/b", "sp ace", std::string(201, 'x')}) {
        std::string e = error({{"op", "upload"}, {"name", name}, {"offset", 0}}, {"x"});
        EXPECT_NE(e.find("is not a plain file name"), std::string::npos) << name << ": " << e;
    }
    EXPECT_FALSE(std::filesystem::exists(dir_.parent_path() / "escape.so"));
    EXPECT_EQ(error({{"op", "load_module"}, {"name", "never.so"}}),
              "load_module: no file 'never.so' was uploaded to this session");
    send({{"op", "upload"}, {"name", "junk.so"}, {"offset", 0}}, {"not a library"});
    EXPECT_NE(error({{"op", "load_module"}, {"name", "junk.so"}}).find("junk.so"),
              std::string::npos);
}

TEST_F(SessionHandlerTest, TensorsRoundTripAndAreChecked) {
    std::string data(24, '\0');
    for (int i = 0; i < 24; ++i) data[i] = static_cast<char>(i);
    Message made =
        send({{"op", "tensor.from_bytes"}, {"shape", {2, 3}}, {"dtype", "float32"}}, {data});
    ASSERT_FALSE(made.header.contains("error")) << made.header.dump();
    int64_t t = made.header["tensor"];
    Message back = send({{"op", "tensor.copy_to"}, {"tensor", t}});
    EXPECT_EQ(back.blobs, std::vector<std::string>{data});
    EXPECT_EQ(back.header["shape"], Json({2, 3}));
    EXPECT_EQ(back.header["dtype"], "float32");
    EXPECT_EQ(error({{"op", "tensor.copy_from"}, {"tensor", t}}, {"short"}),
              "the data has 5 bytes; the tensor float32[2, 3] takes 24");
    EXPECT_EQ(error({{"op", "tensor.empty"}, {"shape", {2, -1}}, {"dtype", "float32"}}),
              "tensor.empty: negative dimension -1");
    EXPECT_EQ(error({{"op", "tensor.empty"}, {"shape", {1 << 30, 1 << 30}}, {"dtype", "int8"}}),
              "tensor.empty: a tensor over the session's limit of 4096 bytes");
    EXPECT_NE(error({{"op", "tensor.empty"}, {"shape", {2}}, {"dtype", "float31"}}).find("float31"),
              std::string::npos);
    // Handles: freed ones are gone, and each is used only as what it is.
    EXPECT_EQ(error({{"op", "graph_executor.run"}, {"executor", t}}),
              "graph_executor.run: handle " + std::to_string(t) + " is not a graph executor");
    send({{"op", "free"}, {"handle", t}});
    EXPECT_EQ(error({{"op", "tensor.copy_to"}, {"tensor", t}}),
              "tensor.copy_to: no handle " + std::to_string(t) + " in this session");
    EXPECT_FALSE(send({{"op", "free"}, {"handle", t}}).header.contains("error"));
}

TEST_F(SessionHandlerTest, WrongRequestsGetErrorReplies) {
    EXPECT_EQ(error({{"op", "format_disk"}}), "unknown request 'format_disk'");
    EXPECT_EQ(error({{"no_op", 1}}), "request without an 'op'");
    EXPECT_EQ(error({{"op", "call"}, {"module", 99}, {"function", "f"}, {"args", Json::array()}}),
              "call: no handle 99 in this session");
    EXPECT_EQ(error({{"op", "time_evaluator"}, {"executor", 1}, {"number", 0}}),
              "time_evaluator: number and repeat must be positive (repeat at most 10^6) and "
              "min_repeat_ms not negative");
    EXPECT_EQ(error({{"op", "set_num_threads"}, {"threads", -3}}),
              "set_num_threads: -3 is out of range");
    Message info = send({{"op", "session.info"}});
    EXPECT_EQ(info.header["pid"], static_cast<int64_t>(getpid()));
    EXPECT_TRUE(info.header["machine"].is_string());
}

}  // namespace
}  // namespace anvil::rpc
