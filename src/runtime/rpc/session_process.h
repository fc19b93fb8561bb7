// A session's process, from the server's side: forked when the session opens, answering its
// requests (session_handler.h) over a socket pair, killed when the session closes.
//
// Forking is safe here because the server process never runs models or starts the thread pool:
// its only other threads are ZeroMQ's I/O threads, and the child never touches ZeroMQ (it closes
// every descriptor but its end of the socket pair, and leaves with _exit).
#pragma once

#include <sys/types.h>

#include <string>

#include "runtime/rpc/session_handler.h"

namespace anvil::rpc {

struct SessionProcess {
    pid_t pid = -1;
    int fd = -1;  // the server's end of the socket pair
};

// Forks the session's process; UserError saying why when it cannot.
SessionProcess start_session_process(const SessionConfig& config);

// Kills the process (if it still runs), reaps it and closes the socket pair; returns how it
// ended ("was killed by signal 11 (Segmentation fault)", "exited with status 0").
std::string stop_session_process(SessionProcess& process);

// How a process ended, from waitpid's status.
std::string describe_exit(int status);

}  // namespace anvil::rpc
