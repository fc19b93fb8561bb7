// The VM's ONNX sequence and optional instructions: the list operations of vm_sequence.h with
// negative and out-of-range positions, joining tensors along any axis, the instructions in a
// program's JSON (match_shape's flags, {"any": true} dims) and what validation rejects, and
// such a program run by the VM.
#include "runtime/vm_sequence.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "e2e/vm_test_util.h"
#include "runtime/vm.h"
#include "runtime/vm_program.h"

namespace anvil::runtime {
namespace {

using K = ShapeToken::Kind;

using anvil::testing::contains;
using anvil::testing::error_of;
using anvil::testing::NoKernels;

// A float32 tensor of `shape` holding first, first + 1, ...
NDArray counting(const std::vector<int64_t>& shape, float first = 0) {
    NDArray a = NDArray::empty(shape, {kDLFloat, 32, 1});
    std::vector<float> v(static_cast<size_t>(a.num_elements()));
    std::iota(v.begin(), v.end(), first);
    a.copy_from(v);
    return a;
}

NDArray scalar_i64(int64_t v) {
    NDArray a = NDArray::empty({}, {kDLInt, 64, 1});
    a.copy_from(std::vector<int64_t>{v});
    return a;
}

std::vector<int64_t> shape_of(const NDArray& a) {
    return {a.shape().begin(), a.shape().end()};
}

// The sequence (t0, t1, t2), t_i a [i + 1] float32 tensor starting at 10 * i.
VMValue three() {
    return VMValue::tuple({counting({1}, 0), counting({2}, 10), counting({3}, 20)});
}

// The first value of each element: which tensors the sequence holds, in order.
std::vector<float> firsts(const VMValue& seq) {
    std::vector<float> out;
    for (const VMValue& v : seq.fields) out.push_back(v.tensor.to_vector<float>()[0]);
    return out;
}

TEST(VMSequence, LengthAndAtCountNegativePositionsFromTheBack) {
    VMValue s = three();
    NDArray n = sequence_length(s, "len");
    EXPECT_EQ(n.ndim(), 0);
    EXPECT_TRUE(dl_dtype_equal(n.dtype(), {kDLInt, 64, 1}));
    EXPECT_EQ(n.to_vector<int64_t>(), std::vector<int64_t>{3});
    EXPECT_EQ(sequence_length(VMValue::tuple({}), "len").to_vector<int64_t>()[0], 0);
    for (auto [pos, want] :
         std::vector<std::pair<int64_t, size_t>>{{0, 0}, {2, 2}, {-1, 2}, {-3, 0}, {-2, 1}}) {
        VMValue v = sequence_at(s, scalar_i64(pos), "at");
        EXPECT_TRUE(v.tensor.same_as(s.fields[want].tensor)) << pos;  // no copy
    }
    // An int32 one-element 1-D position is a position too.
    NDArray p32 = NDArray::empty({1}, {kDLInt, 32, 1});
    p32.copy_from(std::vector<int32_t>{-2});
    EXPECT_TRUE(sequence_at(s, p32, "at").tensor.same_as(s.fields[1].tensor));
}

TEST(VMSequence, OutOfRangePositionsNameTheNode) {
    VMValue s = three();
    EXPECT_EQ(error_of([&] { sequence_at(s, scalar_i64(3), "SequenceAt_7"); }),
              "vm: node 'SequenceAt_7': position 3 is out of range for a sequence of 3 tensor(s) "
              "(valid: -3 to 2)");
    EXPECT_TRUE(contains(error_of([&] { sequence_at(s, scalar_i64(-4), "SequenceAt_7"); }),
                         "node 'SequenceAt_7': position -4 is out of range"));
    EXPECT_TRUE(contains(error_of([&] { sequence_at(VMValue::tuple({}), scalar_i64(0), "at"); }),
                         "position 0 is out of range for a sequence of 0 tensor(s)"));
    // Positions are one-element integer tensors.
    EXPECT_TRUE(contains(error_of([&] { sequence_at(s, counting({}), "at"); }),
                         "vm: node 'at': a sequence position must be a one-element integer"));
    NDArray two = NDArray::empty({2}, {kDLInt, 64, 1});
    two.copy_from(std::vector<int64_t>{0, 1});
    EXPECT_TRUE(contains(error_of([&] { sequence_at(s, two, "at"); }), "one-element integer"));
    // A tensor or nothing where a sequence belongs.
    EXPECT_TRUE(contains(error_of([&] { sequence_at(counting({2}), scalar_i64(0), "at"); }),
                         "vm: node 'at': expected a sequence, got float32[2]"));
    EXPECT_TRUE(contains(error_of([&] { sequence_length(VMValue(), "len"); }),
                         "vm: node 'len': expected a sequence, got nothing"));
}

TEST(VMSequence, InsertBeforeAPositionOrAtTheBack) {
    VMValue s = three();
    NDArray t = counting({4}, 99);
    auto insert_at = [&](int64_t pos) {
        VMValue p = scalar_i64(pos);
        return firsts(sequence_insert(s, t, &p, "ins"));
    };
    EXPECT_EQ(insert_at(0), (std::vector<float>{99, 0, 10, 20}));
    EXPECT_EQ(insert_at(1), (std::vector<float>{0, 99, 10, 20}));
    EXPECT_EQ(insert_at(-1), (std::vector<float>{0, 10, 99, 20}));  // before the last
    EXPECT_EQ(insert_at(-3), (std::vector<float>{99, 0, 10, 20}));
    EXPECT_EQ(insert_at(3), (std::vector<float>{0, 10, 20, 99}));  // n: at the back
    EXPECT_EQ(firsts(sequence_insert(s, t, nullptr, "ins")), (std::vector<float>{0, 10, 20, 99}));
    EXPECT_EQ(firsts(s), (std::vector<float>{0, 10, 20}));  // the input sequence is unchanged
    EXPECT_EQ(error_of([&] { insert_at(4); }),
              "vm: node 'ins': position 4 is out of range for a sequence of 3 tensor(s) (valid: "
              "-3 to 3)");
    EXPECT_TRUE(contains(error_of([&] { insert_at(-4); }), "position -4 is out of range"));
    // Into an empty sequence: at 0 (also -0) or at the back.
    VMValue p0 = scalar_i64(0);
    EXPECT_EQ(firsts(sequence_insert(VMValue::tuple({}), t, &p0, "ins")), std::vector<float>{99});
}

TEST(VMSequence, InsertChecksTheDtypeAndTheValue) {
    VMValue s = three();
    NDArray ints = NDArray::empty({2}, {kDLInt, 32, 1});
    EXPECT_EQ(error_of([&] { sequence_insert(s, ints, nullptr, "SequenceInsert_2"); }),
              "vm: node 'SequenceInsert_2': cannot insert a int32[2] into a sequence of float32");
    EXPECT_TRUE(contains(error_of([&] { sequence_insert(s, VMValue(), nullptr, "ins"); }),
                         "vm: node 'ins': the inserted value is not a tensor"));
    EXPECT_TRUE(contains(error_of([&] { sequence_insert(s, s, nullptr, "ins"); }),
                         "the inserted value is not a tensor"));
    // An empty sequence takes any dtype (its graph type fixed it).
    EXPECT_EQ(sequence_insert(VMValue::tuple({}), ints, nullptr, "ins").fields.size(), 1u);
}

TEST(VMSequence, EraseAtAPositionOrTheLast) {
    VMValue s = three();
    auto erase_at = [&](int64_t pos) {
        VMValue p = scalar_i64(pos);
        return firsts(sequence_erase(s, &p, "del"));
    };
    EXPECT_EQ(erase_at(0), (std::vector<float>{10, 20}));
    EXPECT_EQ(erase_at(-1), (std::vector<float>{0, 10}));
    EXPECT_EQ(erase_at(-3), (std::vector<float>{10, 20}));
    EXPECT_EQ(erase_at(1), (std::vector<float>{0, 20}));
    EXPECT_EQ(firsts(sequence_erase(s, nullptr, "del")), (std::vector<float>{0, 10}));
    EXPECT_EQ(firsts(s), (std::vector<float>{0, 10, 20}));
    // n is no element (unlike insert's n).
    EXPECT_EQ(error_of([&] { erase_at(3); }),
              "vm: node 'del': position 3 is out of range for a sequence of 3 tensor(s) (valid: "
              "-3 to 2)");
    EXPECT_TRUE(contains(error_of([&] { erase_at(-4); }), "position -4 is out of range"));
    VMValue p0 = scalar_i64(0);
    for (const VMValue* pos : std::vector<const VMValue*>{nullptr, &p0}) {
        EXPECT_EQ(error_of([&] { sequence_erase(VMValue::tuple({}), pos, "SequenceErase_1"); }),
                  "vm: node 'SequenceErase_1': cannot erase from an empty sequence");
    }
    // Down to empty, then one more.
    VMValue one = VMValue::tuple({counting({2})});
    VMValue none_left = sequence_erase(one, nullptr, "del");
    EXPECT_EQ(none_left.kind, VMValue::Kind::tuple);
    EXPECT_TRUE(none_left.fields.empty());
    EXPECT_TRUE(contains(error_of([&] { sequence_erase(none_left, nullptr, "del"); }), "empty"));
}

// SplitToSequence: by sizes, by a scalar size, in parts of one (squeezed or not), along inner
// axes; what does not fit names the node.
TEST(VMSequence, SplitToSequence) {
    auto pool = make_ref<MemoryPool>();
    NDArray x = counting({2, 5});  // rows 0..4 and 5..9
    auto split = [&](const VMValue* s, int64_t axis, bool squeeze = false) {
        return split_to_sequence(x, s, axis, squeeze, *pool, "split").fields;
    };
    NDArray sizes = NDArray::empty({3}, {kDLInt, 32, 1});
    sizes.copy_from(std::vector<int32_t>{2, 0, 3});
    VMValue by_sizes(sizes);
    std::vector<VMValue> parts = split(&by_sizes, 1);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].tensor.to_vector<float>(), (std::vector<float>{0, 1, 5, 6}));
    EXPECT_EQ(shape_of(parts[1].tensor), (std::vector<int64_t>{2, 0}));
    EXPECT_EQ(parts[2].tensor.to_vector<float>(), (std::vector<float>{2, 3, 4, 7, 8, 9}));
    VMValue three(scalar_i64(3));
    parts = split(&three, 1);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(shape_of(parts[1].tensor), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(parts[1].tensor.to_vector<float>(), (std::vector<float>{3, 4, 8, 9}));
    parts = split(nullptr, 0, true);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(shape_of(parts[1].tensor), (std::vector<int64_t>{5}));
    EXPECT_EQ(parts[1].tensor.to_vector<float>(), (std::vector<float>{5, 6, 7, 8, 9}));
    parts = split(nullptr, 1);
    ASSERT_EQ(parts.size(), 5u);
    EXPECT_EQ(shape_of(parts[4].tensor), (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(parts[4].tensor.to_vector<float>(), (std::vector<float>{4, 9}));
    EXPECT_EQ(error_of([&] { split(&by_sizes, 0); }),
              "vm: node 'split': the split sizes [2, 0, 3] add up to 5; they do not fit axis 0 "
              "of float32[2, 5]");
    EXPECT_EQ(error_of([&] { split(nullptr, 2); }),
              "vm: node 'split': axis 2 is out of range for float32[2, 5]");
    VMValue floats(counting({2}));
    EXPECT_TRUE(contains(error_of([&] { split(&floats, 0); }), "the split must hold integers"));
    VMValue matrix(NDArray::empty({1, 1}, {kDLInt, 64, 1}));
    EXPECT_TRUE(contains(error_of([&] { split(&matrix, 0); }), "a scalar or 1-D"));
}

class ConcatTensors : public ::testing::Test {
protected:
    NDArray join(const std::vector<NDArray>& items, int64_t axis, bool new_axis) {
        return concat_tensors(items, axis, new_axis, *pool_, "cat", "element");
    }
    std::string join_error(const std::vector<NDArray>& items, int64_t axis, bool new_axis) {
        return error_of([&] { join(items, axis, new_axis); });
    }
    Ref<MemoryPool> pool_ = make_ref<MemoryPool>();
};

TEST_F(ConcatTensors, AlongAxisZero) {
    NDArray out = join({counting({1, 3}, 0), counting({2, 3}, 10)}, 0, false);
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0, 1, 2, 10, 11, 12, 13, 14, 15}));
}

