// The options of the RPC server and tracker, shared by `anvil rpc server|tracker` and the
// standalone anvil-rpc-server and anvil-rpc-tracker so that both take the same command lines.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "runtime/rpc/server.h"
#include "runtime/rpc/tracker.h"

namespace anvil::rpc {

// Adds --host, --port, --auth-key, the limits and --work-dir to `command`, filling `options`.
void add_server_options(CLI::App& command, ServerOptions& options);
// Completes the options after parsing: the auth key from ANVIL_RPC_KEY when --auth-key was not
// given (UserError when neither was), a warning for a short key.
void finish_server_options(ServerOptions& options);

}  // namespace anvil::rpc

namespace anvil::rpc {

// --host, --port, --auth-key, --server-expiry, --quiet.
void add_tracker_options(CLI::App& command, TrackerOptions& options);
void finish_tracker_options(TrackerOptions& options);

// The main of a standalone program (anvil-rpc-server, anvil-rpc-tracker): parses the command
// line, then runs `serve`; 0 after it returns, 1 with "error: ..." when it throws, 2 for bad usage.
int run_standalone(CLI::App& app, int argc, char** argv, const std::function<void()>& serve);

}  // namespace anvil::rpc
