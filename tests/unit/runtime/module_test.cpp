#include "runtime/module.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/thread_pool.h"

namespace anvil::runtime {
namespace {

namespace fs = std::filesystem;

// What Anvil's export produces, in miniature: a function list and packed functions that call back
// into the runtime (errors, the thread pool).
constexpr const char* kModuleSource = R"SRC(
#include <anvil/runtime.h>

const char __anvil_function_names[] = "add_scalar\0fail\0fill_task_ids\0";

/* add_scalar(tensor float32, float value): adds value in place, returns the element count. */
int add_scalar(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
               int* ret_type_code, void* resource) {
    if (num_args != 2 || type_codes[0] != kAnvilDLTensor || type_codes[1] != kAnvilFloat) {
        anvil_set_last_error("add_scalar: expected (DLTensor*, float)");
        return -1;
    }
    DLTensor* t = (DLTensor*)args[0].v_handle;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
    float* data = (float*)t->data;
    for (int64_t i = 0; i < n; ++i) data[i] += (float)args[1].v_float64;
    ret->v_int64 = n;
    *ret_type_code = kAnvilInt;
    return 0;
}

int fail(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
         int* ret_type_code, void* resource) {
    anvil_set_last_error("fail: this function always fails");
    return -1;
}

static int store_task_id(int task_id, int num_tasks, void* closure) {
    ((int32_t*)closure)[task_id] = task_id;
    return 0;
}

/* fill_task_ids(tensor int32[n]): element i = i, written by parallel task i. */
int fill_task_ids(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
                  int* ret_type_code, void* resource) {
    DLTensor* t = (DLTensor*)args[0].v_handle;
    return anvil_parallel_launch(store_task_id, t->data, (int)t->shape[0]);
}
)SRC";

constexpr const char* kNotAModuleSource = "int something(void) { return 1; }\n";

constexpr const char* kMissingFunctionSource =
    "const char __anvil_function_names[] = \"present\\0absent\\0\";\n"
    "int present(void) { return 0; }\n";

class ModuleTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        char pattern[] = "/tmp/anvil_module_test_XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        dir_ = pattern;
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    // Compiles C source into <dir>/<name>.so with the system C compiler.
    static std::string build_library(const std::string& name, const std::string& source) {
        std::string c_path = dir_ + "/" + name + ".c";
        std::string so_path = dir_ + "/" + name + ".so";
        std::ofstream(c_path) << source;
        std::string command = "cc -shared -fPIC -O1 -I" ANVIL_SOURCE_DIR "/include -o " + so_path +
                              " " + c_path + " 2>&1";
        FILE* pipe = popen(command.c_str(), "r");
        std::string output;
        char buffer[256];
        while (pipe && fgets(buffer, sizeof(buffer), pipe)) output += buffer;
        int status = pipe ? pclose(pipe) : -1;
        EXPECT_EQ(status, 0) << command << "\n" << output;
        return so_path;
    }

    static std::string dir_;
};

std::string ModuleTest::dir_;

TEST_F(ModuleTest, LoadsAndCallsFunctions) {
    Module module = load_module(build_library("basic", kModuleSource));
    EXPECT_EQ(module.type_key(), "shared_library");
    EXPECT_EQ(module.function_names(),
              (std::vector<std::string>{"add_scalar", "fail", "fill_task_ids"}));

    PackedFunc add = module.get_function("add_scalar");
    ASSERT_TRUE(add.defined());
    NDArray a = NDArray::empty({2, 3}, dl_dtype_from_string("float32"));
    a.copy_from(std::vector<float>{0, 1, 2, 3, 4, 5});
    EXPECT_EQ(add(a, 0.5).as_int(), 6);
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}));

    try {
        add(a);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "add_scalar: expected (DLTensor*, float)");
    }
    try {
        module.get_function("fail")();
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "fail: this function always fails");
    }
    EXPECT_FALSE(module.get_function("no_such_function").defined());
}

TEST_F(ModuleTest, KernelsUseTheThreadPool) {
    int saved = anvil_num_threads();
    ASSERT_EQ(anvil_set_num_threads(4), 0);
    Module module = load_module(build_library("pool", kModuleSource));
    NDArray ids = NDArray::empty({100}, dl_dtype_from_string("int32"));
    module.get_function("fill_task_ids")(ids);
    std::vector<int32_t> values = ids.to_vector<int32_t>();
    for (int i = 0; i < 100; ++i) EXPECT_EQ(values[i], i);
    anvil_set_num_threads(saved);
}

