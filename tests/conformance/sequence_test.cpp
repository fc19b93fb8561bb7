// ONNX sequences and optionals whose contents are known only at run time: models that take a
// sequence or an optional as input, compiled once and run through the VM with sequences of
// other lengths and element shapes than the suite's, positions that count from the back or fall
// outside, and the errors (naming the node) for values that do not fit. The SequenceMap models
// are the suite's (Debian's libonnx-testdata); the others are built here.
#include <gtest/gtest.h>

#include "conformance/node_model.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using runtime::VMValue;
using testing::array;
using testing::CompiledNodeModel;
using testing::contains;
using testing::error_of;
using testing::shape_of;

// A graph input that is a sequence of `elem_type` tensors with these dims (-1: not given, so the
// elements may differ there).
void sequence_input(ModelBuilder& b, const std::string& name, const std::vector<int64_t>& dims,
                    int elem_type = ::onnx::TensorProto::FLOAT) {
    auto* v = b.graph->add_input();
    v->set_name(name);
    auto* tt =
        v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
        auto* dim = shape->add_dim();
        if (d >= 0) dim->set_dim_value(d);
    }
}

// A graph input that is an optional float tensor of `shape`.
void optional_input(ModelBuilder& b, const std::string& name, const std::vector<int64_t>& shape) {
    auto* v = b.graph->add_input();
    v->set_name(name);
    auto* tt =
        v->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A float32 tensor of `shape` holding first, first + 1, ...
NDArray counting(std::vector<int64_t> shape, float first = 0) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
    return array(std::move(shape), v, "float32");
}

NDArray pos(int64_t p) {
    return array<int64_t>({}, {p}, "int64");
}

// A sequence of float32 [rows[i], cols] tensors; element i counts from 100 * i.
VMValue rows_of(const std::vector<int64_t>& rows, int64_t cols = 3) {
    std::vector<VMValue> items;
    for (size_t i = 0; i < rows.size(); ++i) {
        items.emplace_back(counting({rows[i], cols}, 100.0f * static_cast<float>(i)));
    }
    return VMValue::tuple(std::move(items));
}

// The first value of each element: which tensors a sequence holds, in order.
std::vector<float> firsts(const VMValue& seq) {
    std::vector<float> out;
    for (const VMValue& v : seq.fields) out.push_back(v.tensor.to_vector<float>()[0]);
    return out;
}

TEST(RunTimeSequences, SequenceAtCountsFromTheBackAndNamesTheNodeOutOfRange) {
    ModelBuilder b(17);
    sequence_input(b, "s", {-1, 3});
    b.input("p", {}, ::onnx::TensorProto::INT64);
    b.node("SequenceAt", {"s", "p"}, {"y"}, "at_7");
    b.output("y");
    CompiledNodeModel m(b.import());
    VMValue s = rows_of({1, 2, 4});
    for (auto [p, rows, first] : std::vector<std::tuple<int64_t, int64_t, float>>{
             {0, 1, 0}, {2, 4, 200}, {-1, 4, 200}, {-2, 2, 100}, {-3, 1, 0}}) {
        NDArray y = m.invoke({s, pos(p)}).tensor;
        EXPECT_EQ(shape_of(y), (std::vector<int64_t>{rows, 3})) << p;
        EXPECT_EQ(y.to_vector<float>()[0], first) << p;
    }
    EXPECT_EQ(shape_of(m.invoke({rows_of({5}), pos(-1)}).tensor), (std::vector<int64_t>{5, 3}));
    for (int64_t p : {3, -4, 100}) {
        std::string message = error_of([&] { m.invoke({s, pos(p)}); });
        EXPECT_TRUE(contains(message, "node 'at_7': position " + std::to_string(p) +
                                          " is out of range for a sequence of 3 tensor(s)"));
    }
    EXPECT_TRUE(contains(error_of([&] {
                             m.invoke({rows_of({}), pos(0)});
                         }),
                         "node 'at_7': position 0 is out of range for a sequence of 0 tensor(s)"));
    // The sequence's elements must fit its declared type.
    EXPECT_TRUE(contains(error_of([&] {
                             m.invoke({rows_of({1, 2}, 4), pos(0)});
                         }),
                         "element 0 of input 's' has shape [1, 4]"));
}

