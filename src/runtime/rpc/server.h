// The RPC server: what runs on a device ("board") to let a workstation upload compiled models,
// run and time them there (TVM's RPC server).
//
//   anvil rpc server --host 0.0.0.0 --port 9090 --auth-key "$KEY"     (or anvil-rpc-server ...)
//
// One process listens (ZeroMQ ROUTER over TCP, CurveZMQ: see auth_key.h; a peer without the auth
// key is refused in the handshake and never reaches this code). A client opens a session
// ("session.open"); the server forks a process for it, which answers the session's requests
// (session_handler.h) while the listening process only relays them. So a model that crashes
// ends its session alone: the client's pending request is answered with how the session's
// process died, and the server goes on serving. A request that runs past the request timeout
// has its session killed the same way; a session idle for longer than the idle timeout is closed.
//
// (session_process.h says why forking is safe here.) With --tracker the server registers with a
// tracker under its device key (tracker.h) and holds sessions the tracker reserves for its
// clients.
//
// Every message is checked against the limits before anything else looks at it: a frame over
// max_message_bytes is refused by ZeroMQ itself (the connection is dropped), a message with too
// many frames or bytes is read, dropped and answered with an error, and so is a header that is
// not a JSON object or lacks its fields. Each refusal is logged (stderr) and the server keeps
// serving.
#pragma once

#include <cstdint>
#include <string>

namespace anvil::rpc {

struct ServerOptions {
    std::string host = "0.0.0.0";
    int port = 9090;  // 0: any free port (the "listening on" line says which)
    std::string auth_key;
    int max_sessions = 4;
    double request_timeout_s = 600;  // one request of a session (a request may ask for less:
                                     // its header's "timeout_s")
    double idle_timeout_s = 600;     // a session without requests
    // One frame (a tensor, an upload chunk); a request's frames together at most twice that.
    int64_t max_message_bytes = int64_t{256} << 20;
    int64_t max_upload_bytes = int64_t{4} << 30;   // one session's files together
    int64_t max_tensor_bytes = int64_t{16} << 30;  // one tensor on the device
    std::string work_dir;  // where sessions keep uploads; default: a new directory under TMPDIR
    bool quiet = false;    // log only refusals and failures
    // Registration with a tracker (tracker.h): its HOST:PORT, the key clients ask for, and the
    // address clients are to connect to (default: the one the tracker sees the server at).
    std::string tracker;
    std::string device_key;
    std::string custom_addr;
};

// Serves until SIGINT or SIGTERM; prints "anvil rpc server listening on HOST:PORT" (stdout,
// flushed) once it accepts connections. UserError when it cannot listen.
void run_rpc_server(const ServerOptions& options);

}  // namespace anvil::rpc
