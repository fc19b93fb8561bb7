// anvil-rpc-server: the RPC server on its own, linked with nothing but the runtime (no compiler,
// no LLVM): what a board runs. It takes the options of `anvil rpc server` (server_options.h).
//
//   anvil-rpc-server --host 0.0.0.0 --port 9090 --auth-key "$KEY"
//
// Exit status: 0 after SIGINT / SIGTERM, 1 when it cannot serve (the message says why), 2 for bad
// usage.
#include <cstdio>

#include "runtime/rpc/server_options.h"
#include "support/error.h"

int main(int argc, char** argv) {
    CLI::App app{"Anvil RPC server: runs compiled models sent by clients", "anvil-rpc-server"};
    anvil::rpc::ServerOptions options;
    anvil::rpc::add_server_options(app, options);
    try {
        app.parse(argc, argv);
        anvil::rpc::finish_server_options(options);
        anvil::rpc::run_rpc_server(options);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