TEST(RunTimeSequences, InsertAndEraseAtRunTimePositions) {
    ModelBuilder b(17);
    sequence_input(b, "s", {-1, 3});
    b.input("t", {2, 3}, ::onnx::TensorProto::FLOAT, {"k"});
    b.input("p", {}, ::onnx::TensorProto::INT64);
    b.node("SequenceInsert", {"s", "t", "p"}, {"inserted"}, "insert_1");
    b.node("SequenceErase", {"s", "p"}, {"erased"}, "erase_2");
    b.node("SequenceLength", {"inserted"}, {"n"}, "length_3");
    b.node("SequenceInsert", {"s", "t"}, {"appended"}, "append_4");
    b.node("SequenceErase", {"s"}, {"popped"}, "pop_5");
    for (const char* out : {"inserted", "erased", "n", "appended", "popped"}) b.output(out);
    CompiledNodeModel m(b.import());
    VMValue s = rows_of({1, 2, 4});
    NDArray t = counting({5, 3}, -7);
    auto run = [&](int64_t p) { return m.invoke({s, t, pos(p)}).fields; };
    std::vector<VMValue> out = run(-1);
    EXPECT_EQ(firsts(out[0]), (std::vector<float>{0, 100, -7, 200}));  // before the last
    EXPECT_EQ(firsts(out[1]), (std::vector<float>{0, 100}));
    EXPECT_EQ(out[2].tensor.to_vector<int64_t>(), std::vector<int64_t>{4});
    EXPECT_EQ(firsts(out[3]), (std::vector<float>{0, 100, 200, -7}));
    EXPECT_EQ(firsts(out[4]), (std::vector<float>{0, 100}));
    EXPECT_EQ(shape_of(out[0].fields[2].tensor), (std::vector<int64_t>{5, 3}));
    out = run(0);
    EXPECT_EQ(firsts(out[0]), (std::vector<float>{-7, 0, 100, 200}));
    EXPECT_EQ(firsts(out[1]), (std::vector<float>{100, 200}));
    out = run(-3);
    EXPECT_EQ(firsts(out[0]), (std::vector<float>{-7, 0, 100, 200}));
    EXPECT_EQ(firsts(out[1]), (std::vector<float>{100, 200}));
    out = run(1);
    EXPECT_EQ(firsts(out[0]), (std::vector<float>{0, -7, 100, 200}));
    EXPECT_EQ(firsts(out[1]), (std::vector<float>{0, 200}));
    // Position n inserts at the back but erases nothing; one more fits neither.
    EXPECT_TRUE(contains(error_of([&] { run(3); }),
                         "node 'erase_2': position 3 is out of range for a sequence of 3 tensor(s) "
                         "(valid: -3 to 2)"));
    EXPECT_TRUE(contains(error_of([&] { run(4); }),
                         "node 'insert_1': position 4 is out of range for a sequence of 3 "
                         "tensor(s) (valid: -3 to 3)"));
    EXPECT_TRUE(contains(error_of([&] { run(-4); }), "node 'insert_1': position -4"));
    // An empty sequence: insert at 0 works, erase has nothing to remove.
    EXPECT_TRUE(contains(error_of([&] {
                             m.invoke({rows_of({}), t, pos(0)});
                         }),
                         "node 'erase_2': cannot erase from an empty sequence"));
}

TEST(RunTimeSequences, EraseFromAnEmptySequenceNamesTheNode) {
    ModelBuilder b(17);
    sequence_input(b, "s", {-1});
    b.node("SequenceErase", {"s"}, {"popped"}, "pop_9");
    b.output("popped");
    CompiledNodeModel m(b.import());
    VMValue two = VMValue::tuple({counting({2}), counting({0})});
    EXPECT_EQ(m.invoke({two}).fields.size(), 1u);
    EXPECT_TRUE(contains(error_of([&] { m.invoke({VMValue::tuple({})}); }),
                         "node 'pop_9': cannot erase from an empty sequence"));
}