TEST_F(ConcatTensors, AlongInnerAxesInterleaveRows) {
    std::vector<NDArray> items = {counting({2, 2}, 0), counting({2, 1}, 10), counting({2, 3}, 20)};
    std::vector<float> want = {0, 1, 10, 20, 21, 22, 2, 3, 11, 23, 24, 25};
    for (int64_t axis : {1, -1}) {
        NDArray out = join(items, axis, false);
        EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 6})) << axis;
        EXPECT_EQ(out.to_vector<float>(), want) << axis;
    }
    // The middle axis of rank 3, with an element of size 0 along it.
    NDArray out =
        join({counting({2, 1, 2}, 0), counting({2, 0, 2}), counting({2, 2, 2}, 10)}, -2, false);
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 2}));
    EXPECT_EQ(out.to_vector<float>(),
              (std::vector<float>{0, 1, 10, 11, 12, 13, 2, 3, 14, 15, 16, 17}));
}

TEST_F(ConcatTensors, StackOnANewAxis) {
    std::vector<NDArray> items = {counting({2, 3}, 0), counting({2, 3}, 10)};
    NDArray front = join(items, 0, true);
    EXPECT_EQ(shape_of(front), (std::vector<int64_t>{2, 2, 3}));
    EXPECT_EQ(front.to_vector<float>(),
              (std::vector<float>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}));
    NDArray middle = join(items, 1, true);
    EXPECT_EQ(shape_of(middle), (std::vector<int64_t>{2, 2, 3}));
    EXPECT_EQ(middle.to_vector<float>(),
              (std::vector<float>{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}));
    for (int64_t axis : {2, -1}) {  // the new axis is last: the items' elements interleave
        NDArray back = join(items, axis, true);
        EXPECT_EQ(shape_of(back), (std::vector<int64_t>{2, 3, 2})) << axis;
        EXPECT_EQ(back.to_vector<float>(),
                  (std::vector<float>{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}))
            << axis;
    }
    // Scalars stack into a vector, but have no axis to concatenate along.
    NDArray v = join({counting({}, 4), counting({}, 7), counting({}, 1)}, 0, true);
    EXPECT_EQ(shape_of(v), std::vector<int64_t>{3});
    EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{4, 7, 1}));
    EXPECT_EQ(join_error({counting({}), counting({})}, 0, false),
              "vm: node 'cat': cannot concatenate scalars");
}

