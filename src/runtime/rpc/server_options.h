// The options of the RPC server, shared by `anvil rpc server` and the standalone
// anvil-rpc-server so that both take the same command line.
#pragma once

#include <CLI/CLI.hpp>

#include "runtime/rpc/server.h"

namespace anvil::rpc {

// Adds --host, --port, --auth-key, the limits and --work-dir to `command`, filling `options`.
void add_server_options(CLI::App& command, ServerOptions& options);
// Completes the options after parsing: the auth key from ANVIL_RPC_KEY when --auth-key was not
// given (UserError when neither was), a warning for a short key.
void finish_server_options(ServerOptions& options);

}  // namespace anvil::rpc
