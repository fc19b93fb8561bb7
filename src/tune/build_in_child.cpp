// The parent side of building a candidate in a child process (build_in_child.h).
#include "tune/build_in_child.h"

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.h"
#include "tune/child_process.h"

namespace anvil::tune {

namespace fs = std::filesystem;

BuildResult build_in_child(const std::vector<std::string>& kernels, const std::string& target,
                           const std::string& library, double timeout_s) {
    if (!(timeout_s > 0)) {
        user_error() << "build timeout (" << timeout_s << " s) must be positive";
    }
    const std::string worker = build_worker_path();
    ScratchDir dir("anvil-build");
    // The worker links into the scratch directory (its temporary objects beside), and the
    // library moves to `library` once it is complete: a killed build leaves nothing behind.
    const fs::path built = dir.path() / "candidate.so";
    std::vector<std::string> argv = {worker, target, built.string()};
    for (size_t k = 0; k < kernels.size(); ++k) {
        fs::path path = dir.path() / ("kernel_" + std::to_string(k) + ".tir");
        std::ofstream out(path);
        out << kernels[k];
        if (!out) user_error() << "cannot write the kernel to build to " << path;
        argv.push_back(path.string());
    }
    const fs::path stderr_path = dir.path() / "stderr.txt";
    ChildExit exit = run_child(worker, argv, stderr_path, timeout_s);
    BuildResult result;
    result.elapsed_s = exit.elapsed_s;
    std::error_code ec;
    if (exit.timed_out) {
        result.error = MeasureError::build_timeout;
        std::ostringstream msg;
        msg << "building took longer than " << timeout_s << " s"
            << (exit.killed ? " and was killed" : "");
        result.message = msg.str();
        return result;
    }
    std::string how = exit_text(exit.status);
    if (how.empty() && fs::exists(built, ec)) {
        fs::rename(built, library, ec);
        // Across file systems (TMPDIR elsewhere), a copy.
        if (ec) fs::copy_file(built, library, fs::copy_options::overwrite_existing, ec);
        if (!ec) return result;
        result.error = MeasureError::compile;
        result.message = "cannot move the built library to " + library + ": " + ec.message();
        return result;
    }
    result.error = MeasureError::compile;
    std::string err = stderr_tail(stderr_path);
    // Status 1 is the worker's own "this does not compile", its stderr the compiler's message;
    // anything else (a crash in LLVM, a missing library) is named as such.
    const bool compile_error = WIFEXITED(exit.status) && WEXITSTATUS(exit.status) == 1;
    if (compile_error && !err.empty()) {
        result.message = err;
    } else {
        result.message = "anvil-build " +
                         (how.empty() ? "ended without writing the library" : how) +
                         (err.empty() ? "" : ": " + err);
    }
    return result;
}

std::string build_worker_path() {
#ifdef ANVIL_BUILD_WORKER_BUILD_PATH
    const std::string build_path = ANVIL_BUILD_WORKER_BUILD_PATH;
#else
    const std::string build_path;
#endif
    return find_helper_program("anvil-build", "ANVIL_BUILD_WORKER", build_path);
}

}  // namespace anvil::tune