TEST_F(ConcatTensors, MismatchedElementsAreErrors) {
    EXPECT_EQ(join_error({counting({2, 3}), counting({3, 1})}, 1, false),
              "vm: node 'cat': element 1 is float32[3, 1], element 0 is float32[2, 3]; they must "
              "agree in dtype and in every dimension but the axis");
    EXPECT_TRUE(
        contains(join_error({counting({2, 3}), counting({2, 3}), counting({2, 4})}, 0, true),
                 "element 2 is float32[2, 4], element 0 is float32[2, 3]; they must agree "
                 "in dtype and in every dimension"));
    EXPECT_TRUE(contains(join_error({counting({2, 3}), counting({2, 3, 1})}, 0, false),
                         "element 1 is float32[2, 3, 1]"));
    EXPECT_TRUE(
        contains(join_error({counting({2}), NDArray::empty({2}, {kDLInt, 32, 1})}, 0, false),
                 "element 1 is int32[2]"));
    EXPECT_EQ(join_error({counting({2, 3})}, 2, false),
              "vm: node 'cat': axis 2 is out of range for rank 2");
    EXPECT_TRUE(contains(join_error({counting({2, 3})}, -3, false), "axis -3 is out of range"));
    EXPECT_TRUE(
        contains(join_error({counting({2, 3})}, 3, true), "axis 3 is out of range for rank 3"));
    EXPECT_EQ(join_error({}, 0, false), "vm: node 'cat': cannot join an empty sequence");
    // What names the items in the message.
    EXPECT_TRUE(contains(
        error_of([&] {
            concat_tensors({counting({2}), counting({3})}, 0, true, *pool_, "loop", "iteration");
        }),
        "iteration 1 is float32[3], iteration 0 is float32[2]"));
}

