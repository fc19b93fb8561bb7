// The ONNX importer on tiny models built in code: parameters, constants, shape folding, tensor
// data encodings, external data and input-shape overrides.
#include <cstdint>
#include <cstring>

#include "graph/printer.h"
#include "onnx_test_util.h"
#include "ops/op_spec.h"
#include "ops/transform.h"

namespace anvil::frontend {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;

const graph::TensorType& tensor_of(const graph::Expr& e) {
    return *e->type.as<graph::TensorType>();
}

std::vector<int64_t> shape_of(const graph::Expr& e) {
    return tensor_of(e).static_shape();
}

TEST(OnnxImport, ParamsAreInputsAndInitializersAreConstants) {
    ModelBuilder b;
    b.input("x", {2, 3}).output("y");
    b.float_init("w", {3}, {1, 2, 3});
    // Before IR version 4 initializers were listed as inputs too; they stay constants.
    b.input("w", {3});
    b.node("Add", {"x", "w"}, {"s"});
    b.node("Relu", {"s"}, {"y"});
    graph::IRModule mod = b.import();
    const auto& fn = *mod.main();
    ASSERT_EQ(fn.params.size(), 1u);
    EXPECT_EQ(fn.params[0]->name, "x");
    EXPECT_EQ(graph::type_str(fn.body->type), "Tensor[(2, 3), float32]");
    EXPECT_EQ(testing::count_constants(fn), 1);
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist["add"], 1);
    EXPECT_EQ(hist["nn.relu"], 1);
}

TEST(OnnxImport, SourceLocNamesTheModelNode) {
    ModelBuilder b;
    b.input("x", {4}).output("y");
    b.node("Sigmoid", {"x"}, {"y"}, "act_7");
    graph::IRModule mod = b.import();
    const SourceLoc& loc = mod.main()->body->loc;
    EXPECT_EQ(loc.file, "test.onnx");
    EXPECT_EQ(loc.node_name, "act_7");
    EXPECT_EQ(loc.op_type, "Sigmoid");
    EXPECT_EQ(loc.opset, 13);
}

TEST(OnnxImport, SeveralOutputsMakeATuple) {
    ModelBuilder b;
    b.input("x", {4}).output("a").output("b");
    b.node("Exp", {"x"}, {"a"});
    b.node("Neg", {"x"}, {"b"});
    graph::IRModule mod = b.import();
    EXPECT_TRUE(mod.main()->body.is<graph::Tuple>());
}

TEST(OnnxImport, InputShapesOverrideSymbolicDimensions) {
    ModelBuilder b;
    b.input("x", {0, 8}, TensorProto::FLOAT, {"batch", ""}).output("y");
    b.node("Relu", {"x"}, {"y"});
    // Without an override the dimension stays symbolic.
    graph::IRModule sym = b.import();
    EXPECT_FALSE(tensor_of(sym.main()->body).is_static());
    ImportOptions opts;
    opts.input_shapes["x"] = {5, 8};
    graph::IRModule mod = b.import(opts);
    EXPECT_EQ(shape_of(mod.main()->body), (std::vector<int64_t>{5, 8}));
}

// PyTorch's flatten: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
TEST(OnnxImport, ShapeArithmeticFoldsToConstants) {
    ModelBuilder b;
    b.input("x", {2, 3, 4}).output("y");
    b.int64_init("zero", {}, {0});
    b.int64_init("minus_one", {1}, {-1});
    b.int64_init("axes", {1}, {0});
    b.node("Shape", {"x"}, {"shape"});
    b.node("Gather", {"shape", "zero"}, {"n"});
    b.node("Unsqueeze", {"n", "axes"}, {"n1"});
    ModelBuilder::attr_int(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
    b.node("Reshape", {"x", "target"}, {"y"});
    graph::IRModule mod = b.import();
    const auto& fn = *mod.main();
    EXPECT_EQ(shape_of(fn.body), (std::vector<int64_t>{2, 12}));
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist.size(), 1u);
    EXPECT_EQ(hist["reshape"], 1);
}

TEST(OnnxImport, IntegerShapeMathEvaluates) {
    ModelBuilder b(13);
    b.input("x", {6, 10}).output("y");
    b.int64_init("two", {}, {2});
    b.int64_init("starts", {1}, {1});
    b.int64_init("ends", {1}, {2});
    b.node("Shape", {"x"}, {"s"});
    b.node("Mul", {"s", "two"}, {"m"});  // [12, 20]
    b.node("Slice", {"m", "starts", "ends"}, {"y"});
    graph::IRModule mod = b.import();
    const auto* c = mod.main()->body.as<graph::Constant>();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->data.to_vector<int64_t>(), (std::vector<int64_t>{20}));
}

