// anvil rpc server --host H --port P --auth-key KEY [--max-sessions N] [--timeout S] ...
//
// Serves compiled models to remote clients (runtime/rpc/server.h) until SIGINT or SIGTERM; the
// same server as the standalone anvil-rpc-server, which is what a board without the compiler runs.
#include "commands.h"
#include "runtime/rpc/server_options.h"

namespace anvil::cli {

void add_rpc_command(CLI::App& app, int* status) {
    CLI::App* rpc = app.add_subcommand("rpc", "remote devices: serve models over RPC");
    rpc->require_subcommand(1);
    auto options = std::make_shared<rpc::ServerOptions>();
    CLI::App* server = rpc->add_subcommand(
        "server", "run models uploaded by clients (anvil run --rpc, anvil.rpc.connect)");
    rpc::add_server_options(*server, *options);
    server->callback([options, status] {
        rpc::finish_server_options(*options);
        rpc::run_rpc_server(*options);
        *status = 0;
    });
}

}  // namespace anvil::cli
