// The RPC tracker: a pool of devices that clients share (TVM's tracker).
//
//   anvil rpc tracker --port 9190 --auth-key "$KEY"
//   anvil rpc server --port 9090 --tracker 10.0.0.1:9190 --device-key rk3588 --auth-key "$KEY"
//   anvil run model.so --tracker 10.0.0.1:9190 --device-key rk3588 --auth-key "$KEY"
//   anvil rpc status --tracker 10.0.0.1:9190 --auth-key "$KEY"
//
// Servers register under a device key and tell the tracker, every couple of seconds and whenever
// it changes, how many sessions they can still open; one not heard from for a while is dropped.
// A client asks for a device by key and waits in that key's queue (higher priority first, then
// in order of arrival) until a server of that key has a free session. The tracker then asks that
// server to reserve the session for a ticket, and once it has, answers the client with the
// server's address and the ticket, which the client's session.open presents. The server is the
// one that counts its sessions, so two clients never get one slot. A request for a key no server
// has registered fails at once, naming the keys there are.
//
// Every connection (server to tracker, client to tracker) runs CurveZMQ with the auth key, as a
// server's do (auth_key.h).
//
// Messages (message.h):
//   client:  tracker.request device_key priority -> host, port, ticket
//            tracker.status                      -> devices [{device_key, address, free,
//                                                    max_sessions}], queues {key: waiting}
//   server:  tracker.update device_key port [host] max_sessions free   (no reply)
//            tracker.reserved ticket ok    (its answer to the tracker's tracker.reserve ticket)
//            tracker.leave                 (the server stops)
#pragma once

#include <string>

namespace anvil::rpc {

struct TrackerOptions {
    std::string host = "0.0.0.0";
    int port = 9190;  // 0: any free port (the "listening on" line says which)
    std::string auth_key;
    double server_expiry_s = 10;  // a server silent for this long is dropped
    bool quiet = false;
};

// Serves until SIGINT or SIGTERM; prints "anvil rpc tracker listening on HOST:PORT" (stdout,
// flushed) once it accepts connections.
void run_rpc_tracker(const TrackerOptions& options);

// How often a server tells its tracker its free sessions (also at once when they change).
inline constexpr double kTrackerUpdateInterval_s = 2;

}  // namespace anvil::rpc
