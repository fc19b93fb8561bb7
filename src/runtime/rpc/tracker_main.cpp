// anvil-rpc-tracker: the RPC tracker on its own (the same as `anvil rpc tracker`), for machines
// and Python packages without the command line; anvil.rpc.Tracker starts it.
//
//   anvil-rpc-tracker --host 0.0.0.0 --port 9190 --auth-key "$KEY"
//
// Exit status: 0 after SIGINT / SIGTERM, 1 when it cannot serve, 2 for bad usage.
#include "runtime/rpc/server_options.h"

int main(int argc, char** argv) {
    CLI::App app{"Anvil RPC tracker: a pool of devices shared by clients", "anvil-rpc-tracker"};
    anvil::rpc::TrackerOptions options;
    anvil::rpc::add_tracker_options(app, options);
    return anvil::rpc::run_standalone(app, argc, argv, [&] {
        anvil::rpc::finish_tracker_options(options);
        anvil::rpc::run_rpc_tracker(options);
    });
}
