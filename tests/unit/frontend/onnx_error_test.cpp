// Every UserError the ONNX importer raises names where: the file, or the node with its op type
// and opset.
#include "onnx_test_util.h"
#include "ops/shape_tensor.h"
#include "require_package.h"

namespace anvil::frontend {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;
using testing::user_error_of;

TEST(OnnxErrors, NonExistentFile) {
    std::string msg = user_error_of([] { from_onnx("/nonexistent/dir/model.onnx"); });
    EXPECT_EQ(msg, "/nonexistent/dir/model.onnx: cannot open the model file");
}

TEST(OnnxErrors, TruncatedFile) {
    ANVIL_REQUIRE_SHARED_MODELS(testing::have_model("resnet18"));
    std::ifstream in(testing::models_dir() + "/resnet18/model.onnx", std::ios::binary);
    std::string head(100, '\0');
    in.read(head.data(), 100);
    auto dir = testing::temp_dir("truncated");
    std::string path = (dir / "truncated.onnx").string();
    std::ofstream(path, std::ios::binary) << head;
    std::string msg = user_error_of([&] { from_onnx(path); });
    EXPECT_EQ(msg, path +
                       ": not a valid ONNX model (the protobuf is truncated, malformed or "
                       "nested deeper than 1024 messages)");
    std::filesystem::remove_all(dir);
}

TEST(OnnxErrors, GarbageBytes) {
    std::string msg = user_error_of([] { from_onnx_bytes("\xff\xff\xff garbage", {}, "g.onnx"); });
    EXPECT_TRUE(testing::contains(msg, "g.onnx: not a valid ONNX model"));
}

TEST(OnnxErrors, UnsupportedOp) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.node("FancyOp", {"x"}, {"y"}, "fancy_1");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'fancy_1' (FancyOp, opset 13): op FancyOp is not supported");
}

// Training-mode Dropout would draw a random mask; with ratio 0 it drops nothing and imports as
// the identity (torchvision 0.14's Swin exports its attention dropout so).
TEST(OnnxErrors, TrainingModeDropoutNeedsRatioZero) {
    for (float ratio : {0.25f, 0.0f}) {
        ModelBuilder b(13);
        b.input("x", {4}).output("y");
        b.float_init("ratio", {}, {ratio});
        auto* t = b.graph->add_initializer();
        t->set_name("training");
        t->set_data_type(TensorProto::BOOL);
        t->add_int32_data(1);
        b.node("Dropout", {"x", "ratio", "training"}, {"y"}, "drop");
        if (ratio != 0.0f) {
            EXPECT_EQ(user_error_of([&] { b.import(); }),
                      "test.onnx: node 'drop' (Dropout, opset 13): training_mode true is not "
                      "supported with ratio 0.25 (inference only; a ratio of 0 drops nothing)");
        } else {
            graph::IRModule mod = b.import();
            EXPECT_TRUE(mod.main()->body.same_as(mod.main()->params[0]));
        }
    }
}

// Transpose of integer constants is evaluated at import time (shape_eval.cpp), perm checked there.
TEST(OnnxErrors, TransposeOfConstantsWithABadPerm) {
    for (auto [perm, message] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
             {{0, 0}, "perm [0, 0] is not a permutation of the 2 axes"},
             {{1, 0, 2}, "perm [1, 0, 2] has 3 axes for a rank-2 input"}}) {
        ModelBuilder b(13);
        b.input("x", {1}).output("y");
        b.int64_init("m", {2, 3}, {1, 2, 3, 4, 5, 6});
        ModelBuilder::attr_ints(b.node("Transpose", {"m"}, {"y"}, "t"), "perm", perm);
        EXPECT_EQ(user_error_of([&] { b.import(); }),
                  "test.onnx: node 't' (Transpose, opset 13): " + message);
    }
}

TEST(OnnxErrors, OpOfAnotherDomain) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.node("Gelu", {"x"}, {"y"}, "g")->set_domain("com.microsoft");
    EXPECT_TRUE(testing::contains(user_error_of([&] { b.import(); }),
                                  "node 'g' (Gelu, opset 13): op Gelu of domain 'com.microsoft'"));
}

TEST(OnnxErrors, OpsetOutsideTheConverterRange) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.node("Gelu", {"x"}, {"y"}, "g");  // ONNX Gelu exists from opset 20
    EXPECT_TRUE(testing::contains(user_error_of([&] { b.import(); }),
                                  "op Gelu is supported only for opsets 20-"));
}

