// The VM program as data: JSON round trip, validation with messages that say where, shape code,
// and the VM's memory pool.
#include "runtime/vm_program.h"

#include <gtest/gtest.h>

#include "e2e/vm_test_util.h"
#include "runtime/memory_pool.h"

namespace anvil::runtime {
namespace {

using K = ShapeToken::Kind;

using anvil::testing::error_of;

VMProgram small_program() {
    VMProgram p;
    VMFunction f;
    f.name = "main";
    f.params = {"x"};
    f.num_registers = 3;
    f.num_slots = 1;
    f.slot_names = {"n"};
    VMInstruction match{.op = VMOp::match_shape, .reg = 0, .what = "input 'x'"};
    match.dims = {DimMatch{.bind_slot = 0}, DimMatch{.check = {{K::constant, 4}}}};
    VMInstruction alloc{.op = VMOp::alloc, .dst = 1, .node = "relu"};
    alloc.shape = {{{K::slot, 0}, {K::constant, 2}, {K::mul, 0}}, {{K::constant, 4}}};
    f.code = {match, alloc,
              VMInstruction{.op = VMOp::call_kernel, .args = {0, 1}, .name = "k", .node = "relu"},
              VMInstruction{.op = VMOp::kill, .args = {0}},
              VMInstruction{.op = VMOp::ret, .reg = 1}};
    p.functions = {f};
    p.outputs = {"output0"};
    return p;
}

TEST(VMProgram, JsonRoundTrip) {
    VMProgram p = small_program();
    std::string text = program_to_json(p, 2);
    VMProgram q = program_from_json(text);
    EXPECT_EQ(program_to_json(q, 2), text);
    ASSERT_EQ(q.functions.size(), 1u);
    EXPECT_EQ(q.functions[0].code[1].shape[0].size(), 3u);
    EXPECT_EQ(q.functions[0].slot_names, std::vector<std::string>{"n"});
    EXPECT_NE(text.find("\"$0\""), std::string::npos) << text;
}

TEST(VMProgram, ValidationSaysWhere) {
    VMProgram p = small_program();
    p.functions[0].code[2].args = {0, 7};
    EXPECT_NE(error_of([&] { validate_program(p); })
                  .find("functions[0] ('main') code[2] (call_kernel): argument register 7 out of "
                        "range [0, 3)"),
              std::string::npos);
    p = small_program();
    p.functions[0].code[1].shape[0] = {{K::slot, 0}, {K::mul, 0}};
    EXPECT_NE(error_of([&] { validate_program(p); }).find("malformed shape code"),
              std::string::npos);
    p = small_program();
    p.functions[0].code.pop_back();
    EXPECT_NE(error_of([&] { validate_program(p); }).find("does not end with ret"),
              std::string::npos);
    EXPECT_NE(
        error_of([&] { program_from_json("{\"version\": 1}"); }).find("missing key 'functions'"),
        std::string::npos);
    EXPECT_NE(error_of([&] { program_from_json("not json"); }).find("not a JSON object"),
              std::string::npos);
    // A field of the wrong JSON type is the document's error too (found by fuzzing).
    std::string wrong_type = program_to_json(small_program());
    wrong_type.replace(wrong_type.find("\"op\":\"match_shape\""), 0,
                       "\"check_dtype\":\"float32\",");
    EXPECT_NE(error_of([&] {
                  program_from_json(wrong_type);
              }).find("'check_dtype' must be true or false"),
              std::string::npos);
    std::string bad_op = program_to_json(small_program());
    bad_op.replace(bad_op.find("\"kill\""), 6, "\"jump\"");
    EXPECT_NE(error_of([&] { program_from_json(bad_op); }).find("unknown op 'jump'"),
              std::string::npos);
}

// shape_tensor's index 1 makes a 0-D tensor of its one value; it round-trips and is checked.
TEST(VMProgram, ScalarShapeTensor) {
    VMProgram p = small_program();
    VMInstruction scalar{.op = VMOp::shape_tensor, .dst = 2, .index = 1};
    scalar.dtype = {kDLInt, 64, 1};
    scalar.shape = {{{K::slot, 0}, {K::constant, 3}, {K::mul, 0}}};
    p.functions[0].code.insert(p.functions[0].code.begin() + 1, scalar);
    VMProgram q = program_from_json(program_to_json(p));
    EXPECT_EQ(q.functions[0].code[1].index, 1);
    EXPECT_EQ(program_to_json(q), program_to_json(p));
    p.functions[0].code[1].shape.push_back({{K::constant, 1}});
    EXPECT_NE(error_of([&] {
                  validate_program(p);
              }).find("a shape tensor's index is 0 (1-D) or 1 (0-D, of one value)"),
              std::string::npos);
}

// Programs from before "tuple_result": several outputs are a tuple's fields, one is the value.
TEST(VMProgram, TupleResultDefaultsToTheNumberOfOutputs) {
    VMProgram p = small_program();
    std::string text = program_to_json(p);
    EXPECT_NE(text.find("\"tuple_result\":false"), std::string::npos) << text;
    text.replace(text.find(",\"tuple_result\":false"), 21, "");
    EXPECT_FALSE(program_from_json(text).tuple_result);
    p.outputs = {"a", "b"};
    p.tuple_result = true;
    text = program_to_json(p);
    text.replace(text.find(",\"tuple_result\":true"), 20, "");
    EXPECT_TRUE(program_from_json(text).tuple_result);
}

// call_kernel's variants (kernels specialized for bucket sizes) round-trip and are checked; a
// program without them reads as before.
TEST(VMProgram, KernelVariants) {
    VMProgram p = small_program();
    p.functions[0].code[2].variants = {{"k_n4", {{K::slot, 0}, {K::constant, 4}, {K::eq, 0}}}};
    std::string text = program_to_json(p);
    EXPECT_NE(text.find("\"variants\":[{\"kernel\":\"k_n4\",\"when\":[\"$0\",4,\"==\"]}]"),
              std::string::npos)
        << text;
    VMProgram q = program_from_json(text);
    ASSERT_EQ(q.functions[0].code[2].variants.size(), 1u);
    EXPECT_EQ(q.functions[0].code[2].variants[0].kernel, "k_n4");
    EXPECT_EQ(program_to_json(q), text);
    EXPECT_EQ(program_to_json(small_program()).find("variants"), std::string::npos);
    p.functions[0].code[2].variants[0].when = {{K::slot, 3}};
    EXPECT_NE(
        error_of([&] { validate_program(p); }).find("code[2] (call_kernel): slot 3 out of range"),
        std::string::npos);
    p.functions[0].code[2].variants[0] = {"", {{K::constant, 1}}};
    EXPECT_NE(error_of([&] { validate_program(p); }).find("a variant without a kernel name"),
              std::string::npos);
    p = small_program();
    p.functions[0].code[1].variants = {{"k_n4", {{K::constant, 1}}}};
    EXPECT_NE(error_of([&] {
                  validate_program(p);
              }).find("code[1] (alloc): only call_kernel has variants"),
              std::string::npos);
    std::string bad = text;
    const std::string kernel_key = "\"kernel\":\"k_n4\",";
    bad.replace(bad.find(kernel_key), kernel_key.size(), "");
    EXPECT_NE(error_of([&] { program_from_json(bad); }).find("missing key 'kernel'"),
              std::string::npos)
        << bad;
}

TEST(VMProgram, ShapeCode) {
    ShapeCode c = {{K::slot, 0}, {K::constant, 3}, {K::add, 0}, {K::constant, 2}, {K::floordiv, 0}};
    EXPECT_EQ(eval_shape_code(c, {7}), 5);
    EXPECT_EQ(eval_shape_code({{K::constant, -7}, {K::constant, 2}, {K::floordiv, 0}}, {}), -4);
    EXPECT_EQ(eval_shape_code({{K::constant, -7}, {K::constant, 2}, {K::floormod, 0}}, {}), 1);
    EXPECT_EQ(eval_shape_code({{K::slot, 0}, {K::slot, 1}, {K::max, 0}}, {3, 9}), 9);
    EXPECT_EQ(shape_code_text(c, {"n"}), "((n + 3) / 2)");
    EXPECT_NE(error_of([&] {
                  eval_shape_code({{K::constant, 1}, {K::slot, 0}, {K::floordiv, 0}}, {0});
              }).find("division by zero"),
              std::string::npos);
}

TEST(MemoryPool, ReusesFreedBlocksThatFit) {
    auto pool = make_ref<MemoryPool>();
    void* first = nullptr;
    {
        NDArray a = pool->alloc({1000}, {kDLFloat, 32, 1});
        first = a.raw_data();
        EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % ANVIL_TENSOR_ALIGNMENT, 0u);
    }
    NDArray b = pool->alloc({900}, {kDLFloat, 32, 1});  // fits the freed 4000-byte block
    EXPECT_EQ(b.raw_data(), first);
    NDArray c = pool->alloc({100}, {kDLFloat, 32, 1});  // the block is in use: a new one
    EXPECT_NE(c.raw_data(), first);
    MemoryPoolStats s = pool->stats();
    EXPECT_EQ(s.allocations, 3);
    EXPECT_EQ(s.reuses, 1);
    // A tensor outliving its pool keeps the pool alive.
    NDArray d;
    {
        auto p2 = make_ref<MemoryPool>();
        d = p2->alloc({4}, {kDLFloat, 32, 1});
    }
    d.data<float>()[3] = 1.0f;
    EXPECT_EQ(d.data<float>()[3], 1.0f);
    EXPECT_NE(error_of([&] {
                  pool->alloc({-1}, {kDLFloat, 32, 1});
              }).find("negative dimension"),
              std::string::npos);
}

}  // namespace
}  // namespace anvil::runtime
