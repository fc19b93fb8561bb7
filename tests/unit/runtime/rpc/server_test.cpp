// The RPC server as a process of its own, reached by the client over loopback: models uploaded,
// run and timed remotely give what they give locally; and everything a peer can do wrong is
// refused without costing anyone else their session.
#include "runtime/rpc/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <zmq.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "runtime/graph_executor.h"
#include "runtime/module.h"
#include "runtime/rpc/client.h"
#include "runtime/rpc/zmq_socket.h"
#include "runtime/vm.h"
#include "server_process.h"

namespace anvil::rpc {
namespace {

using testing::error_of;
using testing::kTestKey;
using testing::ServerProcess;

runtime::NDArray ramp(std::vector<int64_t> shape, float scale) {
    runtime::NDArray t = runtime::NDArray::empty(shape, {kDLFloat, 32, 1});
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = scale * static_cast<float>(i % 23 - 11);
    return t;
}

void expect_same(const runtime::NDArray& a, const runtime::NDArray& b) {
    ASSERT_EQ(a.str(), b.str());
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

std::shared_ptr<RpcSession> connect(const ServerProcess& server,
                                    const std::string& key = kTestKey) {
    return RpcSession::connect("127.0.0.1", server.port(), key);
}

const std::string& exp_model() {
    static const std::string path = testing::compile_model(
        "exp", "def @main(%x: Tensor[(4, 16), float32]) {\n  add(exp(%x), %x)\n}\n");
    return path;
}

TEST(RpcServer, RunsAModelRemotelyAsItRunsLocally) {
    ServerProcess server;
    runtime::NDArray x = ramp({4, 16}, 0.125f);
    runtime::GraphExecutor local = runtime::GraphExecutor::load(exp_model());
    std::vector<runtime::NDArray> expected = local.run_with({x});

    auto remote = connect(server);
    remote->upload(exp_model(), "exp.so");
    RemoteModule lib = RemoteModule::load(remote, "exp.so");
    EXPECT_EQ(lib.executor_kind(), "graph");
    RemoteGraphExecutor ex = RemoteGraphExecutor::create(lib);
    ASSERT_EQ(ex.inputs().size(), 1u);
    EXPECT_EQ(ex.inputs()[0].name, "x");
    EXPECT_EQ(ex.inputs()[0].shape, (std::vector<int64_t>{4, 16}));
    std::vector<runtime::NDArray> got = ex.run_with({x});
    ASSERT_EQ(got.size(), 1u);
    expect_same(got[0], expected[0]);

    // TVM's way: remote tensors, set_input, run, get_output.
    RemoteTensor rx = RemoteTensor::from(remote, ramp({4, 16}, -0.5f));
    ex.set_input("x", rx);
    ex.run();
    expect_same(ex.get_output(0).to_local(), local.run_with({ramp({4, 16}, -0.5f)})[0]);

    std::vector<double> times = ex.time_evaluator(3, 4, 0);
    ASSERT_EQ(times.size(), 4u);
    for (double t : times) EXPECT_GT(t, 0);
    // min_repeat_ms raises the number of runs until one measurement takes that long.
    std::vector<double> long_runs = ex.time_evaluator(1, 1, 20);
    ASSERT_EQ(long_runs.size(), 1u);
    EXPECT_FALSE(ex.profile(2, 1).empty());

    EXPECT_NE(error_of([&] {
                  ex.run_with({ramp({4, 15}, 1)});
              }).find("remote 127.0.0.1:"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  ex.get_output(3);
              }).find("graph_executor.get_output: output 3 is out of range (the model has 1)"),
              std::string::npos);
}

TEST(RpcServer, CallsKernelsOnRemoteTensors) {
    ServerProcess server;
    runtime::Module local = runtime::load_module(exp_model());
    std::string kernel;
    for (const std::string& name : local.function_names()) {
        if (name.rfind("__", 0) != 0) kernel = name;
    }
    ASSERT_FALSE(kernel.empty());
    runtime::NDArray x = ramp({4, 16}, 0.25f),
                     y = runtime::NDArray::empty({4, 16}, {kDLFloat, 32, 1});
    local.get_function(kernel)(x, y);

    auto remote = connect(server);
    remote->upload(exp_model(), "exp.so");
    RemoteModule lib = RemoteModule::load(remote, "exp.so");
    RemoteTensor rx = RemoteTensor::from(remote, x);
    RemoteTensor ry = RemoteTensor::empty(remote, {4, 16}, {kDLFloat, 32, 1});
    lib.call(kernel, {RemoteArg::tensor(rx), RemoteArg::tensor(ry)});
    expect_same(ry.to_local(), y);
    EXPECT_EQ(
        lib.time_evaluator(kernel, {RemoteArg::tensor(rx), RemoteArg::tensor(ry)}, 5, 2, 0).size(),
        2u);
    // The kernel checks its arguments on the device; its message comes back.
    RemoteTensor wrong = RemoteTensor::empty(remote, {3, 16}, {kDLFloat, 32, 1});
    std::string e = error_of([&] {
        lib.call(kernel, {RemoteArg::tensor(rx), RemoteArg::tensor(wrong)});
    });
    EXPECT_NE(e.find("remote 127.0.0.1:"), std::string::npos) << e;
    EXPECT_NE(e.find("[3, 16]"), std::string::npos) << e;
    EXPECT_NE(error_of([&] {
                  lib.call("no_such_kernel", {});
              }).find("call: the module has no function 'no_such_kernel'"),
              std::string::npos);
}

TEST(RpcServer, RunsVMModelsWithShapesGivenPerRun) {
    std::string so =
        testing::compile_model("dyn", "def @main(%x: Tensor[(n, 16), float32]) {\n  exp(%x)\n}\n");
    ASSERT_TRUE(runtime::VirtualMachine::is_vm_artifact(so));
    ServerProcess server;
    auto remote = connect(server);
    remote->upload(so);
    RemoteModule lib = RemoteModule::load(remote, std::filesystem::path(so).filename());
    EXPECT_EQ(lib.executor_kind(), "vm");
    RemoteGraphExecutor ex = RemoteGraphExecutor::create(lib);
    EXPECT_TRUE(ex.is_vm());
    runtime::VirtualMachine local = runtime::VirtualMachine::load(so);
    for (int64_t n : {3, 7}) {
        runtime::NDArray x = ramp({n, 16}, 0.1f);
        expect_same(ex.run_with({x})[0], local.run({x})[0]);
    }
    EXPECT_EQ(ex.time_evaluator(2, 2, 0).size(), 2u);
}

TEST(RpcServer, AWrongKeyIsRefusedInTheHandshake) {
    ServerProcess server;
    std::string e = error_of([&] { connect(server, "not-the-key-at-all-0000"); });
    EXPECT_NE(e.find("the handshake with 127.0.0.1:" + std::to_string(server.port()) +
                     " failed: the auth key is not the server's"),
              std::string::npos)
        << e;
    EXPECT_TRUE(server.wait_for_log("a handshake failed")) << server.log();
    EXPECT_EQ(server.log_count("opened"), 0);
    EXPECT_NO_THROW(connect(server));
}

// Sends raw bytes to the server's port; returns what came back within `wait_ms`.
std::string raw_exchange(int port, const std::string& bytes, int wait_ms) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string got;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        (void)!write(fd, bytes.data(), bytes.size());
        pollfd p{fd, POLLIN, 0};
        char buf[4096];
        while (poll(&p, 1, wait_ms) > 0) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n <= 0) break;
            got.append(buf, static_cast<size_t>(n));
        }
    }
    close(fd);
    return got;
}

