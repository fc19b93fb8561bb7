#include "runtime/packed_func.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "runtime/registry.h"

namespace anvil::runtime {
namespace {

// A C-style packed function: returns a * 10 + b, or fails naming what is wrong.
int c_mul_add(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
              int* ret_type_code, void* resource) {
    if (num_args != 2 || type_codes[0] != kAnvilInt || type_codes[1] != kAnvilInt) {
        anvil_set_last_error("c_mul_add: expected two ints");
        return -1;
    }
    int64_t scale = resource ? *static_cast<int64_t*>(resource) : 10;
    ret->v_int64 = args[0].v_int64 * scale + args[1].v_int64;
    *ret_type_code = kAnvilInt;
    return 0;
}

// Describes each argument's type and value, so one call checks the packing of every kind.
PackedFunc make_describer() {
    return PackedFunc([](const Args& args, RetValue* ret) {
        std::string out;
        for (int i = 0; i < args.size(); ++i) {
            ArgValue a = args[i];
            out += i ? " " : "";
            switch (a.type_code()) {
                case kAnvilInt:
                    out += "int:" + std::to_string(a.as_int());
                    break;
                case kAnvilFloat:
                    out += "float:" + std::to_string(a.as_float());
                    break;
                case kAnvilStr:
                    out += "str:" + a.as_string();
                    break;
                case kAnvilNull:
                    out += "null";
                    break;
                case kAnvilHandle:
                    out += "handle";
                    break;
                case kAnvilFunction:
                    out += "func:" + std::to_string(a.as_func()(1, 2).as_int());
                    break;
                case kAnvilDLTensor:
                    out += "tensor:" + describe_tensor(*a.as_tensor());
                    break;
                default:
                    out += "?";
            }
        }
        *ret = out;
    });
}

TEST(PackedFunc, PacksEveryArgumentKind) {
    PackedFunc describe = make_describer();
    NDArray a = NDArray::empty({2, 3}, dl_dtype_from_string("float32"));
    PackedFunc c_func(&c_mul_add, nullptr);
    int x = 5;
    std::string s = "text";
    RetValue r = describe(a, a.tensor(), 7, int64_t{-3}, true, 2.5, 1.5f, "lit", s, nullptr,
                          static_cast<void*>(&x), c_func);
    EXPECT_EQ(r.as_string(),
              "tensor:float32[2, 3] tensor:float32[2, 3] int:7 int:-3 int:1 float:2.500000 "
              "float:1.500000 str:lit str:text null handle func:12");
    EXPECT_EQ(describe().as_string(), "");
}

TEST(PackedFunc, ReturnsEveryValueKind) {
    PackedFunc f([](const Args& args, RetValue* ret) {
        std::string kind = args[0].as_string();
        if (kind == "int")
            *ret = 42;
        else if (kind == "float")
            *ret = 0.25;
        else if (kind == "str")
            *ret = std::string("hello");
        else if (kind == "null")
            *ret = nullptr;
        else if (kind == "tensor")
            *ret = args[1].as_tensor();
        else if (kind == "func")
            *ret = PackedFunc(&c_mul_add, nullptr);
    });
    EXPECT_EQ(f("int").as_int(), 42);
    EXPECT_EQ(f("int").as_float(), 42.0);
    EXPECT_EQ(f("float").as_float(), 0.25);
    EXPECT_EQ(f("str").as_string(), "hello");
    EXPECT_TRUE(f("null").is_null());
    EXPECT_TRUE(f("nothing").is_null());
    NDArray a = NDArray::empty({4}, dl_dtype_from_string("int8"));
    EXPECT_EQ(f("tensor", a).as_tensor(), a.tensor());
    PackedFunc returned = f("func").as_func();
    ASSERT_TRUE(returned.defined());
    EXPECT_EQ(returned(4, 2).as_int(), 42);
    EXPECT_THROW(f("int").as_string(), UserError);
}

TEST(PackedFunc, CFunctionWithResource) {
    int64_t scale = 100;
    PackedFunc f(&c_mul_add, &scale);
    EXPECT_EQ(f(3, 4).as_int(), 304);
}

TEST(PackedFunc, ErrorsPropagateAsUserError) {
    PackedFunc c_func(&c_mul_add, nullptr);
    try {
        c_func(1.0, 2);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "c_mul_add: expected two ints");
    }
    PackedFunc throwing([](const Args& args, RetValue*) { args[0].as_int(); });
    try {
        throwing("not an int");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "argument 0: expected int, got str");
    }
    try {
        throwing();
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "argument 0 requested but the function got 0 arguments");
    }
    PackedFunc silent(
        [](const AnvilValue*, const int*, int, AnvilValue*, int*, void*) { return 1; }, nullptr);
    anvil_set_last_error("stale message from earlier");
    try {
        silent();
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "packed function failed without an error message");
    }
    EXPECT_THROW(PackedFunc()(), UserError);
}