TEST(OnnxImport, TensorDataEncodings) {
    ModelBuilder b;
    b.input("x", {2}, TensorProto::FLOAT16).output("y");
    auto* h = b.graph->add_initializer();  // float16 bits in int32_data
    h->set_name("h");
    h->set_data_type(TensorProto::FLOAT16);
    h->add_dims(2);
    h->add_int32_data(0x3c00);  // 1.0
    h->add_int32_data(0xc000);  // -2.0
    b.node("Add", {"x", "h"}, {"y"});
    auto* r = b.graph->add_initializer();  // raw_data
    r->set_name("r");
    r->set_data_type(TensorProto::INT32);
    r->add_dims(2);
    int32_t raw[2] = {7, -9};
    r->set_raw_data(std::string(reinterpret_cast<const char*>(raw), sizeof raw));
    b.graph->add_output()->set_name("r");
    graph::IRModule mod = b.import();
    const auto* tup = mod.main()->body.as<graph::Tuple>();
    ASSERT_NE(tup, nullptr);
    const auto* add = tup->fields[0].as<graph::Call>();
    ASSERT_NE(add, nullptr);
    auto half = add->args[1].as<graph::Constant>()->data.to_vector<uint16_t>();
    EXPECT_EQ(half, (std::vector<uint16_t>{0x3c00, 0xc000}));
    auto ints = tup->fields[1].as<graph::Constant>()->data.to_vector<int32_t>();
    EXPECT_EQ(ints, (std::vector<int32_t>{7, -9}));
}

TEST(OnnxImport, ExternalDataRelativeToTheModel) {
    auto dir = testing::temp_dir("external");
    std::vector<float> values = {1.5f, -2.5f, 3.25f};
    {
        std::ofstream out(dir / "weights.bin", std::ios::binary);
        float pad = 0;
        out.write(reinterpret_cast<const char*>(&pad), sizeof pad);  // data at offset 4
        out.write(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    }
    ModelBuilder b;
    b.input("x", {3}).output("y");
    auto* t = b.graph->add_initializer();
    t->set_name("w");
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(3);
    t->set_data_location(TensorProto::EXTERNAL);
    auto kv = [&](const std::string& k, const std::string& v) {
        auto* e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
    };
    kv("location", "weights.bin");
    kv("offset", "4");
    kv("length", "12");
    b.node("Mul", {"x", "w"}, {"y"});
    std::string path = (dir / "model.onnx").string();
    {
        std::ofstream out(path, std::ios::binary);
        b.model.SerializeToOstream(&out);
    }
    graph::IRModule mod = from_onnx(path);
    const auto* mul = mod.main()->body.as<graph::Call>();
    ASSERT_NE(mul, nullptr);
    EXPECT_EQ(mul->args[1].as<graph::Constant>()->data.to_vector<float>(), values);
    std::filesystem::remove_all(dir);
}

TEST(OnnxImport, ClipBoundsFromAttributesAndInputs) {
    for (int opset : {6, 13}) {
        ModelBuilder b(opset);
        b.input("x", {4}).output("y");
        auto* n = b.node("Clip", {"x"}, {"y"});
        if (opset < 11) {
            ModelBuilder::attr_float(n, "min", 0.0f);
            ModelBuilder::attr_float(n, "max", 6.0f);
        } else {
            b.float_init("lo", {}, {0.0f});
            b.float_init("hi", {}, {6.0f});
            n->add_input("lo");
            n->add_input("hi");
        }
        graph::IRModule mod = b.import();
        const auto* c = mod.main()->body.as<graph::Call>();
        ASSERT_NE(c, nullptr) << opset;
        EXPECT_EQ(c->op->name, "clip");
        EXPECT_EQ(graph::attrs_str(*c->attrs, nullptr), "a_min=0.0, a_max=6.0") << opset;
    }
}

TEST(OnnxImport, ConvAutoPadSame) {
    ModelBuilder b(13);
    b.input("x", {1, 2, 7, 7}).output("y");
    b.float_init("w", {4, 2, 3, 3}, std::vector<float>(4 * 2 * 9, 0.5f));
    auto* n = b.node("Conv", {"x", "w"}, {"y"});
    ModelBuilder::attr_string(n, "auto_pad", "SAME_UPPER");
    ModelBuilder::attr_ints(n, "strides", {2, 2});
    graph::IRModule mod = b.import();
    EXPECT_EQ(shape_of(mod.main()->body), (std::vector<int64_t>{1, 4, 4, 4}));
}

// 3-D windows become the nn.*3d ops (auto_pad resolved per dimension); the global pools reduce
// the flattened depth and height with the 2-D op.
TEST(OnnxImport, ThreeDimensionalWindows) {
    ModelBuilder b(13);
    b.input("x", {1, 2, 5, 7, 7}).output("y").output("p").output("g");
    b.float_init("w", {4, 2, 3, 3, 3}, std::vector<float>(4 * 2 * 27, 0.5f));
    auto* conv = b.node("Conv", {"x", "w"}, {"y"});
    ModelBuilder::attr_string(conv, "auto_pad", "SAME_UPPER");
    ModelBuilder::attr_ints(conv, "strides", {1, 2, 2});
    auto* pool = b.node("MaxPool", {"x"}, {"p"});
    ModelBuilder::attr_ints(pool, "kernel_shape", {2, 3, 3});
    ModelBuilder::attr_ints(pool, "strides", {2, 2, 2});
    b.node("GlobalAveragePool", {"x"}, {"g"});
    graph::IRModule mod = b.import();
    const auto& fn = *mod.main();
    auto* outputs = fn.body.as<graph::Tuple>();
    ASSERT_NE(outputs, nullptr);
    EXPECT_EQ(shape_of(outputs->fields[0]), (std::vector<int64_t>{1, 4, 5, 4, 4}));
    EXPECT_EQ(shape_of(outputs->fields[1]), (std::vector<int64_t>{1, 2, 2, 3, 3}));
    EXPECT_EQ(shape_of(outputs->fields[2]), (std::vector<int64_t>{1, 2, 1, 1, 1}));
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist["nn.conv3d"], 1);
    EXPECT_EQ(hist["nn.max_pool3d"], 1);
    EXPECT_EQ(hist["nn.global_avg_pool2d"], 1);
}