TEST(RpcServer, PeersWithoutTheKeyGetNothing) {
    ServerProcess server;
    // A ZeroMQ peer with no authentication at all.
    {
        ZmqContext context;
        ZmqSocket dealer(context, ZMQ_DEALER);
        dealer.connect(tcp_endpoint("127.0.0.1", server.port()));
        send_frames(dealer.get(), {R"({"op": "session.open", "id": 1})"});
        zmq_pollitem_t item{dealer.get(), 0, ZMQ_POLLIN, 0};
        EXPECT_EQ(zmq_poll(&item, 1, 1000), 0);
    }
    // Garbage bytes, and a plausible ZeroMQ greeting followed by garbage.
    std::string garbage;
    for (int i = 0; i < 5000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251));
    raw_exchange(server.port(), garbage, 200);
    std::string greeting(
        "\xff\0\0\0\0\0\0\0\x01\x7f\x03\x01"
        "CURVE",
        17);
    greeting.resize(64, '\0');
    raw_exchange(server.port(), greeting + garbage, 200);
    EXPECT_EQ(server.log_count("opened"), 0) << server.log();
    EXPECT_TRUE(server.running());
    auto remote = connect(server);
    remote->upload_bytes("abc", "still_serving.bin");
}

// A TCP relay between a client and the server that records what the client sends.
class RecordingRelay {
public:
    explicit RecordingRelay(int server_port) : server_port_(server_port) {
        listener_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        socklen_t len = sizeof addr;
        getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        listen(listener_, 1);
        thread_ = std::thread([this] { relay(); });
    }
    ~RecordingRelay() {
        stop_ = true;
        thread_.join();
        close(listener_);
    }
    int port() const { return port_; }
    std::string recorded() {
        std::lock_guard lock(mutex_);
        return recorded_;
    }

private:
    void relay() {
        pollfd accept_poll{listener_, POLLIN, 0};
        while (!stop_ && poll(&accept_poll, 1, 50) == 0) {
        }
        if (stop_) return;
        int client = accept(listener_, nullptr, nullptr);
        int upstream = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(server_port_));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
        char buf[65536];
        while (!stop_) {
            if (poll(fds, 2, 50) <= 0) continue;
            if (fds[0].revents & (POLLIN | POLLHUP)) {
                ssize_t n = read(client, buf, sizeof buf);
                if (n <= 0) break;
                {
                    std::lock_guard lock(mutex_);
                    recorded_.append(buf, static_cast<size_t>(n));
                }
                (void)!write(upstream, buf, static_cast<size_t>(n));
            }
            if (fds[1].revents & (POLLIN | POLLHUP)) {
                ssize_t n = read(upstream, buf, sizeof buf);
                if (n <= 0) break;
                (void)!write(client, buf, static_cast<size_t>(n));
            }
        }
        close(client);
        close(upstream);
    }

    int server_port_, port_ = 0, listener_ = -1;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::string recorded_;
    std::thread thread_;
};

