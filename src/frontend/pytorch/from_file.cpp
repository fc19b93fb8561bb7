// from_torchscript_file: a .pt file read through PyTorch in a child Python process.
//
// The reader (python/anvil/_torchscript.py, compiled in as text) runs with the system's Python,
// which must have torch; it writes graph.json and tensors.npz into a fresh temporary directory,
// which is imported and removed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/pytorch/from_pytorch.h"
#include "runtime/npz.h"
#include "support/error.h"

namespace anvil::frontend {

namespace {

const char kReaderScript[] =
#include "torchscript_reader.inc"
    ;

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs `argv` with stderr going to `err_path`; the exit status (-1 when it could not start).
int run(const std::vector<std::string>& argv, const std::string& err_path) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        FILE* err = std::freopen(err_path.c_str(), "w", stderr);
        (void)err;
        std::freopen("/dev/null", "w", stdout);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string templ = (std::filesystem::temp_directory_path() / "anvil-pt-XXXXXX").string();
        if (!mkdtemp(templ.data()))
            user_error(SourceLoc{}) << "cannot create a temporary directory";
        path = templ;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

TorchScriptFile read_torchscript_file(const std::string& path) {
    SourceLoc loc{.file = path};
    if (!std::filesystem::is_regular_file(path)) user_error(loc) << "no such file";
    const char* env = std::getenv("ANVIL_PYTHON");
    std::string python = env && *env ? env : "/usr/bin/python3";
    if (!std::filesystem::exists(python) && python.find('/') != std::string::npos) {
        user_error(loc) << "reading a TorchScript file needs Python with PyTorch, and " << python
                        << " does not exist (install python3-torch, or set ANVIL_PYTHON)";
    }
    TempDir dir;
    std::filesystem::path script = dir.path / "torchscript_reader.py";
    std::ofstream(script) << kReaderScript;
    std::string err_path = (dir.path / "stderr.txt").string();
    int status =
        run({python, script.string(), std::filesystem::absolute(path).string(), dir.path.string()},
            err_path);
    std::string err = read_text(err_path);
    if (status != 0) {
        if (err.find("No module named 'torch'") != std::string::npos) {
            user_error(loc) << "reading a TorchScript file needs PyTorch, which " << python
                            << " does not have (apt-get install python3-torch, or set "
                               "ANVIL_PYTHON to a Python that has it)";
        }
        if (status == 127 || status < 0) {
            user_error(loc) << "cannot run " << python << " to read the TorchScript file";
        }
        // The reader's own message names the file already; keep its last line.
        while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
        size_t nl = err.rfind('\n');
        std::string last = nl == std::string::npos ? err : err.substr(nl + 1);
        if (last.empty()) {
            user_error(loc) << "cannot read the TorchScript file: " << python
                            << " exited with status " << status << " and printed nothing";
        }
        user_error(SourceLoc{}) << last;
    }
    TorchScriptFile file;
    file.description = read_text(dir.path / "graph.json");
    for (auto& [name, array] : runtime::read_npz((dir.path / "tensors.npz").string())) {
        file.tensors.emplace(name, array);
    }
    return file;
}

TorchImport from_torchscript_file(const std::string& path, const std::vector<TorchInput>& inputs) {
    TorchScriptFile file = read_torchscript_file(path);
    return from_torchscript(file.description, file.tensors, inputs, path);
}

}  // namespace anvil::frontend
