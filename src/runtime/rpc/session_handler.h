// What one RPC session does: the requests a client sends once its session is open, answered in the
// session's own process (server.h forks one per session, so a model that crashes or hangs ends
// that session only).
//
// A session keeps the files uploaded to it (in a directory of its own, removed with the session)
// and a table of handles: loaded modules, tensors, graph executors and VMs. Requests and their
// results (each a Message; see message.h):
//   session.info                         -> pid, machine, threads
//   set_num_threads threads
//   upload name offset [+ chunk]         -> size   (offset 0 starts the file anew; each chunk
//                                                    continues at the current size)
//   delete name                          (an uploaded file; what was loaded from it stays)
//   load_module name                     -> module, functions, executor ("graph" or "vm")
//   tensor.empty shape dtype             -> tensor
//   tensor.from_bytes shape dtype + data -> tensor
//   tensor.copy_from tensor + data
//   tensor.copy_to tensor                -> shape, dtype + data
//   free handle
//   call module function args            -> ret     (args: [{"tensor": h} | {"int": v} |
//                                                    {"float": v} | {"str": s}])
//   graph_executor.create module         -> executor, inputs, outputs (name, shape, dtype)
//   vm.create module                     -> executor, inputs (name, dtype), outputs (names)
//   executor.run_with executor shapes dtypes + one blob per input -> outputs + one blob each
//   graph_executor.set_input executor (index | name) tensor
//   graph_executor.run executor
//   graph_executor.get_output executor index -> tensor, shape, dtype (a view of the output)
//   executor.profile executor number repeat -> report (the per-kernel table of anvil run)
//   time_evaluator (module function args | executor) number repeat min_repeat_ms -> times_s
// time_evaluator follows TVM's: one warm-up call, then `repeat` measurements of `number` calls
// each (number raised until one measurement takes min_repeat_ms), each the mean seconds per call.
// An executor's timed call is its run() on the inputs it was last given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include "runtime/rpc/message.h"

namespace anvil::rpc {

struct SessionConfig {
    std::filesystem::path dir;  // where uploads go; exists, empty, private to the session
    int64_t max_upload_bytes = int64_t{4} << 30;   // all files of the session together
    int64_t max_tensor_bytes = int64_t{16} << 30;  // one tensor
};

class SessionHandler {
public:
    explicit SessionHandler(SessionConfig config);
    ~SessionHandler();
    SessionHandler(const SessionHandler&) = delete;
    SessionHandler& operator=(const SessionHandler&) = delete;

    // The reply to `request`; never throws: what goes wrong is the reply's "error" (a bug of ours
    // reads "internal error at ..." or "unexpected error: ...", which the fuzz harness looks for).
    Message handle(const Message& request);

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The session process's loop: reads requests from `fd` (frame_stream.h), answers each, and exits
// the process when the server closes the stream.
[[noreturn]] void run_session_process(int fd, const SessionConfig& config);

}  // namespace anvil::rpc
