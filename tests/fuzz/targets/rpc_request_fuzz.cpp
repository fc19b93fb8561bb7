// Fuzz harness: what an authenticated RPC client sends a session (runtime/rpc). The input is a
// stream of messages in the encoding the server hands its session processes (frame_stream.h);
// each is read, parsed (message.h) and answered by one SessionHandler, so sequences of requests
// (an upload, then tensors, handles freed and reused) are reached. Malformed requests must come
// back as error replies; a reply saying "internal error" or "unexpected error" is a bug. Requests
// to load a module are skipped: loading native code is what the server does for authenticated
// clients by design, not input it parses. Seeds: one session's worth of well-formed requests.
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>

#include "fuzz_target.h"
#include "runtime/rpc/frame_stream.h"
#include "runtime/rpc/message.h"
#include "runtime/rpc/session_handler.h"

namespace {

using anvil::rpc::Json;

// The messages in frame_stream.h's encoding.
std::string stream_of(const std::vector<std::vector<std::string>>& messages) {
    std::string bytes;
    auto append = [&](const auto& value) {
        bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    };
    for (const auto& frames : messages) {
        append(static_cast<uint32_t>(frames.size()));
        for (const std::string& frame : frames) {
            append(static_cast<uint64_t>(frame.size()));
            bytes += frame;
        }
    }
    return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::string floats(24, '\x3f');
    anvil::fuzz::write_seeds_if_asked({stream_of({
        {R"({"op": "session.info", "id": 1})"},
        {R"({"op": "upload", "id": 2, "name": "a.bin", "offset": 0})", "abc"},
        {R"({"op": "upload", "id": 3, "name": "a.bin", "offset": 3})", "def"},
        {R"({"op": "tensor.from_bytes", "id": 4, "shape": [2, 3], "dtype": "float32"})", floats},
        {R"({"op": "tensor.copy_to", "id": 5, "tensor": 1})"},
        {R"({"op": "tensor.empty", "id": 6, "shape": [3], "dtype": "int64"})"},
        {R"({"op": "tensor.copy_from", "id": 7, "tensor": 2})", floats},
        {R"({"op": "graph_executor.get_output", "id": 8, "executor": 1, "index": 0})"},
        {R"({"op": "time_evaluator", "id": 9, "executor": 2, "number": 1, "repeat": 1})"},
        {R"({"op": "call", "id": 10, "module": 1, "function": "f", "args": [{"tensor": 1}]})"},
        {R"({"op": "free", "id": 11, "handle": 1})"},
        {R"({"op": "executor.run_with", "id": 12, "executor": 2, "shapes": [[2]],
             "dtypes": ["int8"]})",
         "xy"},
    })});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    static const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("anvil_fuzz_rpc_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    int fd = memfd_create("input", 0);
    if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
    lseek(fd, 0, SEEK_SET);
    {
        rpc::SessionHandler handler(rpc::SessionConfig{
            .dir = dir, .max_upload_bytes = 1 << 20, .max_tensor_bytes = 1 << 20});
        rpc::MessageLimits limits{
            .max_header_bytes = 1 << 16, .max_blob_bytes = 1 << 20, .max_blobs = 16};
        for (int i = 0; i < 64; ++i) {
            std::vector<std::string> frames;
            bool more = false;
            fuzz::expect_only_user_errors([&] {
                more = rpc::read_frames(fd, &frames, limits.max_blobs + 1, int64_t{4} << 20);
            });
            if (!more) break;
            rpc::Message request;
            bool parsed = false;
            fuzz::expect_only_user_errors([&] {
                request = rpc::parse_frames(std::move(frames), limits);
                parsed = true;
            });
            if (!parsed) continue;
            auto op = request.header.find("op");
            if (op != request.header.end() && *op == "load_module") continue;
            rpc::Message reply = handler.handle(request);
            auto error = reply.header.find("error");
            if (error != reply.header.end()) {
                std::string text = error->is_string() ? error->get<std::string>() : "";
                if (text.rfind("internal error", 0) == 0 ||
                    text.rfind("unexpected error", 0) == 0) {
                    std::fprintf(stderr, "fuzz: %s\n", text.c_str());
                    std::abort();
                }
            }
            reply.header.dump();  // the reply must be sendable
        }
    }
    close(fd);
    return 0;
}