TEST(RunTimeSequences, ConcatFromSequenceOfElementsOfDifferentLengths) {
    ModelBuilder b(17);
    sequence_input(b, "s", {-1, -1});
    auto* cat = b.node("ConcatFromSequence", {"s"}, {"y"}, "cat_4");
    ModelBuilder::attr_int(cat, "axis", -1);
    b.output("y");
    CompiledNodeModel m(b.import());
    // Along the last axis: [2, 1] ++ [2, 3] ++ [2, 0].
    VMValue s = VMValue::tuple({counting({2, 1}, 0), counting({2, 3}, 10), counting({2, 0})});
    NDArray y = m.invoke({s}).tensor;
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 10, 11, 12, 1, 13, 14, 15}));
    // Another run, other lengths.
    y = m.invoke({VMValue::tuple({counting({1, 5}, 0)})}).tensor;
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 5}));
    EXPECT_TRUE(contains(
        error_of([&] {
            m.invoke({VMValue::tuple({counting({2, 1}), counting({3, 1})})});
        }),
        "node 'cat_4': element 1 is float32[3, 1], element 0 is float32[2, 1]; they must agree in "
        "dtype and in every dimension but the axis"));
    EXPECT_TRUE(contains(error_of([&] { m.invoke({VMValue::tuple({})}); }),
                         "node 'cat_4': cannot join an empty sequence"));
}

TEST(RunTimeSequences, ConcatFromSequenceStacksOnANewAxis) {
    ModelBuilder b(17);
    sequence_input(b, "s", {-1, 2});
    auto* stack = b.node("ConcatFromSequence", {"s"}, {"y"}, "stack_5");
    ModelBuilder::attr_int(stack, "axis", 1);
    ModelBuilder::attr_int(stack, "new_axis", 1);
    b.output("y");
    CompiledNodeModel m(b.import());
    NDArray y =
        m.invoke(
             {VMValue::tuple({counting({2, 2}, 0), counting({2, 2}, 10), counting({2, 2}, 20)})})
            .tensor;
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 3, 2}));
    EXPECT_EQ(y.to_vector<float>(),
              (std::vector<float>{0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 22, 23}));
    EXPECT_EQ(shape_of(m.invoke({VMValue::tuple({counting({4, 2})})}).tensor),
              (std::vector<int64_t>{4, 1, 2}));
    EXPECT_TRUE(contains(
        error_of([&] {
            m.invoke({VMValue::tuple({counting({2, 2}), counting({3, 2})})});
        }),
        "node 'stack_5': element 1 is float32[3, 2], element 0 is float32[2, 2]; they must agree "
        "in dtype and in every dimension"));
}

