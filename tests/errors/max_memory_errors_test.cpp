// The memory limit of a compiled model (--max-memory, PipelineOptions::max_memory_bytes): a
// model whose planned intermediate tensors and weights exceed it is refused with both sizes and
// the limit; sizes are read as 512M, 2G or bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "driver/compile.h"
#include "driver/plan_memory.h"
#include "errors/expect_message.h"
#include "graph/parser.h"
#include "ops/op_table.h"

namespace anvil::driver {
namespace {

// Two 1 MiB intermediate tensors (float32[512, 512]) and a 1 MiB output.
const char* kModel =
    "def @main(%x: Tensor[(512, 512), float32]) {\n"
    "  %0 = exp(%x);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = add(%1, %0);\n"
    "  negative(%2)\n"
    "}\n";

std::string temp_library(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("anvil_max_memory_" + name + "_" + std::to_string(getpid()) + ".so"))
        .string();
}

CompiledModel compile_with_limit(int64_t limit) {
    graph::IRModule m = graph::parse_module(kModel, ops::op_table());
    PipelineOptions options;
    options.opt_level = 0;  // every op its own kernel: the intermediates stay
    options.max_memory_bytes = limit;
    return compile_model(m, "llvm", options);
}

TEST(MaxMemory, OverTheLimitNamesThePlannedBytesAndTheLimit) {
    CompiledModel c = compile_with_limit(1 << 20);
    std::string path = temp_library("over");
    EXPECT_MESSAGE(export_model(c, path, Executor::graph), "the model needs ",
                   "bytes of planned intermediate tensors", "bytes of weights",
                   "exceeds the memory limit of 1048576 bytes (1.0 MiB, --max-memory)");
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MaxMemory, UnderTheLimitOrNoLimitExports) {
    for (int64_t limit : {int64_t{0}, int64_t{64} << 20}) {
        CompiledModel c = compile_with_limit(limit);
        std::string path = temp_library("under");
        EXPECT_NO_THROW(export_model(c, path, Executor::graph)) << limit;
        std::filesystem::remove(path);
    }
}

TEST(MaxMemory, TheVmsMemoryCannotBeChecked) {
    CompiledModel c = compile_with_limit(int64_t{1} << 30);
    EXPECT_MESSAGE(export_model(c, temp_library("vm"), Executor::vm), "--max-memory",
                   "the model runs on the VM", "not planned at compile time");
}

TEST(MaxMemory, CheckMemoryLimitCountsWeightsToo) {
    MemoryPlan plan;
    plan.storage_bytes = {600, 400};
    plan.planned_bytes = 1000;
    EXPECT_NO_THROW(check_memory_limit(plan, 24, 1024));
    EXPECT_NO_THROW(check_memory_limit(plan, INT64_MAX, 0));
    EXPECT_MESSAGE(check_memory_limit(plan, 25, 1024),
                   "the model needs 1025 bytes (1.0 KiB): 1000 bytes of planned intermediate "
                   "tensors in 2 buffers and 25 bytes of weights; that exceeds the memory limit "
                   "of 1024 bytes (1.0 KiB, --max-memory)");
    // Weights and buffers whose sum overflows 64 bits: the message says so instead of printing
    // the sum wrapped around into a negative size.
    EXPECT_MESSAGE(check_memory_limit(plan, INT64_MAX, 1024),
                   "the model needs more than 9223372036854775807 bytes: 1000 bytes of planned "
                   "intermediate tensors in 2 buffers and 9223372036854775807 bytes of weights; "
                   "that exceeds the memory limit of 1024 bytes");
}

TEST(MaxMemory, ParseByteSize) {
    EXPECT_EQ(parse_byte_size("1048576", "--max-memory"), 1048576);
    EXPECT_EQ(parse_byte_size("512M", "--max-memory"), int64_t{512} << 20);
    EXPECT_EQ(parse_byte_size("2G", "--max-memory"), int64_t{2} << 30);
    EXPECT_EQ(parse_byte_size("2gib", "--max-memory"), int64_t{2} << 30);
    EXPECT_EQ(parse_byte_size("64KB", "--max-memory"), int64_t{64} << 10);
    EXPECT_EQ(parse_byte_size("3T", "--max-memory"), int64_t{3} << 40);
    EXPECT_MESSAGE(parse_byte_size("", "--max-memory"), "--max-memory: '' is not a size");
    EXPECT_MESSAGE(parse_byte_size("lots", "--max-memory"), "'lots' is not a size",
                   "512M, 2G, 1048576");
    EXPECT_MESSAGE(parse_byte_size("12X", "--max-memory"), "'12X' has an unknown unit");
    EXPECT_MESSAGE(parse_byte_size("-5M", "--max-memory"), "'-5M' is not a size");
    EXPECT_MESSAGE(parse_byte_size("0", "--max-memory"), "'0' is zero");
    EXPECT_MESSAGE(parse_byte_size("99999999999999999999", "--max-memory"), "is too large");
    EXPECT_MESSAGE(parse_byte_size("9999999999T", "--max-memory"), "is too large");
}

}  // namespace
}  // namespace anvil::driver
