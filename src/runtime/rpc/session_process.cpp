#include "runtime/rpc/session_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "support/error.h"

namespace anvil::rpc {

namespace {

[[noreturn]] void become_session_process(int fd, const SessionConfig& config) {
    // Dies with the server; a Ctrl-C at the server's terminal is the server's to handle.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    if (fd != 3) {
        dup2(fd, 3);
        close(fd);
    }
    close_range(4, ~0U, 0);  // the server's descriptors, ZeroMQ's above all
    run_session_process(3, config);
}

}  // namespace

SessionProcess start_session_process(const SessionConfig& config) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
        user_error() << "the server cannot start a session: " << std::strerror(errno);
    }
    // Buffered output would be written twice, once by each process.
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(fds[0]);
        close(fds[1]);
        user_error() << "the server cannot start a session process: " << std::strerror(error);
    }
    if (pid == 0) {
        close(fds[0]);
        become_session_process(fds[1], config);
    }
    close(fds[1]);
    return {pid, fds[0]};
}

std::string stop_session_process(SessionProcess& process) {
    int status = 0;
    if (process.pid > 0) {
        kill(process.pid, SIGKILL);
        waitpid(process.pid, &status, 0);
        process.pid = -1;
    }
    if (process.fd >= 0) close(process.fd);
    process.fd = -1;
    return describe_exit(status);
}

std::string describe_exit(int status) {
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

}  // namespace anvil::rpc
