// `anvil rpc server` and `anvil run --rpc`: ONNX models compiled here, run on the RPC server over
// loopback against their reference outputs, timed on the server; and the command line's errors
// for a missing key or a malformed address.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "cli/cli_run.h"
#include "require_package.h"
#include "unit/runtime/rpc/server_process.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::run_with_env;
using anvil::cli::testing::temp_so;
using anvil::rpc::testing::kTestKey;
using anvil::rpc::testing::ServerProcess;
using anvil::rpc::testing::Service;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// A graph-executor model with weights, and a VM model (control flow).
TEST(CliRpc, RemoteRunsMatchTheReferenceOutputs) {
    ASSERT_TRUE(fs::exists(kNodeTests));
    ServerProcess server({}, /*via_cli=*/true);
    std::string address = "127.0.0.1:" + std::to_string(server.port());
    for (std::string name : {"test_conv_with_strides_padding", "test_if"}) {
        fs::path dir = kNodeTests / name;
        ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
        std::string so = temp_so("rpc_" + name);
        Result compiled = run("compile " + (dir / "model.onnx").string() + " -o " + so);
        ASSERT_EQ(compiled.status, 0) << compiled.output;
        std::string data = (dir / "test_data_set_0").string();
        // The key from the environment, as a deployment script would give it.
        Result r = run_with_env("ANVIL_RPC_KEY=" + kTestKey,
                                "run " + so + " --rpc " + address + " --inputs " + data +
                                    " --compare " + data + " --print-time --repeat 3 --profile");
        EXPECT_EQ(r.status, 0) << name << ": " << r.output;
        EXPECT_NE(r.output.find("output 0: "), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(": ok"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("runs=3"), std::string::npos) << r.output;
        fs::remove(so);
    }
    EXPECT_EQ(server.log_count("opened"), 2) << server.log();
    EXPECT_EQ(server.log_count("closed by the client"), 2) << server.log();
}

// anvil rpc status lists the pool; anvil run --tracker --device-key runs on a device from it.
TEST(CliRpc, TrackerStatusAndRunsOnAPooledDevice) {
    fs::path dir = kNodeTests / "test_conv_with_strides_padding";
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
    ServerProcess tracker(Service::tracker, {});
    std::string address = "127.0.0.1:" + std::to_string(tracker.port());
    ServerProcess board({"--tracker", address, "--device-key", "board", "--max-sessions", "1"});
    std::string key = " --auth-key " + kTestKey;
    Result status;
    for (int i = 0; i < 100; ++i) {
        status = run("rpc status --tracker " + address + key);
        if (status.output.find("board") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(status.status, 0) << status.output;
    EXPECT_NE(status.output.find("tracker " + address + ": 1 device(s)"), std::string::npos)
        << status.output;
    // The device's row: key, address, free, max sessions, waiting clients.
    size_t row = status.output.find("\nboard ");
    ASSERT_NE(row, std::string::npos) << status.output;
    std::istringstream fields(status.output.substr(row + 1));
    std::vector<std::string> columns(5);
    for (std::string& c : columns) fields >> c;
    EXPECT_EQ(columns, (std::vector<std::string>{
                           "board", "127.0.0.1:" + std::to_string(board.port()), "1", "1", "0"}))
        << status.output;
    std::string so = temp_so("rpc_tracked");
    ASSERT_EQ(run("compile " + (dir / "model.onnx").string() + " -o " + so).status, 0);
    std::string data = (dir / "test_data_set_0").string();
    Result r = run("run " + so + " --tracker " + address + " --device-key board" + key +
                   " --inputs " + data + " --compare " + data);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find(": ok"), std::string::npos) << r.output;
    EXPECT_EQ(board.log_count("opened"), 1) << board.log();
    Result unknown = run("run " + so + " --tracker " + address + " --device-key phone" + key);
    EXPECT_EQ(unknown.status, 1) << unknown.output;
    EXPECT_NE(unknown.output.find("no device of key 'phone' is registered with the tracker; it "
                                  "has 'board'"),
              std::string::npos)
        << unknown.output;
    Result half = run("run " + so + " --tracker " + address + key);
    EXPECT_EQ(half.status, 1) << half.output;
    EXPECT_NE(half.output.find("error: --tracker and --device-key go together"), std::string::npos)
        << half.output;
    fs::remove(so);
}

// The walk-through of the README: a model compiled here for AArch64 with the cross compiler, the
// RPC server cross-built for arm64 running under qemu-aarch64 as the "board" on loopback, the
// model uploaded, run there and compared with its reference outputs. (qemu-user cannot start
// threads in a process forked from a multithreaded one, as the server's session processes are:
// the board runs one thread per session, ANVIL_NUM_THREADS=1. A real board has no such limit.)
TEST(CliRpc, CrossCompiledModelRunsOnAnArm64BoardUnderQemu) {
    ANVIL_REQUIRE_PACKAGE(
        fs::exists(ANVIL_AARCH64_RPC_SERVER) && fs::exists("/usr/bin/qemu-aarch64"),
        "the arm64 RPC server (cross-built from cmake/aarch64-linux-gnu.cmake) "
        "or qemu-aarch64",
        "apt-get install g++-aarch64-linux-gnu qemu-user libzmq5:arm64 "
        "libsodium23:arm64 zlib1g:arm64");
    ServerProcess board({"qemu-aarch64", ANVIL_AARCH64_RPC_SERVER}, {}, kTestKey,
                        {"ANVIL_NUM_THREADS=1"});
    ASSERT_NE(board.port(), 0) << board.log();
    std::string address = "127.0.0.1:" + std::to_string(board.port());
    for (std::string name : {"test_conv_with_strides_padding", "test_gemm_default_matrix_bias"}) {
        fs::path dir = kNodeTests / name;
        ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
        std::string so = temp_so("rpc_arm64_" + name);
        Result compiled = run("compile " + (dir / "model.onnx").string() +
                              " --target \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\"" +
                              " --cross-compiler aarch64-linux-gnu-g++ -o " + so);
        ASSERT_EQ(compiled.status, 0) << compiled.output;
        std::string data = (dir / "test_data_set_0").string();
        Result r = run("run " + so + " --rpc " + address + " --auth-key " + kTestKey +
                       " --inputs " + data + " --compare " + data + " --print-time");
        EXPECT_EQ(r.status, 0) << name << ": " << r.output << board.log();
        EXPECT_NE(r.output.find(": ok"), std::string::npos) << r.output;
        fs::remove(so);
    }
    EXPECT_EQ(board.log_count("opened"), 2) << board.log();
}

// anvil tune --tracker: candidates measured on the pool's devices, two at once with two devices;
// the records are as good as local ones (compile applies them).
TEST(CliRpc, TuningMeasuresOnTheTrackersDevices) {
    ServerProcess tracker(Service::tracker, {});
    std::string address = "127.0.0.1:" + std::to_string(tracker.port());
    ServerProcess board1({"--tracker", address, "--device-key", "board", "--max-sessions", "1"});
    ServerProcess board2({"--tracker", address, "--device-key", "board", "--max-sessions", "1"});
    std::string key = " --auth-key " + kTestKey;
    for (int i = 0; i < 100; ++i) {
        if (run("rpc status --tracker " + address + key).output.find("1      1") !=
                std::string::npos &&
            tracker.log_count("registered") == 2) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string model = anvil::cli::testing::write_temp_module(
        "remote_tune",
        "def @main(%x: Tensor[(1, 16, 12, 12), float32], %w: Tensor[(16, 16, 3, 3), "
        "float32]) {\n  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]))\n}\n");
    std::string records = anvil::cli::testing::temp_path("remote_records", ".json");
    fs::remove(records);
    Result t = run("tune " + model + " --target llvm -o " + records +
                   " --trials 9 --tuner random --no-tuning-cache --min-repeat-ms 1 --tracker " +
                   address + " --device-key board" + key);
    ASSERT_EQ(t.status, 0) << t.output << tracker.log();
    EXPECT_NE(t.output.find("9 trials"), std::string::npos) << t.output;
    // Both devices measured (each measurer holds one session of its own).
    EXPECT_GE(board1.log_count("opened"), 1) << board1.log();
    EXPECT_GE(board2.log_count("opened"), 1) << board2.log();
    std::string so = temp_so("remote_tuned");
    Result c = run("compile " + model + " --target llvm -o " + so + " --tuning-records " + records);
    EXPECT_EQ(c.status, 0) << c.output;
    EXPECT_NE(c.output.find("tuning records: 1 of 1 tunable kernels"), std::string::npos)
        << c.output;
    Result half =
        run("tune " + model + " -o " + records + " --trials 2 --tracker " + address + key);
    EXPECT_EQ(half.status, 1) << half.output;
    EXPECT_NE(half.output.find("--tracker and --device-key go together"), std::string::npos);
    Result flush = run("tune " + model + " -o " + records + " --trials 2 --flush-cache --tracker " +
                       address + " --device-key board" + key);
    EXPECT_EQ(flush.status, 1) << flush.output;
    EXPECT_NE(flush.output.find("cache flushing is not available with remote devices"),
              std::string::npos)
        << flush.output;
    Result unknown = run("tune " + model + " -o " + records + " --trials 2 --tracker " + address +
                         " --device-key phone" + key);
    EXPECT_EQ(unknown.status, 1) << unknown.output;
    EXPECT_NE(unknown.output.find("no device of key 'phone' is registered"), std::string::npos)
        << unknown.output;
    for (const auto& p : {model, records, records + ".curve.csv", records + ".curve.png", so}) {
        fs::remove(p);
    }
}

TEST(CliRpc, MistakesAreClearErrors) {
    std::string so = temp_so("rpc_missing");  // never made: the key and address come first
    Result no_key = run_with_env("ANVIL_RPC_KEY=", "run " + so + " --rpc 127.0.0.1:9");
    EXPECT_EQ(no_key.status, 1) << no_key.output;
    EXPECT_NE(
        no_key.output.find("error: RPC needs an auth key: give --auth-key or set ANVIL_RPC_KEY"),
        std::string::npos)
        << no_key.output;
    Result bad_address = run("run " + so + " --rpc 127.0.0.1 --auth-key k");
    EXPECT_EQ(bad_address.status, 1) << bad_address.output;
    EXPECT_NE(bad_address.output.find(
                  "error: --rpc: expected HOST:PORT (e.g. 127.0.0.1:9190), got '127.0.0.1'"),
              std::string::npos)
        << bad_address.output;
    Result no_server = run("rpc server --port 0 --auth-key ''");
    EXPECT_NE(no_server.status, 0) << no_server.output;
    EXPECT_EQ(no_server.output.find("listening"), std::string::npos) << no_server.output;
    ServerProcess server({}, /*via_cli=*/true);
    Result wrong_key = run("run " + so + " --rpc 127.0.0.1:" + std::to_string(server.port()) +
                           " --auth-key not-the-servers-key");
    EXPECT_EQ(wrong_key.status, 1) << wrong_key.output;
    EXPECT_NE(wrong_key.output.find("failed: the auth key is not the server's"), std::string::npos)
        << wrong_key.output;
    EXPECT_EQ(wrong_key.output.find("terminate"), std::string::npos) << wrong_key.output;
}

}  // namespace
