// anvil-rpc-server: the RPC server on its own, linked with nothing but the runtime (no compiler,
// no LLVM): what a board runs. It takes the options of `anvil rpc server` (server_options.h).
//
//   anvil-rpc-server --host 0.0.0.0 --port 9090 --auth-key "$KEY"
//
// Exit status: 0 after SIGINT / SIGTERM, 1 when it cannot serve (the message says why), 2 for bad
// usage.
#include "runtime/rpc/server_options.h"

int main(int argc, char** argv) {
    CLI::App app{"Anvil RPC server: runs compiled models sent by clients", "anvil-rpc-server"};
    anvil::rpc::ServerOptions options;
    anvil::rpc::add_server_options(app, options);
    return anvil::rpc::run_standalone(app, argc, argv, [&] {
        anvil::rpc::finish_server_options(options);
        anvil::rpc::run_rpc_server(options);
    });
}
