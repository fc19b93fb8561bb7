// What the command-line tests share: running `anvil` and naming temporary files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace anvil::cli::testing {

struct Result {
    int status;
    std::string output;  // stdout and stderr
};

// Runs `anvil ARGS`; the exit status and everything it printed.
inline Result run(const std::string& args) {
    std::string cmd = std::string(ANVIL_CLI) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A path in the temporary directory unique to this process: anvil_cli_<pid>_<name><ext>.
inline std::string temp_path(const std::string& name, const std::string& ext) {
    return (std::filesystem::temp_directory_path() /
            ("anvil_cli_" + std::to_string(getpid()) + "_" + name + ext))
        .string();
}

inline std::string temp_so(const std::string& name) {
    return temp_path(name, ".so");
}

}  // namespace anvil::cli::testing