TEST(RpcServer, ReplayedTrafficIsNotServed) {
    ServerProcess server;
    std::string recorded;
    {
        RecordingRelay relay(server.port());
        auto remote = RpcSession::connect("127.0.0.1", relay.port(), kTestKey);
        remote->upload_bytes("payload", "replayed.bin");
        remote.reset();  // closes the session
        ASSERT_TRUE(server.wait_for_log("closed", 1));
        recorded = relay.recorded();
    }
    ASSERT_GT(recorded.size(), 200u);
    EXPECT_EQ(server.log_count("opened"), 1);
    // The same bytes again, on a new connection: the handshake's short-term keys and cookie are
    // stale, so nothing of it is served.
    raw_exchange(server.port(), recorded, 500);
    EXPECT_EQ(server.log_count("opened"), 1) << server.log();
    EXPECT_TRUE(server.running());
}

TEST(RpcServer, OversizedAndMalformedMessagesAreRefusedAndServingGoesOn) {
    ServerProcess server({"--max-message-mb", "1"});
    {
        auto remote = connect(server);
        EXPECT_EQ(remote->limits()["max_message_bytes"], 1 << 20);
        // Uploads go in chunks within the limit.
        remote->upload_bytes(std::string(3 << 20, 'u'), "big.bin");
        // One frame over the limit: ZeroMQ drops the connection.
        Message huge;
        huge.header["op"] = "tensor.from_bytes";
        huge.header["shape"] = {2 << 20};
        huge.header["dtype"] = "int8";
        huge.blobs.push_back(std::string(2 << 20, 'x'));
        std::string e = error_of([&] { remote->request(huge); });
        EXPECT_NE(e.find("lost"), std::string::npos) << e;
    }
    {
        auto remote = connect(server);
        Message many;
        many.header["op"] = "session.info";
        many.blobs.assign(100, "x");
        EXPECT_NE(error_of([&] { remote->request(many); }).find("message too large"),
                  std::string::npos);
        EXPECT_TRUE(server.wait_for_log("refused an oversized message"));
        // An authenticated peer sending a header that is not JSON.
        ZmqContext context;
        ZmqSocket dealer(context, ZMQ_DEALER);
        configure_connecting_end(dealer, kTestKey);
        dealer.connect(tcp_endpoint("127.0.0.1", server.port()));
        send_frames(dealer.get(), {"{not json"});
        std::vector<std::string> reply;
        zmq_pollitem_t item{dealer.get(), 0, ZMQ_POLLIN, 0};
        ASSERT_EQ(zmq_poll(&item, 1, 5000), 1);
        ASSERT_EQ(receive_frames(dealer.get(), &reply, 4, 1 << 16, false), ReceiveStatus::ok);
        EXPECT_NE(reply[0].find("malformed request: message header is not a JSON object"),
                  std::string::npos)
            << reply[0];
        EXPECT_TRUE(server.wait_for_log("malformed request from 127.0.0.1"));
        remote->upload_bytes("abc", "after.bin");
    }
    EXPECT_TRUE(server.running());
}

