// anvil rpc server  --host H --port P --auth-key KEY [--tracker HOST:PORT --device-key K] ...
// anvil rpc tracker --host H --port P --auth-key KEY
// anvil rpc status  --tracker HOST:PORT --auth-key KEY
//
// The server runs models uploaded by clients (runtime/rpc/server.h), the same server as the
// standalone anvil-rpc-server that a board without the compiler runs; the tracker pools servers
// under device keys (runtime/rpc/tracker.h); status lists a tracker's devices and queues. The
// server and tracker run until SIGINT or SIGTERM. --auth-key defaults to $ANVIL_RPC_KEY.
#include <cstdio>
#include <map>

#include "commands.h"
#include "runtime/rpc/auth_key.h"
#include "runtime/rpc/client.h"
#include "runtime/rpc/server_options.h"
#include "runtime/rpc/zmq_socket.h"

namespace anvil::cli {

namespace {

struct StatusArgs {
    std::string tracker;
    std::string auth_key;
};

int print_status(const StatusArgs& a) {
    auto [host, port] = rpc::parse_host_port(a.tracker, "--tracker");
    rpc::TrackerClient tracker(host, port, rpc::resolve_auth_key(a.auth_key));
    rpc::Json status = tracker.status();
    std::map<std::string, std::vector<const rpc::Json*>> by_key;
    for (const rpc::Json& d : status["devices"]) by_key[d.value("device_key", "?")].push_back(&d);
    for (const auto& [key, waiting] : status["queues"].items()) by_key[key];
    std::printf("tracker %s: %zu device(s)\n", tracker.address().c_str(), status["devices"].size());
    std::printf("%-20s %-24s %6s %6s %8s\n", "device key", "address", "free", "max", "waiting");
    for (const auto& [key, devices] : by_key) {
        int waiting = status["queues"].value(key, 0);
        if (devices.empty())
            std::printf("%-20s %-24s %6s %6s %8d\n", key.c_str(), "-", "-", "-", waiting);
        for (const rpc::Json* d : devices) {
            std::printf("%-20s %-24s %6d %6d %8d\n", key.c_str(), d->value("address", "?").c_str(),
                        d->value("free", 0), d->value("max_sessions", 0), waiting);
        }
    }
    return 0;
}

}  // namespace

void add_rpc_command(CLI::App& app, int* status) {
    CLI::App* rpc = app.add_subcommand("rpc", "remote devices: RPC server, tracker, status");
    rpc->require_subcommand(1);

    auto server_options = std::make_shared<rpc::ServerOptions>();
    CLI::App* server = rpc->add_subcommand(
        "server", "run models uploaded by clients (anvil run --rpc, anvil.rpc.connect)");
    rpc::add_server_options(*server, *server_options);
    server->callback([server_options, status] {
        rpc::finish_server_options(*server_options);
        rpc::run_rpc_server(*server_options);
        *status = 0;
    });

    auto tracker_options = std::make_shared<rpc::TrackerOptions>();
    CLI::App* tracker =
        rpc->add_subcommand("tracker", "pool RPC servers under device keys for clients to request");
    rpc::add_tracker_options(*tracker, *tracker_options);
    tracker->callback([tracker_options, status] {
        rpc::finish_tracker_options(*tracker_options);
        rpc::run_rpc_tracker(*tracker_options);
        *status = 0;
    });

    auto status_args = std::make_shared<StatusArgs>();
    CLI::App* list = rpc->add_subcommand("status", "list a tracker's devices and queues");
    list->add_option("--tracker", status_args->tracker, "the tracker, HOST:PORT")->required();
    list->add_option("--auth-key", status_args->auth_key,
                     "the tracker's auth key (default: $ANVIL_RPC_KEY)");
    list->callback([status_args, status] { *status = print_status(*status_args); });
}

}  // namespace anvil::cli