TEST_F(ConcatTensors, OfASequence) {
    VMValue s = three();
    NDArray out = concat_sequence(s, 0, false, *pool_, "cfs");
    EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0, 10, 11, 20, 21, 22}));
    EXPECT_TRUE(contains(error_of([&] { concat_sequence(s, 0, true, *pool_, "cfs"); }),
                         "vm: node 'cfs': element 1 is float32[2], element 0 is float32[1]"));
    EXPECT_TRUE(
        contains(error_of([&] { concat_sequence(VMValue::tuple({}), 0, false, *pool_, "cfs"); }),
                 "cannot join an empty sequence"));
    EXPECT_TRUE(contains(
        error_of([&] { concat_sequence(VMValue::tuple({VMValue()}), 0, false, *pool_, "cfs"); }),
        "vm: node 'cfs': a sequence element is not a tensor"));
}

VMInstruction match(int reg, std::vector<DimMatch> dims, int64_t flags, const char* what,
                    DLDataType dtype = {kDLFloat, 32, 1}) {
    VMInstruction in{.op = VMOp::match_shape, .reg = reg, .what = what, .index = flags};
    in.dims = std::move(dims);
    in.dtype = dtype;
    return in;
}

DimMatch any_dim() {
    return DimMatch{};
}
DimMatch dim_is(int64_t v) {
    return DimMatch{.check = {{K::constant, v}}};
}