TEST(RunTimeSequences, SplitToSequenceByRunTimeSizes) {
    ModelBuilder b(17);
    b.input("x", {6, 2}, ::onnx::TensorProto::FLOAT, {"n"});
    b.input("split", {3}, ::onnx::TensorProto::INT64);
    b.node("SplitToSequence", {"x", "split"}, {"parts"}, "split_6");
    b.node("ConcatFromSequence", {"parts"}, {"back"}, "cat_7");
    b.output("parts");
    b.output("back");
    CompiledNodeModel m(b.import());
    auto sizes = [](std::vector<int64_t> v) { return array<int64_t>({3}, v, "int64"); };
    NDArray x = counting({6, 2});
    std::vector<VMValue> out = m.invoke({x, sizes({1, 0, 5})}).fields;
    ASSERT_EQ(out[0].fields.size(), 3u);
    EXPECT_EQ(shape_of(out[0].fields[0].tensor), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(shape_of(out[0].fields[1].tensor), (std::vector<int64_t>{0, 2}));
    EXPECT_EQ(shape_of(out[0].fields[2].tensor), (std::vector<int64_t>{5, 2}));
    EXPECT_EQ(out[0].fields[2].tensor.to_vector<float>()[0], 2.0f);
    EXPECT_EQ(out[1].tensor.to_vector<float>(), x.to_vector<float>());  // joined back
    // Another length of x, other sizes.
    NDArray x4 = counting({4, 2}, 50);
    out = m.invoke({x4, sizes({2, 1, 1})}).fields;
    EXPECT_EQ(shape_of(out[0].fields[0].tensor), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(out[0].fields[2].tensor.to_vector<float>(), (std::vector<float>{56, 57}));
    EXPECT_EQ(out[1].tensor.to_vector<float>(), x4.to_vector<float>());
    // Sizes that do not add up to the axis.
    std::string message = error_of([&] { m.invoke({x, sizes({2, 2, 1})}); });
    EXPECT_TRUE(contains(message, "split_6")) << message;
    EXPECT_TRUE(contains(message, "do not fit")) << message;
}

// run_values keeps each output whole (a sequence comes back as one tuple) where run flattens;
// input_info says which inputs are sequences and optionals; the program's JSON keeps both.
TEST(RunTimeSequences, RunValuesGivesOneValuePerOutput) {
    ModelBuilder b(18);
    sequence_input(b, "s", {-1, 3});
    optional_input(b, "o", {2});
    b.node("SequenceLength", {"s"}, {"count"}, "length_1");
    b.node("OptionalHasElement", {"o"}, {"has"}, "has_2");
    b.output("s");
    b.output("count");
    b.output("has");
    CompiledNodeModel m(b.import());
    runtime::VirtualMachine& vm = m.vm();
    EXPECT_TRUE(vm.input_info(0).sequence);
    EXPECT_FALSE(vm.input_info(0).optional);
    EXPECT_TRUE(vm.input_info(1).optional);
    EXPECT_FALSE(vm.input_info(1).sequence);
    EXPECT_EQ(vm.input_info(1).name, "o");
    EXPECT_EQ(vm.output_names().size(), 3u);
    std::vector<VMValue> out = vm.run_values({rows_of({1, 2}), VMValue()});
    ASSERT_EQ(out.size(), 3u);
    ASSERT_EQ(out[0].kind, VMValue::Kind::tuple);
    EXPECT_EQ(firsts(out[0]), (std::vector<float>{0, 100}));
    EXPECT_EQ(out[1].tensor.to_vector<int64_t>(), std::vector<int64_t>{2});
    EXPECT_EQ(out[2].tensor.to_vector<uint8_t>(), std::vector<uint8_t>{0});
    // The program's JSON keeps the outputs apart.
    runtime::VMProgram p =
        runtime::program_from_json(runtime::program_to_json(m.executable().program));
    EXPECT_TRUE(p.tuple_result);
    EXPECT_EQ(p.outputs.size(), 3u);
}

// A model whose one output is a sequence: one value, not its elements.
TEST(RunTimeSequences, ASequenceOutputIsOneValue) {
    ModelBuilder b(17);
    b.input("x", {4, 2});
    b.int64_init("size", {}, {2});
    b.node("SplitToSequence", {"x", "size"}, {"parts"}, "split_3");
    b.output("parts");
    CompiledNodeModel m(b.import());
    std::vector<VMValue> out = m.vm().run_values({counting({4, 2})});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].kind, VMValue::Kind::tuple);
    ASSERT_EQ(out[0].fields.size(), 2u);
    EXPECT_EQ(out[0].fields[1].tensor.to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
    EXPECT_FALSE(
        runtime::program_from_json(runtime::program_to_json(m.executable().program)).tuple_result);
    // run flattens it.
    EXPECT_EQ(m.run({counting({4, 2})}).size(), 2u);
}

// A constant scalar split: parts of that size along the axis, the last one smaller; keepdims
// applies only without a split, so the axis stays.
TEST(RunTimeSequences, SplitToSequenceByAConstantSize) {
    ModelBuilder b(17);
    b.input("x", {2, 5});
    b.int64_init("size", {}, {2});
    auto* n = b.node("SplitToSequence", {"x", "size"}, {"parts"}, "split_8");
    ModelBuilder::attr_int(n, "axis", 1);
    ModelBuilder::attr_int(n, "keepdims", 0);
    b.output("parts");
    CompiledNodeModel m(b.import());
    NDArray x = counting({2, 5});
    std::vector<VMValue> parts = m.invoke({x}).fields;
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(shape_of(parts[0].tensor), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(shape_of(parts[2].tensor), (std::vector<int64_t>{2, 1}));
    std::vector<float> all = x.to_vector<float>();
    EXPECT_EQ(parts[1].tensor.to_vector<float>(),
              (std::vector<float>{all[2], all[3], all[7], all[8]}));
    EXPECT_EQ(parts[2].tensor.to_vector<float>(), (std::vector<float>{all[4], all[9]}));
}

TEST(RunTimeOptionals, GetElementOfAnEmptyOptionalNamesTheNode) {
    ModelBuilder b(18);
    optional_input(b, "o", {4});
    b.node("OptionalHasElement", {"o"}, {"has"}, "has_1");
    b.output("has");
    CompiledNodeModel has(b.import());
    NDArray x = counting({4}, 3);
    EXPECT_EQ(has.invoke({x}).tensor.to_vector<uint8_t>(), std::vector<uint8_t>{1});
    EXPECT_EQ(has.invoke({VMValue()}).tensor.to_vector<uint8_t>(), std::vector<uint8_t>{0});

    ModelBuilder g(18);
    optional_input(g, "o", {4});
    g.node("OptionalGetElement", {"o"}, {"y"}, "get_2");
    g.output("y");
    CompiledNodeModel get(g.import());
    EXPECT_EQ(get.invoke({x}).tensor.to_vector<float>(), (std::vector<float>{3, 4, 5, 6}));
    EXPECT_EQ(error_of([&] { get.invoke({VMValue()}); }),
              "vm: node 'get_2': the optional is empty");
    EXPECT_TRUE(contains(error_of([&] { get.invoke({counting({5})}); }),
                         "input 'o' has shape [5], expected [4]"));
}

using SequenceMapModels = testing::NodeModelTest;

TEST_F(SequenceMapModels, ElementsOfDifferentLengths) {
    CompiledNodeModel m("test_sequence_map_add_2_sequences");  // x0[i] + x1[i], 1-D elements
    auto seq = [](std::vector<std::vector<float>> items) {
        std::vector<VMValue> fields;
        for (auto& v : items) {
            auto n = static_cast<int64_t>(v.size());
            fields.emplace_back(array<float>({n}, v, "float32"));
        }
        return VMValue::tuple(std::move(fields));
    };
    VMValue out = m.invoke(
        {seq({{1, 2, 3}, {4}, {5, 6, 7, 8, 9}}), seq({{10, 20, 30}, {40}, {50, 60, 70, 80, 90}})});
    ASSERT_EQ(out.fields.size(), 3u);
    EXPECT_EQ(out.fields[0].tensor.to_vector<float>(), (std::vector<float>{11, 22, 33}));
    EXPECT_EQ(out.fields[1].tensor.to_vector<float>(), (std::vector<float>{44}));
    EXPECT_EQ(out.fields[2].tensor.to_vector<float>(), (std::vector<float>{55, 66, 77, 88, 99}));
    // One element against one of length 1 broadcasts; lengths 3 and 2 do not fit.
    out = m.invoke({seq({{1, 2, 3}}), seq({{10}})});
    EXPECT_EQ(out.fields[0].tensor.to_vector<float>(), (std::vector<float>{11, 12, 13}));
    EXPECT_TRUE(contains(error_of([&] {
                             m.invoke({seq({{1, 2, 3}}), seq({{10, 20}})});
                         }),
                         "the operands' shapes do not fit together"));
    // No elements: an empty result.
    EXPECT_TRUE(m.invoke({seq({}), seq({})}).fields.empty());
    // The second sequence is shorter than the first.
    EXPECT_TRUE(contains(error_of([&] {
                             m.invoke({seq({{1}, {2}}), seq({{1}})});
                         }),
                         "position 1 is out of range for a sequence of 1 tensor(s)"));
}

TEST_F(SequenceMapModels, ASequenceAndATensorAndShapesOfEachElement) {
    CompiledNodeModel add("test_sequence_map_add_1_sequence_1_tensor");  // x0[i] + x1
    NDArray x1 = array<float>({2}, {100, 200}, "float32");
    VMValue out = add.invoke(
        {VMValue::tuple({array<float>({2}, {1, 2}, "float32"), array<float>({1}, {3}, "float32")}),
         x1});
    EXPECT_EQ(out.fields[0].tensor.to_vector<float>(), (std::vector<float>{101, 202}));
    EXPECT_EQ(out.fields[1].tensor.to_vector<float>(), (std::vector<float>{103, 203}));

    CompiledNodeModel shapes("test_sequence_map_extract_shapes");  // Shape of each [?, ?, ?]
    out = shapes.invoke({VMValue::tuple({counting({1, 2, 3}), counting({4, 0, 6})})});
    ASSERT_EQ(out.fields.size(), 2u);
    EXPECT_EQ(out.fields[0].tensor.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(out.fields[1].tensor.to_vector<int64_t>(), (std::vector<int64_t>{4, 0, 6}));
}

}  // namespace
}  // namespace anvil