TEST(RpcServer, ACrashingModelCostsItsSessionOnly) {
    ServerProcess server;
    auto bystander = connect(server);
    bystander->upload(exp_model(), "exp.so");
    RemoteGraphExecutor healthy =
        RemoteGraphExecutor::create(RemoteModule::load(bystander, "exp.so"));

    auto remote = connect(server);
    remote->upload(ANVIL_MISBEHAVING_MODULE, "bad.so");
    RemoteModule bad = RemoteModule::load(remote, "bad.so");
    std::string e = error_of([&] { bad.call("crash", {}); });
    // Signal 11 (Segmentation fault); under AddressSanitizer, which reports the fault and
    // aborts, 6 (Aborted).
    EXPECT_NE(e.find("the session's process was killed by signal "), std::string::npos) << e;
    EXPECT_NE(e.find(") while serving 'call'; the session is closed"), std::string::npos) << e;
    EXPECT_NE(error_of([&] { remote->upload_bytes("x", "y.bin"); }).find("no session is open"),
              std::string::npos);
    // The other session, and new ones, are served as before.
    EXPECT_EQ(healthy.run_with({ramp({4, 16}, 1)}).size(), 1u);
    EXPECT_NO_THROW(connect(server)->upload_bytes("x", "y.bin"));
}

TEST(RpcServer, ARequestPastTheTimeoutEndsItsSession) {
    ServerProcess server({"--timeout", "1"});
    auto remote = connect(server);
    remote->upload(ANVIL_MISBEHAVING_MODULE, "bad.so");
    RemoteModule bad = RemoteModule::load(remote, "bad.so");
    auto start = std::chrono::steady_clock::now();
    std::string e = error_of([&] { bad.call("hang", {}); });
    EXPECT_NE(e.find("'call' ran past its time limit; the session is closed"), std::string::npos)
        << e;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_NO_THROW(connect(server)->upload_bytes("x", "y.bin"));
}

// A request may ask for a shorter limit than the server's (a tuner's per-candidate timeout).
TEST(RpcServer, ARequestMayAskForAShorterTimeLimit) {
    ServerProcess server;  // the default limit: 600 s
    auto remote = connect(server);
    remote->upload(ANVIL_MISBEHAVING_MODULE, "bad.so");
    RemoteModule bad = RemoteModule::load(remote, "bad.so");
    Message hang;
    hang.header = {{"op", "call"},
                   {"module", bad.handle().id()},
                   {"function", "hang"},
                   {"args", Json::array()}};
    auto start = std::chrono::steady_clock::now();
    std::string e = error_of([&] { remote->request(hang, /*timeout_s=*/1); });
    EXPECT_NE(e.find("'call' ran past its time limit"), std::string::npos) << e;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RpcServer, SessionsAreLimitedIsolatedAndClosedWhenIdle) {
    ServerProcess server({"--max-sessions", "1", "--idle-timeout", "1"});
    {
        auto first = connect(server);
        first->upload_bytes("x", "mine.bin");
        std::string e = error_of([&] { connect(server); });
        EXPECT_NE(e.find("the server is serving 1 sessions, its limit (--max-sessions)"),
                  std::string::npos)
            << e;
    }
    auto second = connect(server);
    EXPECT_EQ(error_of([&] { RemoteModule::load(second, "mine.bin"); }),
              "remote 127.0.0.1:" + std::to_string(server.port()) +
                  ": load_module: no file 'mine.bin' was uploaded to this session");
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    EXPECT_NE(error_of([&] { second->upload_bytes("x", "late.bin"); }).find("no session is open"),
              std::string::npos);
}

TEST(RpcServer, ConnectionFailuresSayWhatFailed) {
    int port;
    {
        ServerProcess server;
        port = server.port();
        // A session whose server goes away fails at once, and closes without waiting.
        auto remote = connect(server);
        server.stop();
        auto start = std::chrono::steady_clock::now();
        std::string e = error_of([&] { remote->upload_bytes("x", "gone.bin"); });
        EXPECT_NE(e.find("lost"), std::string::npos) << e;
        remote.reset();
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
    }
    std::string e = error_of([&] { RpcSession::connect("127.0.0.1", port, kTestKey); });
    EXPECT_NE(e.find("cannot connect to 127.0.0.1:" + std::to_string(port) +
                     " (refused; is the server running?)"),
              std::string::npos)
        << e;
    EXPECT_EQ(error_of([&] { RpcSession::connect("127.0.0.1", port, ""); }),
              "RPC: an auth key is needed to connect");
    EXPECT_EQ(error_of([&] { parse_host_port("localhost", "--rpc"); }),
              "--rpc: expected HOST:PORT (e.g. 127.0.0.1:9190), got 'localhost'");
    EXPECT_EQ(error_of([&] { parse_host_port("h:70000", "--tracker"); }),
              "--tracker: expected HOST:PORT (e.g. 127.0.0.1:9190), got 'h:70000'");
}

}  // namespace
}  // namespace anvil::rpc
