// Frames between a server and its session process: whole messages through, the end of the
// stream told from a truncated message, and the size limits.
#include "runtime/rpc/frame_stream.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "support/error.h"

namespace anvil::rpc {
namespace {

struct SocketPair {
    int fds[2];
    SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
    ~SocketPair() {
        close(fds[0]);
        close(fds[1]);
    }
};

TEST(RpcFrameStream, MessagesGoThroughWhole) {
    SocketPair p;
    std::vector<std::string> sent = {"{\"op\":\"x\"}", std::string(3 << 20, 'a'), ""};
    // Larger than the socket buffer: the writer blocks until the reader drains it.
    std::thread writer([&] {
        write_frames(p.fds[0], sent);
        write_frames(p.fds[0], {"second"});
    });
    std::vector<std::string> got;
    ASSERT_TRUE(read_frames(p.fds[1], &got, 8, int64_t{1} << 30));
    EXPECT_EQ(got, sent);
    ASSERT_TRUE(read_frames(p.fds[1], &got, 8, int64_t{1} << 30));
    EXPECT_EQ(got, std::vector<std::string>{"second"});
    writer.join();
    close(p.fds[0]);
    p.fds[0] = -1;
    EXPECT_FALSE(read_frames(p.fds[1], &got, 8, 1 << 20));  // the end of the stream
}

TEST(RpcFrameStream, TruncatedAndOversizedMessagesAreErrors) {
    {
        SocketPair p;
        uint32_t count = 1;
        uint64_t size = 100;
        ASSERT_EQ(write(p.fds[0], &count, 4), 4);
        ASSERT_EQ(write(p.fds[0], &size, 8), 8);
        ASSERT_EQ(write(p.fds[0], "abc", 3), 3);
        close(p.fds[0]);
        p.fds[0] = -1;
        std::vector<std::string> got;
        EXPECT_THROW(read_frames(p.fds[1], &got, 8, 1 << 20), UserError);
    }
    {
        SocketPair p;
        write_frames(p.fds[0], {"a", "b", "c"});
        std::vector<std::string> got;
        EXPECT_THROW(read_frames(p.fds[1], &got, 2, 1 << 20), UserError);
    }
    {
        SocketPair p;
        write_frames(p.fds[0], {std::string(100, 'x')});
        std::vector<std::string> got;
        EXPECT_THROW(read_frames(p.fds[1], &got, 2, 99), UserError);
    }
}

TEST(RpcFrameStream, WritingToAClosedPeerIsAnError) {
    SocketPair p;
    close(p.fds[1]);
    p.fds[1] = -1;
    EXPECT_THROW(write_frames(p.fds[0], {std::string(1 << 20, 'x')}), UserError);
}

}  // namespace
}  // namespace anvil::rpc