VMFunction function(std::string name, std::vector<std::string> params, int registers,
                    std::vector<VMInstruction> code) {
    VMFunction f;
    f.name = std::move(name);
    f.params = std::move(params);
    f.num_registers = registers;
    f.code = std::move(code);
    return f;
}

// main(s: Sequence[(?, 3), float32], o: Optional[Tensor[(2,), float32]], p: int64 of any rank)
// -> (has_value(o), length(s), s[p], insert(s, s[p], p), erase(that), concat(that, 0));
// get(o) -> o's value; stack(s) -> s stacked on a new last axis; nothing() -> none.
VMProgram sequence_program() {
    VMProgram p;
    std::vector<VMInstruction> main = {
        match(0, {any_dim(), dim_is(3)}, kMatchSequence, "input 's'"),
        match(1, {dim_is(2)}, kMatchMayBeNone, "input 'o'"),
        match(2, {}, kMatchAnyRank, "input 'p'", {kDLInt, 64, 1}),
        VMInstruction{.op = VMOp::has_value, .dst = 3, .reg = 1},
        VMInstruction{.op = VMOp::seq_length, .dst = 4, .reg = 0},
        VMInstruction{.op = VMOp::seq_at, .dst = 5, .reg = 0, .args = {2}, .node = "at"},
        VMInstruction{.op = VMOp::seq_insert, .dst = 6, .reg = 0, .args = {5, 2}, .node = "ins"},
        VMInstruction{.op = VMOp::seq_erase, .dst = 7, .reg = 6, .node = "del"},
        VMInstruction{.op = VMOp::seq_concat, .dst = 8, .reg = 6, .node = "cat", .index = 0},
        VMInstruction{.op = VMOp::tuple, .dst = 9, .args = {3, 4, 5, 6, 7, 8}},
        VMInstruction{.op = VMOp::kill, .args = {5, 6, 7, 8}},
        VMInstruction{.op = VMOp::ret, .reg = 9},
    };
    p.functions.push_back(function("main", {"s", "o", "p"}, 10, main));
    p.functions.push_back(function(
        "get", {"o"}, 2,
        {match(0, {any_dim()}, kMatchMayBeNone | kMatchAnyRank, "argument 'o'"),
         VMInstruction{.op = VMOp::get_value, .dst = 1, .reg = 0, .node = "OptionalGetElement_3"},
         VMInstruction{.op = VMOp::ret, .reg = 1}}));
    p.functions.push_back(function(
        "stack", {"s"}, 2,
        {match(0, {}, kMatchSequence | kMatchAnyRank, "argument 's'"),
         VMInstruction{.op = VMOp::seq_stack, .dst = 1, .reg = 0, .node = "stack", .index = -1},
         VMInstruction{.op = VMOp::ret, .reg = 1}}));
    p.functions.push_back(function(
        "nothing", {}, 1,
        {VMInstruction{.op = VMOp::none, .dst = 0}, VMInstruction{.op = VMOp::ret, .reg = 0}}));
    p.outputs = {"has", "n", "at", "inserted", "erased", "joined"};
    return p;
}

