// The golden-file half of the golden tests (tests/golden/<stage>/): reading the files, and
// comparing printed IR with an expected file byte for byte, or rewriting that file when the
// environment sets ANVIL_UPDATE_GOLDEN (after an intended change of a pass's output; review the
// diff).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace anvil::golden {

// The path of `name` in tests/golden/<stage>/.
inline std::string golden_path(const std::string& stage, const std::string& name) {
    return std::string(ANVIL_SOURCE_DIR) + "/tests/golden/" + stage + "/" + name;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
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

}  // namespace anvil::golden
