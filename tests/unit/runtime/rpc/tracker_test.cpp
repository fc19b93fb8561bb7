// The tracker with servers registered under device keys, over loopback: clients get free devices
// in turn, wait in the queue by priority while all are busy, and are told at once when no device
// of their key exists; servers that leave are dropped; nobody without the key gets in.
#include "runtime/rpc/tracker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>

#include "runtime/rpc/client.h"
#include "server_process.h"

namespace anvil::rpc {
namespace {

using testing::error_of;
using testing::kTestKey;
using testing::ServerProcess;
using testing::Service;

struct Pool {
    ServerProcess tracker{Service::tracker, {}};
    std::vector<std::unique_ptr<ServerProcess>> servers;

    std::string address() const { return "127.0.0.1:" + std::to_string(tracker.port()); }
    void add_server(const std::string& key, int max_sessions = 1) {
        servers.push_back(std::make_unique<ServerProcess>(
            std::vector<std::string>{"--tracker", address(), "--device-key", key, "--max-sessions",
                                     std::to_string(max_sessions)}));
    }
    TrackerClient client(const std::string& key = kTestKey) const {
        return TrackerClient("127.0.0.1", tracker.port(), key);
    }
    // Waits until the tracker lists `devices` devices with `free` free sessions in all.
    bool wait_for(size_t devices, int free) const {
        TrackerClient c = client();
        for (int i = 0; i < 200; ++i) {
            Json status = c.status();
            int total = 0;
            for (const Json& d : status["devices"]) total += d["free"].get<int>();
            if (status["devices"].size() == devices && total == free) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
};

TEST(RpcTracker, ClientsGetFreeDevicesAndWaitForBusyOnes) {
    Pool pool;
    pool.add_server("board");
    pool.add_server("board");
    ASSERT_TRUE(pool.wait_for(2, 2)) << pool.tracker.log();
    TrackerClient client = pool.client();
    auto first = client.request("board");
    auto second = client.request("board");
    EXPECT_NE(first->address(), second->address());  // one session per server (--max-sessions 1)
    first->upload_bytes("x", "a.bin");
    second->upload_bytes("x", "b.bin");
    ASSERT_TRUE(pool.wait_for(2, 0));

    // A third client waits in the queue until a session closes.
    auto third = std::async(std::launch::async, [&] { return pool.client().request("board"); });
    EXPECT_EQ(third.wait_for(std::chrono::milliseconds(800)), std::future_status::timeout);
    Json status = client.status();
    EXPECT_EQ(status["queues"]["board"], 1) << status.dump();
    std::string freed = first->address();
    first.reset();
    auto session = third.get();
    EXPECT_EQ(session->address(), freed);
    session->upload_bytes("x", "c.bin");
}

TEST(RpcTracker, HigherPriorityIsServedFirst) {
    Pool pool;
    pool.add_server("board");
    ASSERT_TRUE(pool.wait_for(1, 1));
    auto busy = pool.client().request("board");
    ASSERT_TRUE(pool.wait_for(1, 0));
    std::atomic<int> order{0};
    std::atomic<int> low_turn{0}, high_turn{0};
    auto low = std::async(std::launch::async, [&] {
        auto s = pool.client().request("board", /*priority=*/1);
        low_turn = ++order;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto high = std::async(std::launch::async, [&] {
        auto s = pool.client().request("board", /*priority=*/5);
        high_turn = ++order;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    busy.reset();
    high.get();
    low.get();
    EXPECT_EQ(high_turn, 1);
    EXPECT_EQ(low_turn, 2);
}

TEST(RpcTracker, UnknownKeysAndLongWaitsAreClearErrors) {
    Pool pool;
    pool.add_server("board");
    ASSERT_TRUE(pool.wait_for(1, 1));
    TrackerClient client = pool.client();
    EXPECT_EQ(error_of([&] { client.request("gpu"); }),
              "remote " + pool.address() +
                  ": no device of key 'gpu' is registered with the tracker; it has 'board'");
    auto busy = client.request("board");
    ASSERT_TRUE(pool.wait_for(1, 0));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { client.request("board", 1, /*wait_s=*/1); }),
              "remote " + pool.address() + ": no device of key 'board' became free in time");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    // A ticket the tracker did not give opens nothing.
    EXPECT_NE(error_of([&] {
                  RpcSession::connect("127.0.0.1", pool.servers[0]->port(), kTestKey, {},
                                      "forged-ticket");
              }).find("the tracker's ticket is unknown or expired"),
              std::string::npos);
}

TEST(RpcTracker, ServersThatLeaveAreDropped) {
    Pool pool;
    pool.add_server("board");
    pool.add_server("phone");
    ASSERT_TRUE(pool.wait_for(2, 2));
    auto busy = pool.client().request("phone");
    auto waiting = std::async(std::launch::async, [&] { return pool.client().request("phone"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    busy.reset();
    pool.servers[1]->stop();
    // The queued client either got the device before it left, or is told it is gone.
    std::string e = error_of([&] { waiting.get(); });
    if (e != "(no error)") {
        EXPECT_NE(e.find("no device of key 'phone'"), std::string::npos) << e;
    }
    ASSERT_TRUE(pool.wait_for(1, 1)) << pool.client().status().dump();
    EXPECT_EQ(pool.client().status()["devices"][0]["device_key"], "board");
}

TEST(RpcTracker, NobodyWithoutTheKeyGetsIn) {
    Pool pool;
    EXPECT_NE(error_of([&] {
                  pool.client("wrong-key-for-this-tracker");
              }).find("failed: the auth key is not the server's"),
              std::string::npos);
    ServerProcess stranger(Service::server, {"--tracker", pool.address(), "--device-key", "board"},
                           "another-key-entirely-0000");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_TRUE(pool.client().status()["devices"].empty());
    EXPECT_TRUE(pool.tracker.wait_for_log("a handshake failed"));
}

}  // namespace
}  // namespace anvil::rpc
