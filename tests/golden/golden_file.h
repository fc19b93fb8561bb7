// The golden-file half of the golden tests (tests/golden/<stage>/): reading the files, and
// comparing printed IR with an expected file byte for byte, or rewriting that file when the
// environment sets ANVIL_UPDATE_GOLDEN (after an intended change of a pass's output; review the
// diff). A missing file is a failure, never a skip: a golden test that silently does not run
// would hide a deleted or misnamed file.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace anvil::golden {

// The path of `name` in tests/golden/<stage>/.
inline std::string golden_path(const std::string& stage, const std::string& name) {
    return std::string(ANVIL_SOURCE_DIR) + "/tests/golden/" + stage + "/" + name;
}

// The file's text; a missing or unreadable file fails the test and throws, so the test stops
// there instead of going on with empty text.
inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in.good()) {
        ADD_FAILURE() << "cannot read " << path;
        throw std::runtime_error("cannot read " + path);
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Expects `got` (given a final newline if it lacks one) to equal the file at `expected_path`,
// or writes it there under ANVIL_UPDATE_GOLDEN. True when it compared, so the caller goes on
// checking the expected file; false when it wrote it.
inline bool compare_or_update(std::string got, const std::string& expected_path) {
    if (!got.empty() && got.back() != '\n') got += '\n';
    if (std::getenv("ANVIL_UPDATE_GOLDEN")) {
        std::ofstream(expected_path) << got;
        return false;
    }
    EXPECT_EQ(got, read_file(expected_path));
    return true;
}

// The passes a stage's passes.h declares with the stage's signature: the names of the functions
// whose declaration line matches `declaration` (an ECMAScript regex whose group 1 is the name).
// The golden suite compares this with its own list, so a new pass without a golden file fails.
inline std::vector<std::string> declared_passes(const std::string& header,
                                                const std::string& declaration) {
    std::istringstream in(read_file(std::string(ANVIL_SOURCE_DIR) + "/" + header));
    std::regex re(declaration);
    std::vector<std::string> names;
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
        if (std::regex_search(line, m, re)) names.push_back(m[1]);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// The pass names of the stage's `<pass><suffix>` files (suffix ".before.txt" or ".before.tir"),
// so a golden file that no test reads fails too.
inline std::vector<std::string> golden_passes(const std::string& stage, const std::string& suffix) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(golden_path(stage, ""))) {
        std::string file = entry.path().filename().string();
        if (file.size() > suffix.size() && file.ends_with(suffix)) {
            names.push_back(file.substr(0, file.size() - suffix.size()));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

// A golden suite's coverage check: the passes it tests (`listed`) are exactly those `header`
// declares (declared_passes) and those with a `<pass><suffix>` file in the stage's folder
// (golden_passes).
inline void expect_golden_coverage(std::vector<std::string> listed, const std::string& header,
                                   const std::string& declaration, const std::string& stage,
                                   const std::string& suffix) {
    std::sort(listed.begin(), listed.end());
    EXPECT_EQ(listed, declared_passes(header, declaration))
        << "the passes " << header << " declares";
    EXPECT_EQ(listed, golden_passes(stage, suffix)) << "the " << suffix << " files of " << stage;
}

}  // namespace anvil::golden