TEST(OnnxErrors, UnsupportedAttributeValue) {
    ModelBuilder b(13);
    b.input("x", {1, 1, 4, 4}).output("y");
    b.int64_init("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    ModelBuilder::attr_string(b.node("Pad", {"x", "pads"}, {"y"}, "Pad_3"), "mode", "mirror");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'Pad_3' (Pad, opset 13): mode 'mirror' is not supported "
              "(constant, reflect, edge, wrap)");
}

TEST(OnnxErrors, UnknownAutoPad) {
    ModelBuilder b(13);
    b.input("x", {1, 2, 7, 7}).output("y");
    b.float_init("w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f));
    ModelBuilder::attr_string(b.node("Conv", {"x", "w"}, {"y"}, "Conv_12"), "auto_pad", "FULL");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'Conv_12' (Conv, opset 13): auto_pad 'FULL' is not supported");
}

TEST(OnnxErrors, WindowsOverFourDimensions) {
    ModelBuilder b(13);
    b.input("x", {1, 2, 3, 3, 3, 3}).output("y");
    ModelBuilder::attr_ints(b.node("MaxPool", {"x"}, {"y"}, "Pool_4"), "kernel_shape",
                            {2, 2, 2, 2});
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'Pool_4' (MaxPool, opset 13): 4-D data is not supported (1-D, "
              "2-D and 3-D are)");
}

TEST(OnnxErrors, KernelShapeMismatch) {
    ModelBuilder b(13);
    b.input("x", {1, 2, 7, 7}).output("y");
    b.float_init("w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f));
    ModelBuilder::attr_ints(b.node("Conv", {"x", "w"}, {"y"}, "Conv_1"), "kernel_shape", {5, 5});
    EXPECT_TRUE(
        testing::contains(user_error_of([&] { b.import(); }),
                          "node 'Conv_1' (Conv, opset 13): kernel_shape [5, 5] does not match "
                          "the weight's spatial shape [3, 3]"));
}

TEST(OnnxErrors, TypeRuleErrorsNameTheNode) {
    ModelBuilder b(13);
    b.input("x", {2, 3}).input("z", {4, 5}).output("y");
    b.node("Add", {"x", "z"}, {"y"}, "Add_9");
    EXPECT_TRUE(testing::contains(user_error_of([&] { b.import(); }),
                                  "test.onnx: node 'Add_9' (Add, opset 13): "));
}

TEST(OnnxErrors, UnsupportedDtype) {
    ModelBuilder b(13);
    b.input("x", {2}, TensorProto::COMPLEX64).output("y");
    b.node("Identity", {"x"}, {"y"});
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: input 'x' has element type COMPLEX64, which Anvil does not support");
}

TEST(OnnxErrors, FloatModNeedsFmod) {
    ModelBuilder b(13);
    b.input("a", {3}).input("c", {3}).output("y");
    b.node("Mod", {"a", "c"}, {"y"}, "Mod_2");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'Mod_2' (Mod, opset 13): fmod=0 is defined for integer inputs "
              "only, got float32");
}

TEST(OnnxErrors, UnknownLossReduction) {
    ModelBuilder b(13);
    b.input("x", {2, 3}).input("t", {2}, TensorProto::INT64).output("y");
    ModelBuilder::attr_string(b.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"}, "nll"),
                              "reduction", "max");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'nll' (NegativeLogLikelihoodLoss, opset 13): reduction 'max' is "
              "not one of none, sum, mean");
}

TEST(OnnxErrors, QuantizeToAnUnsupportedType) {
    ModelBuilder b(13);
    b.input("x", {3}).input("s", {}).input("z", {}, TensorProto::INT32).output("y");
    b.node("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'q' (QuantizeLinear, opset 13): quantization to int32 is not "
              "supported (uint8, int8)");
}

TEST(OnnxErrors, RecurrentSequenceLengthsReversed) {
    ModelBuilder b(14);
    b.input("x", {2, 1, 3}).input("w", {1, 4, 3}).input("r", {1, 4, 4});
    b.input("lens", {1}, TensorProto::INT32).output("y");
    auto* n = b.node("RNN", {"x", "w", "r", "", "lens"}, {"y"}, "rnn");
    ModelBuilder::attr_int(n, "hidden_size", 4);
    ModelBuilder::attr_string(n, "direction", "reverse");
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'rnn' (RNN, opset 14): sequence_lens is supported for the forward "
              "direction only");
}

TEST(OnnxErrors, UnsupportedCastTarget) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    ModelBuilder::attr_int(b.node("Cast", {"x"}, {"y"}, "c"), "to", TensorProto::COMPLEX128);
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: node 'c' (Cast, opset 13): cast to COMPLEX128 is not supported");
}

TEST(OnnxErrors, InputShapeForAnUnknownInput) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    ImportOptions opts;
    opts.input_shapes["data"] = {1, 2};
    EXPECT_EQ(user_error_of([&] { b.import(opts); }),
              "test.onnx: input shape given for 'data', which is not an input of the model (its "
              "inputs: 'x')");
}