// torch.onnx's F.pad with amounts computed from the input's shape (Swin's window padding): pad =
// (window - H % window) % window by Shape → Gather → Mod → Sub → Mod, then the export's
// reordering of PyTorch's pad list (last dimension first) into ONNX's: Concat with zeros →
// Reshape [-1, 2] → Slice (reversed) → Transpose → Reshape [-1] → Cast. On a static input all of
// it is import-time constant, so Pad gets constant pads and the Reshape into windows after it a
// static shape it can check.
TEST(OnnxImport, PadAmountsFromShapeArithmeticFold) {
    ModelBuilder b(13);
    b.input("x", {1, 5, 6, 3}).output("y");  // NHWC, windows of 4: H grows by 3, W by 2
    b.int64_init("zero", {}, {0});
    b.int64_init("one", {}, {1});
    b.int64_init("two", {}, {2});
    b.int64_init("window", {}, {4});
    b.int64_init("eight", {}, {8});
    b.int64_init("zeros", {1}, {0});
    b.int64_init("axes0", {1}, {0});
    b.int64_init("pairs_shape", {2}, {-1, 2});
    b.int64_init("flat_shape", {1}, {-1});
    b.int64_init("starts", {1}, {-1});
    b.int64_init("ends", {1}, {INT64_MIN + 1});
    b.int64_init("steps", {1}, {-1});
    b.int64_init("windows_shape", {6}, {1, 2, 4, 2, 4, 3});
    b.node("Shape", {"x"}, {"s"});
    for (const char* d : {"one", "two"}) {
        std::string n = d;
        b.node("Gather", {"s", n}, {n + "_size"});
        b.node("Mod", {n + "_size", "window"}, {n + "_rem"});
        b.node("Sub", {"window", n + "_rem"}, {n + "_short"});
        b.node("Mod", {n + "_short", "window"}, {n + "_pad"});
        b.node("Unsqueeze", {n + "_pad", "axes0"}, {n + "_pad1"});
    }
    // F.pad(x, (0, 0, 0, pad_w, 0, pad_h)), extended with zeros to two values per dimension.
    ModelBuilder::attr_int(
        b.node("Concat", {"zeros", "zeros", "zeros", "two_pad1", "zeros", "one_pad1"},
               {"torch_pads"}),
        "axis", 0);
    b.node("Shape", {"torch_pads"}, {"tp_shape"});
    b.node("Gather", {"tp_shape", "zero"}, {"tp_count"});
    b.node("Sub", {"eight", "tp_count"}, {"missing"});
    b.node("Unsqueeze", {"missing", "axes0"}, {"missing1"});
    auto* fill = b.node("ConstantOfShape", {"missing1"}, {"extension"});
    auto* value = fill->add_attribute();
    value->set_name("value");
    value->set_type(::onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(0);
    ModelBuilder::attr_int(b.node("Concat", {"torch_pads", "extension"}, {"all"}), "axis", 0);
    b.node("Reshape", {"all", "pairs_shape"}, {"pairs"});
    b.node("Slice", {"pairs", "starts", "ends", "axes0", "steps"}, {"reversed"});
    ModelBuilder::attr_ints(b.node("Transpose", {"reversed"}, {"by_side"}), "perm", {1, 0});
    b.node("Reshape", {"by_side", "flat_shape"}, {"onnx_pads"});
    ModelBuilder::attr_int(b.node("Cast", {"onnx_pads"}, {"pads"}), "to", TensorProto::INT64);
    b.node("Pad", {"x", "pads"}, {"padded"});
    b.node("Reshape", {"padded", "windows_shape"}, {"y"});
    graph::IRModule mod = b.import();
    const auto& fn = *mod.main();
    EXPECT_EQ(shape_of(fn.body), (std::vector<int64_t>{1, 2, 4, 2, 4, 3}));
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist.size(), 2u);  // no run-time binding of the pads, no dynamic reshape
    ASSERT_EQ(hist["nn.pad"], 1);
    const auto* pad = ops::call_attrs<ops::PadAttrs>(fn.body.as<graph::Call>()->args[0], "nn.pad");
    ASSERT_NE(pad, nullptr);
    EXPECT_EQ(pad->pad_width, (std::vector<int64_t>{0, 0, 0, 3, 0, 2, 0, 0}));
}