TEST_F(ModuleTest, FunctionKeepsModuleAlive) {
    PackedFunc add;
    {
        Module module = load_module(build_library("alive", kModuleSource));
        add = module.get_function("add_scalar");
    }
    NDArray a = NDArray::empty({4}, dl_dtype_from_string("float32"));
    a.copy_from(std::vector<float>{1, 1, 1, 1});
    EXPECT_EQ(add(a, 1.0).as_int(), 4);  // the library is still mapped
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
}

TEST_F(ModuleTest, CApi) {
    std::string path = build_library("capi", kModuleSource);
    AnvilModuleHandle module = nullptr;
    ASSERT_EQ(anvil_module_load(path.c_str(), &module), 0) << anvil_get_last_error();
    AnvilFunctionHandle fn = nullptr;
    ASSERT_EQ(anvil_module_get_function(module, "add_scalar", &fn), 0);
    ASSERT_NE(fn, nullptr);
    AnvilFunctionHandle missing = nullptr;
    ASSERT_EQ(anvil_module_get_function(module, "missing", &missing), 0);
    EXPECT_EQ(missing, nullptr);
    ASSERT_EQ(anvil_module_free(module), 0);  // fn still holds the library

    int64_t shape[] = {3};
    DLTensor* t = nullptr;
    ASSERT_EQ(anvil_tensor_alloc(shape, 1, dl_dtype_from_string("float32"), {kDLCPU, 0}, &t), 0);
    for (int i = 0; i < 3; ++i) static_cast<float*>(t->data)[i] = static_cast<float>(i);
    AnvilValue args[2];
    args[0].v_handle = t;
    args[1].v_float64 = 10;
    int codes[2] = {kAnvilDLTensor, kAnvilFloat};
    AnvilValue ret;
    int ret_code;
    ASSERT_EQ(anvil_func_call(fn, args, codes, 2, &ret, &ret_code), 0);
    EXPECT_EQ(ret_code, kAnvilInt);
    EXPECT_EQ(ret.v_int64, 3);
    EXPECT_EQ(static_cast<float*>(t->data)[2], 12.0f);
    anvil_func_free(fn);
    anvil_tensor_free(t);

    EXPECT_EQ(anvil_module_load("/nonexistent/model.so", &module), -1);
    EXPECT_EQ(module, nullptr);
    EXPECT_NE(std::string(anvil_get_last_error()).find("/nonexistent/model.so"), std::string::npos);
}

TEST_F(ModuleTest, BadPathsGiveClearErrors) {
    try {
        load_module(dir_ + "/missing.so");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot load module '" + dir_ + "/missing.so': no such file");
    }
    std::string garbage = dir_ + "/garbage.so";
    std::ofstream(garbage) << "this is not an ELF file";
    try {
        load_module(garbage);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("cannot load module '" + garbage + "': ", 0), 0u)
            << e.what();
    }
    try {
        load_module(build_library("plain", kNotAModuleSource));
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("is not an Anvil module"), std::string::npos)
            << e.what();
    }
    try {
        load_module(build_library("incomplete", kMissingFunctionSource));
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("lists function 'absent' but does not define it"),
                  std::string::npos)
            << e.what();
    }
}

// What a JIT module from another library does: subclass ModuleNode and hand out functions that
// keep the node alive.
class CountingModule : public ModuleNode {
public:
    explicit CountingModule(bool* destroyed) : destroyed_(destroyed) {}
    ~CountingModule() override { *destroyed_ = true; }

    PackedFunc get_function(const std::string& name) override {
        if (name != "answer") return {};
        return make_function(&answer, const_cast<CountingModule*>(this));
    }
    std::vector<std::string> function_names() const override { return {"answer"}; }
    std::string type_key() const override { return "counting"; }

private:
    static int answer(const AnvilValue*, const int*, int, AnvilValue* ret, int* ret_type_code,
                      void* resource) {
        ret->v_int64 = static_cast<CountingModule*>(resource)->value_;
        *ret_type_code = kAnvilInt;
        return 0;
    }

    bool* destroyed_;
    int64_t value_ = 42;
};

TEST(ModuleNode, SubclassesKeepTheirNodeAlive) {
    bool destroyed = false;
    PackedFunc answer;
    {
        Module module(make_ref<CountingModule>(&destroyed));
        EXPECT_EQ(module.type_key(), "counting");
        answer = module.get_function("answer");
        EXPECT_FALSE(module.get_function("question").defined());
    }
    EXPECT_FALSE(destroyed);
    EXPECT_EQ(answer().as_int(), 42);
    answer = PackedFunc();
    EXPECT_TRUE(destroyed);
    EXPECT_THROW(Module().get_function("x"), UserError);
}

}  // namespace
}  // namespace anvil::runtime
