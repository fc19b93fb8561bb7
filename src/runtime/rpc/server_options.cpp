#include "runtime/rpc/server_options.h"

#include <cstdio>

#include "runtime/rpc/auth_key.h"

namespace anvil::rpc {

void add_server_options(CLI::App& command, ServerOptions& options) {
    command.add_option("--host", options.host, "address to listen on")->capture_default_str();
    command.add_option("--port", options.port, "port to listen on (0: any free port)")
        ->check(CLI::Range(0, 65535))
        ->capture_default_str();
    command.add_option("--auth-key", options.auth_key,
                       "the shared secret clients must hold (default: $ANVIL_RPC_KEY)");
    command.add_option("--max-sessions", options.max_sessions, "sessions served at once")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    command
        .add_option("--timeout", options.request_timeout_s,
                    "seconds one request may run before its session is killed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    command
        .add_option("--idle-timeout", options.idle_timeout_s,
                    "seconds a session may sit without requests before it is closed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    command
        .add_option_function<int64_t>(
            "--max-message-mb", [&options](int64_t mb) { options.max_message_bytes = mb << 20; },
            "largest message frame (tensor, upload chunk) in MiB (default 256)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    command
        .add_option_function<int64_t>(
            "--max-upload-mb", [&options](int64_t mb) { options.max_upload_bytes = mb << 20; },
            "all uploads of one session together, in MiB (default 4096)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
    command.add_option("--work-dir", options.work_dir,
                       "where sessions keep their uploads (default: a new directory in $TMPDIR)");
    command.add_flag("--quiet", options.quiet, "log only refusals and failures");
    command.add_option("--tracker", options.tracker,
                       "register with the tracker at HOST:PORT (anvil rpc tracker)");
    command.add_option("--device-key", options.device_key,
                       "the key clients ask the tracker for (with --tracker)");
    command.add_option("--custom-addr", options.custom_addr,
                       "the address the tracker gives clients (default: the one it sees)");
}

namespace {

void warn_if_short(const std::string& key) {
    if (key.size() < kRecommendedAuthKeyLength) {
        std::fprintf(stderr,
                     "warning: the auth key has %zu characters; use a long random one "
                     "(e.g. openssl rand -hex 32)\n",
                     key.size());
    }
}

}  // namespace

void finish_server_options(ServerOptions& options) {
    options.auth_key = resolve_auth_key(options.auth_key);
    warn_if_short(options.auth_key);
}

void add_tracker_options(CLI::App& command, TrackerOptions& options) {
    command.add_option("--host", options.host, "address to listen on")->capture_default_str();
    command.add_option("--port", options.port, "port to listen on (0: any free port)")
        ->check(CLI::Range(0, 65535))
        ->capture_default_str();
    command.add_option("--auth-key", options.auth_key,
                       "the shared secret servers and clients must hold (default: $ANVIL_RPC_KEY)");
    command
        .add_option("--server-expiry", options.server_expiry_s,
                    "seconds after which a silent server is dropped")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    command.add_flag("--quiet", options.quiet, "log only refusals and failures");
}

void finish_tracker_options(TrackerOptions& options) {
    options.auth_key = resolve_auth_key(options.auth_key);
    warn_if_short(options.auth_key);
}

int run_standalone(CLI::App& app, int argc, char** argv, const std::function<void()>& serve) {
    try {
        app.parse(argc, argv);
        serve();
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace anvil::rpc
