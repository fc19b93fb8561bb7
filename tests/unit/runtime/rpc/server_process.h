// What the RPC tests share: an RPC server or tracker started as a process of its own on a free
// loopback port (the standalone anvil-rpc-server / anvil-rpc-tracker, or `anvil rpc server`), its
// log, and models compiled with the command line.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "support/error.h"

extern char** environ;

namespace anvil::rpc::testing {

inline const std::string kTestKey = "0f3a5c8e-rpc-test-key-9b1d";

// The message of the UserError `f` throws ("(no error)" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

inline std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("anvil_rpc_" + std::to_string(getpid()) + "_" + name))
        .string();
}

// Runs a shell command; its exit status and output (stdout and stderr).
inline std::pair<int, std::string> shell(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Compiles a model given in Anvil's text format; returns the library's path.
inline std::string compile_model(const std::string& name, const std::string& text) {
    std::string source = temp_path(name + ".anvil"), library = temp_path(name + ".so");
    std::ofstream(source) << text;
    auto [status, output] = shell(std::string(ANVIL_CLI) + " compile " + source + " -o " + library);
    EXPECT_EQ(status, 0) << output;
    return library;
}

enum class Service { server, server_via_cli, tracker };

class ServerProcess {
public:
    // `args` after the program: e.g. {"--timeout", "1"}. server_via_cli runs `anvil rpc server`.
    explicit ServerProcess(std::vector<std::string> args = {}, bool via_cli = false)
        : ServerProcess(via_cli ? Service::server_via_cli : Service::server, std::move(args)) {}

    ServerProcess(Service service, std::vector<std::string> args,
                  const std::string& auth_key = kTestKey)
        : ServerProcess(program_of(service), std::move(args), auth_key) {}

    // Any program (e.g. {"qemu-aarch64", server}), with `env` ("NAME=value") added to ours.
    ServerProcess(std::vector<std::string> program, std::vector<std::string> args,
                  const std::string& auth_key, const std::vector<std::string>& env = {})
        : log_path_(temp_path("server_" + std::to_string(++count_) + ".log")) {
        std::vector<std::string> argv = std::move(program);
        for (std::string a : {"--host", "127.0.0.1", "--port", "0", "--auth-key"})
            argv.push_back(a);
        argv.push_back(auth_key);
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> c_argv;
        for (std::string& a : argv) c_argv.push_back(a.data());
        c_argv.push_back(nullptr);
        int out[2];
        EXPECT_EQ(pipe(out), 0);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        std::vector<std::string> env_strings = env;
        for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
        std::vector<char*> c_env;
        for (std::string& e : env_strings) c_env.push_back(e.data());
        c_env.push_back(nullptr);
        EXPECT_EQ(posix_spawnp(&pid_, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data()),
                  0);
        posix_spawn_file_actions_destroy(&actions);
        close(out[1]);
        // "anvil rpc server listening on 127.0.0.1:PORT" (or tracker)
        std::string line;
        pollfd p{out[0], POLLIN, 0};
        while (line.find('\n') == std::string::npos && poll(&p, 1, 30000) > 0) {
            char buf[256];
            ssize_t n = read(out[0], buf, sizeof buf);
            if (n <= 0) break;
            line.append(buf, static_cast<size_t>(n));
        }
        close(out[0]);
        size_t colon = line.rfind(':');
        EXPECT_NE(line.find(" listening on 127.0.0.1:"), std::string::npos) << line << log();
        port_ = colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
    }

    ~ServerProcess() {
        stop();
        std::filesystem::remove(log_path_);
    }
    // SIGTERM, and waits for the process to end.
    void stop() {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }

    int port() const { return port_; }
    std::string log() const {
        std::ifstream in(log_path_);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    // How often `text` occurs in the log.
    int log_count(const std::string& text) const {
        std::string l = log();
        int n = 0;
        for (size_t at = l.find(text); at != std::string::npos; at = l.find(text, at + 1)) ++n;
        return n;
    }
    // Waits up to `seconds` for the log to hold `text` `times` times.
    bool wait_for_log(const std::string& text, int times = 1, double seconds = 10) const {
        auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (log_count(text) < times) {
            if (std::chrono::steady_clock::now() > end) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return true;
    }
    bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

private:
    static std::vector<std::string> program_of(Service service) {
        switch (service) {
            case Service::server_via_cli:
                return {ANVIL_CLI, "rpc", "server"};
            case Service::tracker:
                return {ANVIL_RPC_TRACKER};
            default:
                return {ANVIL_RPC_SERVER};
        }
    }

    static inline int count_ = 0;
    std::string log_path_;
    pid_t pid_ = -1;
    int port_ = 0;
};

}  // namespace anvil::rpc::testing