TEST(VMSequenceProgram, JsonRoundTripKeepsTheOpsAndMatchFlags) {
    VMProgram p = sequence_program();
    std::string text = program_to_json(p, 2);
    VMProgram q = program_from_json(text);
    EXPECT_EQ(program_to_json(q, 2), text);
    const auto& code = q.functions[0].code;
    EXPECT_EQ(code[0].index, kMatchSequence);
    EXPECT_EQ(code[1].index, kMatchMayBeNone);
    EXPECT_EQ(code[2].index, kMatchAnyRank);
    EXPECT_EQ(q.functions[1].code[0].index, kMatchMayBeNone | kMatchAnyRank);
    ASSERT_EQ(code[0].dims.size(), 2u);
    EXPECT_EQ(code[0].dims[0].bind_slot, -1);
    EXPECT_TRUE(code[0].dims[0].check.empty());  // {"any": true}
    EXPECT_EQ(code[0].dims[1].check.size(), 1u);
    EXPECT_EQ(code[5].op, VMOp::seq_at);
    EXPECT_EQ(code[5].args, std::vector<int>{2});
    EXPECT_EQ(code[6].args, (std::vector<int>{5, 2}));
    EXPECT_TRUE(code[7].args.empty());
    EXPECT_EQ(code[8].op, VMOp::seq_concat);
    EXPECT_EQ(q.functions[2].code[1].op, VMOp::seq_stack);
    EXPECT_EQ(q.functions[2].code[1].index, -1);
    EXPECT_EQ(q.functions[3].code[0].op, VMOp::none);
    EXPECT_TRUE(contains(program_to_json(p), "\"dims\":[{\"any\":true},{\"check\":[3]}]"));
    for (const char* part :
         {"\"op\": \"seq_at\"", "\"op\": \"seq_insert\"", "\"op\": \"seq_erase\"",
          "\"op\": \"seq_length\"", "\"op\": \"seq_concat\"", "\"op\": \"seq_stack\"",
          "\"op\": \"none\"", "\"op\": \"has_value\"", "\"op\": \"get_value\""}) {
        EXPECT_TRUE(contains(text, part));
    }
}

