// What the command-line tests share: running `anvil`, naming and writing temporary files,
// checking a model against its ONNX test data.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace anvil::cli::testing {

struct Result {
    int status;
    std::string output;  // stdout and stderr
};

// Runs `anvil ARGS`; the exit status and everything it printed.
inline Result run_with_env(const std::string& env, const std::string& args);

inline Result run(const std::string& args) {
    return run_with_env("", args);
}

// Runs `ENV anvil ARGS` (ENV: shell assignments such as "PATH=/x").
inline Result run_with_env(const std::string& env, const std::string& args) {
    std::string cmd = env + " " + std::string(ANVIL_CLI) + " " + args + " 2>&1";
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

// Writes `text` (a module in Anvil's text format) to temp_path(name, ".anvil"); returns the path.
inline std::string write_temp_module(const std::string& name, const std::string& text) {
    std::string path = temp_path(name, ".anvil");
    std::ofstream(path) << text;
    return path;
}

// Compiles `dir`/model.onnx once and checks it against every `dir`/test_data_set_K at
// -O`level` (models with symbolic dimensions have data sets of several sizes).
inline void compile_and_compare(const std::filesystem::path& dir, int level,
                                const std::string& flags = "") {
    namespace fs = std::filesystem;
    std::string so = temp_so(dir.filename().string() + "_O" + std::to_string(level));
    Result c = run("compile " + (dir / "model.onnx").string() + " -O " + std::to_string(level) +
                   " -o " + so + " " + flags);
    ASSERT_EQ(c.status, 0) << c.output;
    for (int k = 0; fs::exists(dir / ("test_data_set_" + std::to_string(k))); ++k) {
        std::string data = (dir / ("test_data_set_" + std::to_string(k))).string();
        Result r = run("run " + so + " --inputs " + data + " --compare " + data);
        EXPECT_EQ(r.status, 0) << data << "\n" << r.output;
        EXPECT_EQ(r.output.find("MISMATCH"), std::string::npos) << data << "\n" << r.output;
    }
    fs::remove(so);
}

// The models tests/models/generate_models.py exported (standard vision CNNs and transformer
// encoders Anvil was not developed against), by directory name.
inline std::vector<std::string> generated_models() {
    namespace fs = std::filesystem;
    std::vector<std::string> names;
    for (const auto& entry :
         fs::directory_iterator(fs::path(ANVIL_SOURCE_DIR) / "tests" / "models")) {
        if (fs::exists(entry.path() / "model.onnx"))
            names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace anvil::cli::testing