// Transpose of an integer constant is shape arithmetic too: perm given, and the default
// (reversed axes).
TEST(OnnxImport, TransposeOfIntegerConstantsEvaluates) {
    for (bool given : {true, false}) {
        ModelBuilder b(13);
        b.input("x", {2, 3}).output("y");
        b.int64_init("m", {2, 3}, {1, 2, 3, 4, 5, 6});
        auto* t = b.node("Transpose", {"m"}, {"y"});
        if (given) ModelBuilder::attr_ints(t, "perm", {1, 0});
        graph::IRModule mod = b.import();
        const auto* c = mod.main()->body.as<graph::Constant>();
        ASSERT_NE(c, nullptr) << given;
        EXPECT_EQ(c->data.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6})) << given;
        EXPECT_EQ(std::vector<int64_t>(c->data.shape().begin(), c->data.shape().end()),
                  (std::vector<int64_t>{3, 2}))
            << given;
    }
}

}  // namespace
}  // namespace anvil::frontend

namespace anvil::frontend {
namespace {

// QuantizeLinear / DequantizeLinear import as the QNN ops; an initializer zero point becomes an
// int32 constant (what fold_qnn_quantize's is_constant() matches), and int32 data quantizes as
// floats do (opsets 10-18 allow it).
TEST(OnnxImport, QuantizeLinearBecomesQnn) {
    ModelBuilder b(13);
    b.input("x", {2, 3}, ::onnx::TensorProto::INT32).output("y");
    b.float_init("s", {}, {0.5f});
    auto* z = b.graph->add_initializer();
    z->set_name("z");
    z->set_data_type(::onnx::TensorProto::INT8);
    z->add_int32_data(-3);
    b.node("QuantizeLinear", {"x", "s", "z"}, {"q"});
    b.node("DequantizeLinear", {"q", "s", "z"}, {"y"});
    graph::IRModule mod = b.import();
    std::string text = graph::print(mod);
    EXPECT_NE(text.find("qnn.quantize(%0, 0.5f, -3, axis=1)"), std::string::npos) << text;
    EXPECT_NE(text.find("qnn.dequantize(%1, 0.5f, -3, axis=1)"), std::string::npos) << text;
    EXPECT_EQ(graph::type_str(mod.main()->body->type), "Tensor[(2, 3), float32]");
}

}  // namespace
}  // namespace anvil::frontend