TEST(VMSequenceProgram, ValidationRejectsBadSequenceInstructions) {
    auto main_error = [](const std::function<void(std::vector<VMInstruction>&)>& edit) {
        VMProgram p = sequence_program();
        edit(p.functions[0].code);
        return error_of([&] { validate_program(p); });
    };
    EXPECT_EQ(main_error([](auto& code) { code[5].args.clear(); }),
              "vm program: functions[0] ('main') code[5] (seq_at): takes 1 to 1 argument(s)");
    EXPECT_TRUE(contains(main_error([](auto& code) {
                             code[6].args = {5, 2, 2};
                         }),
                         "code[6] (seq_insert): takes 1 to 2 argument(s)"));
    EXPECT_TRUE(contains(main_error([](auto& code) { code[6].args.clear(); }),
                         "code[6] (seq_insert): takes 1 to 2 argument(s)"));
    EXPECT_TRUE(contains(main_error([](auto& code) {
                             code[7].args = {2, 2};
                         }),
                         "code[7] (seq_erase): takes 0 to 1 argument(s)"));
    EXPECT_TRUE(contains(main_error([](auto& code) { code[5].args = {12}; }),
                         "code[5] (seq_at): argument register 12 out of range [0, 10)"));
    EXPECT_TRUE(contains(main_error([](auto& code) { code[4].reg = -1; }),
                         "code[4] (seq_length): source register -1 out of range"));
    EXPECT_TRUE(contains(main_error([](auto& code) { code[8].dst = 10; }),
                         "code[8] (seq_concat): destination register 10 out of range"));
    auto split_error = [&](int64_t axis, std::vector<int> args, const std::string& name) {
        return main_error([&](auto& code) {
            code[8] = VMInstruction{.op = VMOp::seq_split,
                                    .dst = code[8].dst,
                                    .reg = 1,
                                    .args = args,
                                    .name = name,
                                    .index = axis};
        });
    };
    EXPECT_EQ(split_error(0, {2}, ""), "");
    EXPECT_EQ(split_error(1, {}, "squeeze"), "");
    EXPECT_TRUE(contains(split_error(-1, {}, ""), "(seq_split): the axis must be non-negative"));
    EXPECT_TRUE(contains(split_error(0, {2}, "squeeze"), "\"squeeze\" without a split"));
    EXPECT_TRUE(contains(split_error(0, {2, 2}, ""), "takes at most one argument, the split"));
    EXPECT_TRUE(contains(main_error([](auto& code) { code[0].index = 8; }),
                         "code[0] (match_shape): unknown match flags"));
    EXPECT_TRUE(
        contains(main_error([](auto& code) { code[1].index = -1; }), "unknown match flags"));
    // A sequence's elements or an optional's value may differ run to run: nothing to bind.
    auto binds = [](int64_t flags) {
        VMProgram p = sequence_program();
        p.functions[0].num_slots = 1;
        p.functions[0].code[0].dims[0] = DimMatch{.bind_slot = 0};
        p.functions[0].code[0].index = flags;
        return error_of([&] { validate_program(p); });
    };
    EXPECT_TRUE(contains(binds(kMatchSequence), "a sequence or an optional binds no dimension"));
    EXPECT_TRUE(contains(binds(kMatchMayBeNone), "a sequence or an optional binds no dimension"));
    EXPECT_EQ(binds(0), "");

    // The same from JSON: seq_at without its position, a dim of an unknown kind.
    std::string text = program_to_json(sequence_program());
    std::string no_pos = text;
    size_t at = no_pos.find("\"args\":[2]");
    ASSERT_NE(at, std::string::npos) << text;
    no_pos.replace(at, 10, "\"args\":[]");
    EXPECT_TRUE(contains(error_of([&] { program_from_json(no_pos); }),
                         "code[5] (seq_at): takes 1 to 1 argument(s)"));
    std::string bad_dim = text;
    bad_dim.replace(bad_dim.find("{\"any\":true}"), 12, "{\"all\":true}");
    EXPECT_TRUE(contains(error_of([&] { program_from_json(bad_dim); }),
                         "a dim must be {\"bind\": slot}, {\"check\": code} or {\"any\": true}"));
}

class VMSequenceRun : public ::testing::Test {
protected:
    VMValue invoke(const std::string& fn, std::vector<VMValue> args) {
        return vm_.invoke(fn, std::move(args));
    }
    std::string invoke_error(const std::string& fn, std::vector<VMValue> args) {
        return error_of([&] { invoke(fn, std::move(args)); });
    }
    // Run from the program's JSON, as an artifact holds it.
    VirtualMachine vm_{
        program_from_json(program_to_json(sequence_program())), {}, Module(make_ref<NoKernels>())};
};

VMValue rows(const std::vector<int64_t>& lengths) {
    std::vector<VMValue> items;
    float first = 0;
    for (int64_t n : lengths) {
        items.emplace_back(counting({n, 3}, first));
        first += 100;
    }
    return VMValue::tuple(std::move(items));
}

