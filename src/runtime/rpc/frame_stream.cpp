#include "runtime/rpc/frame_stream.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace anvil::rpc {

namespace {

void write_all(int fd, const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        // MSG_NOSIGNAL: a peer that has died is an error here, not a SIGPIPE for the process.
        ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            user_error() << "RPC: writing to the session process failed: " << std::strerror(errno);
        p += n;
        size -= static_cast<size_t>(n);
    }
}

// Reads exactly `size` bytes; returns the number read before EOF (size when complete).
size_t read_all(int fd, void* data, size_t size) {
    char* p = static_cast<char*>(data);
    size_t done = 0;
    while (done < size) {
        ssize_t n = ::read(fd, p + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            user_error() << "RPC: reading from the session process failed: "
                         << std::strerror(errno);
        if (n == 0) break;
        done += static_cast<size_t>(n);
    }
    return done;
}

void read_exactly(int fd, void* data, size_t size) {
    if (read_all(fd, data, size) != size)
        user_error() << "RPC: truncated message from the session process";
}

}  // namespace

void write_frames(int fd, const std::vector<std::string>& frames) {
    uint32_t count = static_cast<uint32_t>(frames.size());
    write_all(fd, &count, sizeof count);
    for (const std::string& frame : frames) {
        uint64_t size = frame.size();
        write_all(fd, &size, sizeof size);
        write_all(fd, frame.data(), frame.size());
    }
}

bool read_frames(int fd, std::vector<std::string>* frames, int max_frames, int64_t max_bytes) {
    frames->clear();
    uint32_t count = 0;
    size_t got = read_all(fd, &count, sizeof count);
    if (got == 0) return false;
    if (got != sizeof count) user_error() << "RPC: truncated message from the session process";
    if (count > static_cast<uint32_t>(max_frames)) {
        user_error() << "RPC: message of " << count << " frames; at most " << max_frames;
    }
    int64_t total = 0;
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t size = 0;
        read_exactly(fd, &size, sizeof size);
        if (size > static_cast<uint64_t>(max_bytes - total)) {
            user_error() << "RPC: message over " << max_bytes << " bytes";
        }
        total += static_cast<int64_t>(size);
        std::string frame(size, '\0');
        read_exactly(fd, frame.data(), size);
        frames->push_back(std::move(frame));
    }
    return true;
}

}  // namespace anvil::rpc
