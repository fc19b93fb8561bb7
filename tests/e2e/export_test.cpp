// The ahead-of-time path: a schedule compiled, exported to a shared library, loaded by the
// runtime (as a deployed model would be) and run, giving the JIT's results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "codegen/llvm/llvm_module.h"
#include "matmul_schedules.h"
#include "run_kernel.h"

namespace anvil {
namespace {

TEST(Export, SharedLibraryMatchesJit) {
    examples::Matmul m = examples::make_matmul("parallel", 45, 70, 33);
    runtime::Module jit = driver::build(m.schedule, {m.A, m.B, m.C}, "llvm -mcpu=native", "mm");
    auto dir =
        std::filesystem::temp_directory_path() / ("anvil_export_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::string path = (dir / "mm.so").string();
    codegen::export_library(jit, path);
    runtime::Module loaded = runtime::load_module(path);
    EXPECT_EQ(loaded.function_names(), std::vector<std::string>{"mm"});

    auto a = testing::random_tensor({45, 33}, 31), b = testing::random_tensor({33, 70}, 32);
    auto c_jit = testing::zeros({45, 70}), c_so = testing::zeros({45, 70});
    jit.get_function("mm")(a, b, c_jit);
    loaded.get_function("mm")(a, b, c_so);
    EXPECT_EQ(c_jit.to_vector<float>(), c_so.to_vector<float>());

    // The library checks its arguments like the JIT does.
    auto wrong = testing::zeros({33, 45});
    try {
        loaded.get_function("mm")(a, wrong, c_so);
        ADD_FAILURE() << "a wrongly shaped argument was accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'B' has shape [33, 45]"), std::string::npos)
            << e.what();
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anvil