TEST_F(VMSequenceRun, RunsTheSequenceInstructions) {
    VMValue out = invoke("main", {rows({1, 2}), VMValue(), scalar_i64(-1)});
    ASSERT_EQ(out.fields.size(), 6u);
    EXPECT_EQ(out.fields[0].tensor.to_vector<uint8_t>(), std::vector<uint8_t>{0});
    EXPECT_EQ(out.fields[1].tensor.to_vector<int64_t>(), std::vector<int64_t>{2});
    EXPECT_EQ(shape_of(out.fields[2].tensor), (std::vector<int64_t>{2, 3}));  // s[-1]
    EXPECT_EQ(firsts(out.fields[3]), (std::vector<float>{0, 100, 100}));      // before the last
    EXPECT_EQ(firsts(out.fields[4]), (std::vector<float>{0, 100}));
    NDArray joined = out.fields[5].tensor;
    EXPECT_EQ(shape_of(joined), (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(joined.to_vector<float>()[3], 100.0f);

    NDArray o = counting({2});
    out = invoke("main", {rows({4}), o, scalar_i64(0)});
    EXPECT_EQ(out.fields[0].tensor.to_vector<uint8_t>(), std::vector<uint8_t>{1});
    EXPECT_EQ(shape_of(out.fields[5].tensor), (std::vector<int64_t>{8, 3}));

    EXPECT_EQ(invoke("nothing", {}).kind, VMValue::Kind::none);
    EXPECT_TRUE(invoke("get", {o}).tensor.same_as(o));
    NDArray stacked =
        invoke("stack", {VMValue::tuple({counting({2}, 0), counting({2}, 5)})}).tensor;
    EXPECT_EQ(shape_of(stacked), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(stacked.to_vector<float>(), (std::vector<float>{0, 5, 1, 6}));
}

TEST_F(VMSequenceRun, ErrorsNameTheNodeOrTheInput) {
    EXPECT_TRUE(
        contains(invoke_error("main", {rows({1, 2}), VMValue(), scalar_i64(2)}),
                 "vm: node 'at': position 2 is out of range for a sequence of 2 tensor(s)"));
    EXPECT_TRUE(contains(invoke_error("main", {rows({}), VMValue(), scalar_i64(0)}),
                         "vm: node 'at': position 0 is out of range for a sequence of 0"));
    EXPECT_EQ(invoke_error("get", {VMValue()}),
              "vm: node 'OptionalGetElement_3': the optional is empty");
    EXPECT_TRUE(contains(invoke_error("stack", {rows({1, 2})}),
                         "vm: node 'stack': element 1 is float32[2, 3], element 0 is "
                         "float32[1, 3]; they must agree in dtype and in every dimension"));
    // match_shape over each element, over an optional's value, and of the flags' kinds.
    EXPECT_TRUE(contains(invoke_error("main", {VMValue::tuple({counting({1, 3}), counting({2, 4})}),
                                               VMValue(), scalar_i64(0)}),
                         "vm: element 1 of input 's' has shape [2, 4], expected [?, 3]"));
    EXPECT_TRUE(contains(invoke_error("main", {counting({1, 3}), VMValue(), scalar_i64(0)}),
                         "vm: input 's' must be a sequence"));
    EXPECT_TRUE(contains(invoke_error("main", {rows({1}), counting({3}), scalar_i64(0)}),
                         "vm: input 'o' has shape [3], expected [2]"));
    EXPECT_TRUE(contains(invoke_error("main", {rows({1}), rows({1}), scalar_i64(0)}),
                         "vm: input 'o' must be a tensor"));
    EXPECT_TRUE(contains(invoke_error("main", {rows({1}), VMValue(), VMValue()}),
                         "vm: input 'p' must be a tensor"));
    EXPECT_TRUE(contains(invoke_error("main", {rows({1}), VMValue(), counting({})}),
                         "vm: input 'p' has dtype float32, expected int64"));
    EXPECT_TRUE(
        contains(invoke_error("stack", {VMValue::tuple({NDArray::empty({2}, {kDLInt, 32, 1})})}),
                 "vm: element 0 of argument 's' has dtype int32, expected float32"));
}

}  // namespace
}  // namespace anvil::runtime
