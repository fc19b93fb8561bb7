// Frames over a stream socket: how a server and its session processes (server.h) pass messages.
//
// The encoding is a frame count (uint32) followed, per frame, by its length (uint64) and bytes,
// native byte order (both ends are one machine). Both calls block until the whole message is
// through and retry on EINTR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anvil::rpc {

// UserError when the peer has gone (EPIPE) or the write fails.
void write_frames(int fd, const std::vector<std::string>& frames);

// False when the peer closed the stream before the first byte of a message; UserError on a
// truncated message, a read error, or a message over `max_frames` frames / `max_bytes` bytes.
bool read_frames(int fd, std::vector<std::string>* frames, int max_frames, int64_t max_bytes);

}  // namespace anvil::rpc