TEST(PackedFunc, CApiCallsCppLambdas) {
    PackedFunc f([](const Args& args, RetValue* ret) {
        if (args.size() == 0) throw UserError("need an argument");
        *ret = "got " + std::to_string(args[0].as_int());
    });
    AnvilFunctionHandle h = f.new_handle();
    AnvilValue arg;
    arg.v_int64 = 9;
    int code = kAnvilInt;
    AnvilValue ret;
    int ret_code = -1;
    ASSERT_EQ(anvil_func_call(h, &arg, &code, 1, &ret, &ret_code), 0);
    EXPECT_EQ(ret_code, kAnvilStr);
    EXPECT_STREQ(ret.v_str, "got 9");
    EXPECT_EQ(anvil_func_call(h, nullptr, nullptr, 0, &ret, &ret_code), -1);
    EXPECT_STREQ(anvil_get_last_error(), "need an argument");
    EXPECT_EQ(anvil_func_call(h, &arg, &code, 1, nullptr, nullptr), 0);  // result ignored
    EXPECT_EQ(anvil_func_free(h), 0);
    EXPECT_EQ(anvil_func_call(nullptr, nullptr, nullptr, 0, &ret, &ret_code), -1);
}

TEST(PackedFunc, HandlesAreReferenceCounted) {
    auto alive = std::make_shared<int>(1);
    std::weak_ptr<int> watch = alive;
    AnvilFunctionHandle h;
    {
        PackedFunc f([alive](const Args&, RetValue* ret) { *ret = *alive; });
        alive.reset();
        h = f.new_handle();
    }
    EXPECT_FALSE(watch.expired());  // the C handle keeps the lambda alive
    EXPECT_EQ(PackedFunc::borrow(h)().as_int(), 1);
    anvil_func_free(h);
    EXPECT_TRUE(watch.expired());
}

TEST(Registry, RegisterLookupOverrideRemove) {
    PackedFunc one([](const Args&, RetValue* ret) { *ret = 1; });
    PackedFunc two([](const Args&, RetValue* ret) { *ret = 2; });
    register_global_func("test.registry.value", one);
    EXPECT_EQ(get_global_func("test.registry.value")().as_int(), 1);
    try {
        register_global_func("test.registry.value", two);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'test.registry.value' is already registered"),
                  std::string::npos);
    }
    register_global_func("test.registry.value", two, /*override=*/true);
    EXPECT_EQ(get_global_func("test.registry.value")().as_int(), 2);
    auto names = list_global_func_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "test.registry.value"), names.end());
    EXPECT_TRUE(remove_global_func("test.registry.value"));
    EXPECT_FALSE(remove_global_func("test.registry.value"));
    EXPECT_FALSE(get_global_func("test.registry.value").defined());
    EXPECT_THROW(register_global_func("test.registry.null", PackedFunc()), UserError);
}

TEST(Registry, CApiSharesTheRegistry) {
    int64_t scale = 1000;
    ASSERT_EQ(anvil_func_register("test.registry.c", &c_mul_add, &scale, 0), 0);
    EXPECT_EQ(anvil_func_register("test.registry.c", &c_mul_add, nullptr, 0), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("already registered"), std::string::npos);
    EXPECT_EQ(get_global_func("test.registry.c")(2, 5).as_int(), 2005);

    register_global_func("test.registry.cpp", PackedFunc([](const Args& args, RetValue* ret) {
                             *ret = args[0].as_float() * 2;
                         }));
    AnvilFunctionHandle h = nullptr;
    ASSERT_EQ(anvil_func_get_global("test.registry.cpp", &h), 0);
    ASSERT_NE(h, nullptr);
    AnvilValue arg;
    arg.v_float64 = 1.25;
    int code = kAnvilFloat;
    AnvilValue ret;
    int ret_code;
    ASSERT_EQ(anvil_func_call(h, &arg, &code, 1, &ret, &ret_code), 0);
    EXPECT_EQ(ret_code, kAnvilFloat);
    EXPECT_EQ(ret.v_float64, 2.5);
    anvil_func_free(h);

    AnvilFunctionHandle missing = reinterpret_cast<AnvilFunctionHandle>(0x1);
    ASSERT_EQ(anvil_func_get_global("test.registry.missing", &missing), 0);
    EXPECT_EQ(missing, nullptr);
    EXPECT_EQ(anvil_func_register(nullptr, &c_mul_add, nullptr, 0), -1);
    EXPECT_EQ(anvil_func_register("test.registry.nullfn", nullptr, nullptr, 0), -1);
    remove_global_func("test.registry.c");
    remove_global_func("test.registry.cpp");
}

}  // namespace
}  // namespace anvil::runtime