TEST(OnnxErrors, InputShapeOfTheWrongRank) {
    ModelBuilder b(13);
    b.input("x", {2, 3}).output("y");
    b.node("Relu", {"x"}, {"y"});
    ImportOptions opts;
    opts.input_shapes["x"] = {6};
    EXPECT_EQ(user_error_of([&] { b.import(opts); }),
              "test.onnx: input 'x' has rank 2, the given input shape has rank 1");
}

// The shape of a tensor with a symbolic dimension stays symbolic (the VM computes it at run
// time); with --input-shapes it is a constant.
TEST(OnnxErrors, ShapeOfASymbolicTensor) {
    ModelBuilder b(13);
    b.input("x", {0, 4}, TensorProto::FLOAT, {"batch", ""}).output("y");
    b.node("Shape", {"x"}, {"y"}, "shape_of_x");
    graph::IRModule symbolic = b.import();
    const auto* st = ops::shape_tensor_attrs(symbolic.main()->body);
    ASSERT_NE(st, nullptr);
    ASSERT_EQ(st->values.size(), 2u);
    EXPECT_EQ(graph::shape_str(st->values), "(batch, 4)");
    ImportOptions opts;
    opts.input_shapes["x"] = {3, 4};
    graph::IRModule mod = b.import(opts);
    const auto* c = mod.main()->body.as<graph::Constant>();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->data.to_vector<int64_t>(), (std::vector<int64_t>{3, 4}));
}

TEST(OnnxErrors, UnknownValueName) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.node("Add", {"x", "nowhere"}, {"y"}, "a");
    EXPECT_TRUE(testing::contains(user_error_of([&] { b.import(); }),
                                  "node 'a' (Add, opset 13): input 'nowhere' is neither"));
}

TEST(OnnxErrors, UseOfAnOutputTheImporterDoesNotMake) {
    // Inference BatchNormalization makes Y only, not the running statistics of training.
    ModelBuilder b(13);
    b.input("x", {1, 2, 4, 4}).output("y");
    for (const char* p : {"scale", "bias", "mean", "var"}) b.float_init(p, {2}, {1, 1});
    b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n", "running_mean"},
           "bn");
    b.node("Identity", {"running_mean"}, {"y"}, "use");
    EXPECT_TRUE(testing::contains(user_error_of([&] { b.import(); }),
                                  "input 'running_mean' is output 1 of node 'bn' "
                                  "(BatchNormalization), which the importer does not support"));
}

TEST(OnnxErrors, RunTimeReshapeTargetMustBeOneDimensional) {
    // A shape known only at run time imports (the VM reshapes); its rank must still be 1.
    ModelBuilder ok(13);
    ok.input("x", {2, 3}).input("shape", {2}, TensorProto::INT64).output("y");
    ok.node("Reshape", {"x", "shape"}, {"y"}, "r");
    EXPECT_NO_THROW(ok.import());
    ModelBuilder b(13);
    b.input("x", {2, 3}).input("shape", {2, 1}, TensorProto::INT64).output("y");
    b.node("Reshape", {"x", "shape"}, {"y"}, "r");
    EXPECT_TRUE(
        testing::contains(user_error_of([&] { b.import(); }),
                          "node 'r' (Reshape, opset 13): the shape must be 1-D, not [2, 1]"));
}

TEST(OnnxErrors, RawDataOfTheWrongSize) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    auto* t = b.graph->add_initializer();
    t->set_name("w");
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(2);
    t->set_raw_data(std::string(7, '\0'));
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_EQ(user_error_of([&] { b.import(); }),
              "test.onnx: initializer 'w': raw_data has 7 bytes, its type float32[2] needs 8");
}

TEST(OnnxErrors, MissingExternalDataFile) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    auto* t = b.graph->add_initializer();
    t->set_name("w");
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(2);
    t->set_data_location(TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("missing.bin");
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_TRUE(
        testing::contains(user_error_of([&] { from_onnx(b.model, {}, "/tmp/m/test.onnx"); }),
                          "initializer 'w': cannot open its external data file "
                          "'/tmp/m/missing.bin'"));
}

TEST(OnnxErrors, TensorFileThatIsNotATensor) {
    auto dir = testing::temp_dir("badpb");
    std::string path = (dir / "input_0.pb").string();
    std::ofstream(path, std::ios::binary) << "\x0a\xff\xff";
    EXPECT_TRUE(testing::contains(user_error_of([&] { read_tensor_pb(path); }),
                                  path + ": not a valid ONNX TensorProto"));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anvil::frontend
