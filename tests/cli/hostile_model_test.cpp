// `anvil compile` on models it must refuse (issue 18): over --max-memory, malformed SIZE
// arguments, and hostile model files. Each exits 1 (2 for bad usage) with one message naming
// the argument or the file, and no stack.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_run.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_path;
using anvil::cli::testing::temp_so;
using anvil::cli::testing::write_temp_module;

// A static module of three 1 MiB tensors (float32[512, 512]) between four ops, in a file.
std::string write_module(const std::string& name) {
    return write_temp_module(name,
                             "def @main(%x: Tensor[(512, 512), float32]) {\n"
                             "  %0 = exp(%x);\n"
                             "  %1 = nn.relu(%0);\n"
                             "  %2 = add(%1, %0);\n"
                             "  negative(%2)\n"
                             "}\n");
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

TEST(CliMaxMemory, ModelOverTheLimitExitsOneWithBothSizes) {
    std::string model = write_module("over_limit");
    std::string so = temp_so("over_limit");
    Result r = run("compile " + model + " -O 0 -o " + so + " --max-memory 1M");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "error: the model needs ")) << r.output;
    EXPECT_TRUE(contains(r.output,
                         "exceeds the memory limit of 1048576 bytes (1.0 MiB, "
                         "--max-memory)"))
        << r.output;
    EXPECT_FALSE(fs::exists(so));
    Result ok = run("compile " + model + " -O 0 -o " + so + " --max-memory 64M");
    EXPECT_EQ(ok.status, 0) << ok.output;
    fs::remove(so);
    fs::remove(model);
}

TEST(CliMaxMemory, MalformedSizeNamesTheArgument) {
    std::string model = write_module("bad_size");
    for (const char* size : {"lots", "12X", "0"}) {
        Result r = run("compile " + model + " -o " + temp_so("bad_size") + " --max-memory " + size);
        EXPECT_EQ(r.status, 1) << r.output;
        EXPECT_TRUE(contains(r.output, std::string("error: --max-memory: '") + size + "'"))
            << r.output;
    }
    fs::remove(model);
}

TEST(CliHostileModels, TruncatedAndOversizedFilesNameTheFile) {
    std::string path = temp_path("garbage", ".onnx");
    std::ofstream(path, std::ios::binary) << "\x08\x07\x12\x04"
                                          << "ab";  // a string cut short
    Result r = run("compile " + path + " -o " + temp_so("garbage"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "error: " + path + ": not a valid ONNX model")) << r.output;
    // A (sparse) file past protobuf's 2 GiB is refused before it is read.
    fs::resize_file(path, uintmax_t{1} << 31);
    r = run("compile " + path + " -o " + temp_so("garbage"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "error: " + path + ": the file is 2147483648 bytes"))
        << r.output;
    fs::remove(path);
}

}  // namespace
