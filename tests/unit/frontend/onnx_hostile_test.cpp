// Hostile ONNX models (issue 18): sizes that overflow, dimensions and data that do not fit, names
// that dangle or repeat, impossible opsets, subgraphs nested too deep, files too big or cut
// short. Each gets one UserError naming the file and the node, initializer or input at fault —
// never a crash, a hang, an internal error or a model that imports with a wrong meaning.
#include "onnx_test_util.h"

namespace anvil::frontend {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;

constexpr int64_t kBig = int64_t{1} << 40;

::onnx::TensorProto* add_raw_initializer(ModelBuilder& b, const std::string& name,
                                         const std::vector<int64_t>& dims, size_t bytes) {
    auto* t = b.graph->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(bytes, '\0'));
    return t;
}

// ---- sizes that overflow 64 bits, negative dimensions ----------------------------------------

TEST(OnnxHostile, InitializerElementCountOverflows) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    add_raw_initializer(b, "w", {kBig, kBig, kBig}, 8);
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w'", "[1099511627776, 1099511627776",
                   "overflows 64 bits");
}

TEST(OnnxHostile, InitializerByteSizeOverflows) {
    // 2^61 elements fit in 64 bits; 2^61 float32s of 4 bytes do not.
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    add_raw_initializer(b, "w", {int64_t{1} << 61}, 8);
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w'", "overflows 64 bits");
}

TEST(OnnxHostile, InitializerFarLargerThanItsDataIsRefusedBeforeAllocating) {
    // 4 TiB declared, 8 bytes given: the mismatch is reported without allocating the 4 TiB.
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    add_raw_initializer(b, "w", {kBig}, 8);
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w': raw_data has 8 bytes",
                   "needs 4398046511104");
    ModelBuilder typed(13);
    typed.input("x", {2}).output("y");
    typed.float_init("w", {kBig}, {1.0f, 2.0f});
    typed.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(typed.import(), "test.onnx: initializer 'w' holds 2 value(s)",
                   "needs 1099511627776");
}

TEST(OnnxHostile, InitializerNegativeDimension) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    add_raw_initializer(b, "w", {2, -3}, 8);
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w' has a negative dimension -3");
}

TEST(OnnxHostile, InputNegativeDimension) {
    ModelBuilder b(13);
    b.input("x", {2, -5}).output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: input 'x'", "dimension 1 is -5", "must not be negative");
}

TEST(OnnxHostile, InputElementCountOverflows) {
    ModelBuilder b(13);
    b.input("x", {kBig, kBig}).output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: input 'x'", "overflows 64 bits");
}

TEST(OnnxHostile, InputShapeOverrideThatOverflows) {
    ModelBuilder b(13);
    b.input("x", {0, 4}, TensorProto::FLOAT, {"n", ""}).output("y");
    b.node("Relu", {"x"}, {"y"});
    ImportOptions opts;
    opts.input_shapes["x"] = {int64_t{1} << 62, 4};
    EXPECT_MESSAGE(b.import(opts), "test.onnx: input 'x'", "overflows 64 bits");
}

TEST(OnnxHostile, ValueInfoIsNotTrusted) {
    // value_info and the outputs' declared types are hints the importer does not read: absurd
    // ones change nothing.
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"r"});
    b.node("Neg", {"r"}, {"y"});
    auto* vi = b.graph->add_value_info();
    vi->set_name("r");
    ModelBuilder::set_type(vi, TensorProto::FLOAT, {kBig, -7, kBig}, {});
    ModelBuilder::set_type(b.graph->mutable_output(0), TensorProto::FLOAT, {-1, kBig}, {});
    graph::IRModule m = b.import();
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(2,), float32]");
}

TEST(OnnxHostile, ExpandToAnOverflowingShape) {
    ModelBuilder b(13);
    b.input("x", {1}).output("y");
    b.int64_init("shape", {3}, {kBig, kBig, kBig});
    b.node("Expand", {"x", "shape"}, {"y"}, "expand_1");
    EXPECT_MESSAGE(b.import(), "test.onnx: node 'expand_1' (Expand, opset 13)",
                   "overflows 64 bits");
}

TEST(OnnxHostile, ExpandOfShapeValuesToAHugeShape) {
    // Shape arithmetic (an int64 tensor expanded) must not materialize the huge result.
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.int64_init("v", {1}, {7});
    b.int64_init("shape", {2}, {kBig, kBig});
    b.node("Expand", {"v", "shape"}, {"e"}, "expand_2");
    b.node("Shape", {"x"}, {"y"});
    b.node("Identity", {"e"}, {"unused"});
    EXPECT_MESSAGE(b.import(), "node 'expand_2' (Expand, opset 13)", "overflows 64 bits");
}

TEST(OnnxHostile, ExpandToANegativeShape) {
    ModelBuilder b(13);
    b.input("x", {1}).output("y");
    b.int64_init("shape", {2}, {3, -4});
    b.node("Expand", {"x", "shape"}, {"y"}, "expand_3");
    EXPECT_MESSAGE(b.import(), "node 'expand_3' (Expand, opset 13)", "-4");
}

TEST(OnnxHostile, ConstantOfShapeThatOverflows) {
    ModelBuilder b(13);
    b.output("y");
    b.int64_init("shape", {2}, {kBig, kBig});
    b.node("ConstantOfShape", {"shape"}, {"y"}, "zeros");
    EXPECT_MESSAGE(b.import(), "test.onnx: node 'zeros' (ConstantOfShape, opset 13)",
                   "overflows 64 bits");
}

TEST(OnnxHostile, ConstantOfShapeNegative) {
    for (bool integer_fill : {false, true}) {
        ModelBuilder b(13);
        b.output("y");
        b.int64_init("shape", {2}, {4, -2});
        auto* n = b.node("ConstantOfShape", {"shape"}, {"y"}, "zeros");
        if (integer_fill) {
            auto* a = n->add_attribute();
            a->set_name("value");
            a->set_type(::onnx::AttributeProto::TENSOR);
            a->mutable_t()->set_data_type(TensorProto::INT64);
            a->mutable_t()->add_dims(1);
            a->mutable_t()->add_int64_data(3);
        }
        EXPECT_MESSAGE(b.import(), "node 'zeros' (ConstantOfShape, opset 13)", "-2");
    }
}

TEST(OnnxHostile, TileThatOverflows) {
    ModelBuilder b(13);
    b.input("x", {kBig}).output("y");
    b.int64_init("reps", {1}, {kBig});
    b.node("Tile", {"x", "reps"}, {"y"}, "tile_1");
    EXPECT_MESSAGE(b.import(), "test.onnx: node 'tile_1' (Tile, opset 13)", "overflows 64 bits");
}

TEST(OnnxHostile, TileWithNegativeRepeats) {
    ModelBuilder b(13);
    b.input("x", {3}).output("y");
    b.int64_init("reps", {1}, {-2});
    b.node("Tile", {"x", "reps"}, {"y"}, "tile_2");
    EXPECT_MESSAGE(b.import(), "node 'tile_2' (Tile, opset 13)", "-2");
}

TEST(OnnxHostile, ReshapeTargetThatOverflows) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.int64_init("shape", {3}, {kBig, kBig, -1});
    b.node("Reshape", {"x", "shape"}, {"y"}, "reshape_1");
    EXPECT_MESSAGE(b.import(),
                   "test.onnx: node 'reshape_1' (Reshape, opset 13): the target shape "
                   "[1099511627776, 1099511627776, -1] overflows 64 bits");
}

TEST(OnnxHostile, GatherOfAConstantIndexOutOfRange) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.int64_init("i", {2}, {1, int64_t{1} << 62});
    b.node("Gather", {"x", "i"}, {"y"}, "gather_0");
    EXPECT_MESSAGE(b.import(),
                   "node 'gather_0' (Gather, opset 13): index 4611686018427387904 is "
                   "out of range for axis 0 of size 4");
}

TEST(OnnxHostile, ResizeScaleOutOfRange) {
    ModelBuilder b(13);
    b.input("x", {1, 1, 2, 2}).output("y");
    b.float_init("scales", {4}, {1, 1, 1e30f, 2});
    b.node("Resize", {"x", "", "scales"}, {"y"}, "resize_0");
    EXPECT_MESSAGE(b.import(), "node 'resize_0' (Resize, opset 13): scale 1e+30 of dimension 2",
                   "out of range");
}

TEST(OnnxHostile, ReshapeTargetWithANegativeEntryOtherThanMinusOne) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    b.int64_init("shape", {2}, {-2, -2});
    b.node("Reshape", {"x", "shape"}, {"y"}, "reshape_2");
    EXPECT_MESSAGE(b.import(), "node 'reshape_2' (Reshape, opset 13)", "-2");
    // The same on shape values (an int64 tensor reshaped at import time).
    ModelBuilder c(13);
    c.output("y");
    c.int64_init("v", {4}, {1, 2, 3, 4});
    c.int64_init("shape", {2}, {-2, -2});
    c.node("Reshape", {"v", "shape"}, {"y"}, "reshape_3");
    EXPECT_MESSAGE(c.import(), "node 'reshape_3' (Reshape, opset 13)", "-2");
}

TEST(OnnxHostile, ShapeArithmeticThatOverflowsDoesNotTrap) {
    // INT64_MIN / -1 traps on x86; ONNX integer arithmetic wraps, and so does the import-time
    // evaluation of it.
    ModelBuilder b(13);
    b.output("q").output("r").output("p").output("n");
    b.int64_init("a", {1}, {INT64_MIN});
    b.int64_init("m", {1}, {-1});
    b.node("Div", {"a", "m"}, {"q"}, "div");
    b.node("Mod", {"a", "m"}, {"r"}, "mod");
    b.node("Mul", {"a", "m"}, {"p"}, "mul");
    b.node("Neg", {"a"}, {"n"}, "neg");
    graph::IRModule m = b.import();
    const auto* t = m.main()->body.as<graph::Tuple>();
    ASSERT_NE(t, nullptr);
    std::vector<int64_t> expect = {INT64_MIN, 0, INT64_MIN, INT64_MIN};
    for (size_t i = 0; i < expect.size(); ++i) {
        const auto* c = t->fields[i].as<graph::Constant>();
        ASSERT_NE(c, nullptr) << i;
        EXPECT_EQ(c->data.to_vector<int64_t>(), std::vector<int64_t>{expect[i]}) << i;
    }
}

TEST(OnnxHostile, UnsqueezeWithRepeatedAxes) {
    ModelBuilder b(13);
    b.output("y");
    b.int64_init("v", {1}, {5});
    b.int64_init("axes", {2}, {0, 0});
    b.node("Unsqueeze", {"v", "axes"}, {"y"}, "unsq");
    EXPECT_MESSAGE(b.import(), "node 'unsq' (Unsqueeze, opset 13)", "axis 0", "twice");
}

// ---- zero where it is not allowed -------------------------------------------------------------

TEST(OnnxHostile, ZeroStrideDilationAndGroup) {
    struct Case {
        const char* attr;
        std::vector<int64_t> value;
        const char* message;
    };
    for (const Case& c : {Case{"strides", {0, 1}, "strides"}, Case{"dilations", {1, 0}, "dilation"},
                          Case{"group", {0}, "group"}}) {
        ModelBuilder b(13);
        b.input("x", {1, 2, 7, 7}).output("y");
        b.float_init("w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f));
        auto* n = b.node("Conv", {"x", "w"}, {"y"}, "conv_0");
        if (std::string(c.attr) == "group") {
            ModelBuilder::attr_int(n, c.attr, c.value[0]);
        } else {
            ModelBuilder::attr_ints(n, c.attr, c.value);
        }
        EXPECT_MESSAGE(b.import(), "test.onnx: node 'conv_0' (Conv, opset 13)", c.message);
    }
    ModelBuilder p(13);
    p.input("x", {1, 2, 7, 7}).output("y");
    auto* pool = p.node("MaxPool", {"x"}, {"y"}, "pool_0");
    ModelBuilder::attr_ints(pool, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(pool, "strides", {0, 0});
    EXPECT_MESSAGE(p.import(), "node 'pool_0' (MaxPool, opset 13)", "strides");
    ModelBuilder k(13);
    k.input("x", {1, 2, 7, 7}).output("y");
    ModelBuilder::attr_ints(k.node("MaxPool", {"x"}, {"y"}, "pool_1"), "kernel_shape", {0, 2});
    EXPECT_MESSAGE(k.import(), "node 'pool_1' (MaxPool, opset 13)", "pool_size must be >= 1");
}

TEST(OnnxHostile, ZeroBlockSize) {
    for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
        ModelBuilder b(13);
        b.input("x", {1, 4, 2, 2}).output("y");
        ModelBuilder::attr_int(b.node(op, {"x"}, {"y"}, "blocks"), "blocksize", 0);
        EXPECT_MESSAGE(b.import(), "node 'blocks' (", "blocksize");
    }
}

TEST(OnnxHostile, RangeWithZeroDelta) {
    ModelBuilder b(13);
    b.output("y");
    for (auto [name, v] : {std::pair{"s", 0.0f}, std::pair{"l", 5.0f}, std::pair{"d", 0.0f}}) {
        b.float_init(name, {}, {v});
    }
    b.node("Range", {"s", "l", "d"}, {"y"}, "range_0");
    EXPECT_MESSAGE(b.import(), "node 'range_0' (Range, opset 13)", "delta");
}

// ---- data shorter or longer than its shape ----------------------------------------------------

TEST(OnnxHostile, RawDataLongerThanTheShape) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    add_raw_initializer(b, "w", {2}, 12);
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w': raw_data has 12 bytes",
                   "float32[2] needs 8");
}

TEST(OnnxHostile, TypedDataShorterOrLonger) {
    for (size_t n : {1, 3}) {
        ModelBuilder b(13);
        b.input("x", {2}, TensorProto::INT64).output("y");
        b.int64_init("w", {2}, std::vector<int64_t>(n, 1));
        b.node("Add", {"x", "w"}, {"y"});
        std::string holds = "test.onnx: initializer 'w' holds " + std::to_string(n);
        EXPECT_MESSAGE(b.import(), holds.c_str(), "needs 2");
    }
}

TEST(OnnxHostile, ConstantNodeTensorOfTheWrongSize) {
    ModelBuilder b(13);
    b.output("y");
    auto* n = b.node("Constant", {}, {"y"}, "const_0");
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::FLOAT);
    a->mutable_t()->add_dims(4);
    a->mutable_t()->add_float_data(1.0f);
    EXPECT_MESSAGE(b.import(), "test.onnx: node 'const_0' (Constant, opset 13)", "holds 1 value(s)",
                   "needs 4");
}

struct ExternalModel {
    std::filesystem::path dir;
    ModelBuilder b{13};
    ::onnx::TensorProto* t = nullptr;

    // An initializer w: float32[4] stored in weights.bin (`file_bytes` bytes long).
    explicit ExternalModel(const std::string& name, size_t file_bytes) {
        dir = testing::temp_dir(name);
        std::ofstream(dir / "weights.bin", std::ios::binary) << std::string(file_bytes, '\1');
        b.input("x", {4}).output("y");
        t = b.graph->add_initializer();
        t->set_name("w");
        t->set_data_type(TensorProto::FLOAT);
        t->add_dims(4);
        t->set_data_location(TensorProto::EXTERNAL);
        b.node("Add", {"x", "w"}, {"y"});
    }
    ~ExternalModel() { std::filesystem::remove_all(dir); }
    void add(const std::string& key, const std::string& value) {
        auto* e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
    }
    std::string path() const { return (dir / "m.onnx").string(); }
    void import() const { from_onnx(b.model, {}, path()); }
    std::string error() const {
        return errors_test::user_error_of([&] { import(); });
    }
};

TEST(OnnxHostile, ExternalDataShorterThanTheShape) {
    ExternalModel m("ext_short", 10);
    m.add("location", "weights.bin");
    std::string msg = m.error();
    EXPECT_TRUE(testing::contains(msg, "initializer 'w': external data file")) << msg;
    EXPECT_TRUE(testing::contains(msg, "16 bytes")) << msg;
}

TEST(OnnxHostile, ExternalDataLengthThatDiffersFromTheShape) {
    ExternalModel m("ext_length", 64);
    m.add("location", "weights.bin");
    m.add("length", "20");
    EXPECT_TRUE(testing::contains(m.error(), "initializer 'w': external data length 20"));
}

TEST(OnnxHostile, ExternalDataOffsetPastTheEndOrNegative) {
    for (const char* offset : {"100", "-8", "99999999999999999999"}) {
        ExternalModel m(std::string("ext_offset") + (offset[0] == '-' ? "n" : "p"), 32);
        m.add("location", "weights.bin");
        m.add("offset", offset);
        std::string msg = m.error();
        EXPECT_TRUE(testing::contains(msg, "initializer 'w': external data")) << msg;
        EXPECT_TRUE(testing::contains(msg, "offset")) << msg;
    }
}

TEST(OnnxHostile, ExternalDataOutsideTheModelsDirectory) {
    for (const char* location : {"../weights.bin", "/etc/passwd", "sub/../../x.bin"}) {
        ExternalModel m("ext_escape", 16);
        m.add("location", location);
        EXPECT_MESSAGE(m.import(), "initializer 'w': external data location", location,
                       "outside the model's directory");
    }
}

// ---- names: dangling, cyclic, produced twice --------------------------------------------------

TEST(OnnxHostile, DanglingGraphOutput) {
    ModelBuilder b(13);
    b.input("x", {2}).output("nowhere");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: output 'nowhere' is neither a graph input");
}

TEST(OnnxHostile, CycleIsReportedAsOne) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.node("Add", {"x", "b"}, {"a"}, "first");
    b.node("Relu", {"a"}, {"b"}, "second");
    b.node("Identity", {"b"}, {"y"}, "third");
    EXPECT_MESSAGE(
        b.import(),
        "node 'first' (Add, opset 13): input 'b' is the output of the later node 'second'",
        "topologically sorted", "cycle");
}

TEST(OnnxHostile, ValueProducedTwice) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"}, "first");
    b.node("Neg", {"x"}, {"y"}, "second");
    EXPECT_MESSAGE(b.import(),
                   "node 'second' (Neg, opset 13): output 'y' is already produced by node 'first'");
}

TEST(OnnxHostile, NodeOutputThatRedefinesAnInputOrInitializer) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.float_init("w", {2}, {1, 2});
    b.node("Relu", {"x"}, {"x"}, "over_input");
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "node 'over_input' (Relu, opset 13): output 'x'", "graph input");
    ModelBuilder c(13);
    c.input("x", {2}).output("y");
    c.float_init("w", {2}, {1, 2});
    c.node("Relu", {"x"}, {"w"}, "over_init");
    c.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(c.import(), "node 'over_init' (Relu, opset 13): output 'w'", "initializer");
}

TEST(OnnxHostile, OneNodeNamingTwoOutputsAlike) {
    ModelBuilder b(13);
    b.input("x", {4}).output("y");
    ModelBuilder::attr_int(b.node("Split", {"x"}, {"a", "a"}, "split_0"), "axis", 0);
    b.node("Identity", {"a"}, {"y"});
    EXPECT_MESSAGE(b.import(), "node 'split_0' (Split, opset 13): output 'a'", "twice");
}

TEST(OnnxHostile, DuplicateInitializersAndInputs) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.float_init("w", {2}, {1, 2});
    b.float_init("w", {2}, {3, 4});
    b.node("Add", {"x", "w"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: initializer 'w' is defined twice");
    ModelBuilder c(13);
    c.input("x", {2}).input("x", {3}).output("y");
    c.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(c.import(), "test.onnx: input 'x' is listed twice");
}

TEST(OnnxHostile, DuplicateGraphOutputs) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y").output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: output 'y' is listed twice");
}

// ---- opsets ------------------------------------------------------------------------------------

TEST(OnnxHostile, OpsetZeroOrNegative) {
    for (int v : {0, -3}) {
        ModelBuilder b(v);
        b.input("x", {2}).output("y");
        b.node("Relu", {"x"}, {"y"});
        std::string opset = "opset " + std::to_string(v);
        EXPECT_MESSAGE(b.import(), "test.onnx: ", opset.c_str(), "is not a valid opset version");
    }
}

TEST(OnnxHostile, OpsetFromTheFuture) {
    ModelBuilder b(99);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: the model imports opset 99",
                   "newer than the newest this importer knows (22)");
}

TEST(OnnxHostile, NoDefaultDomainOpset) {
    ModelBuilder b(13);
    b.model.mutable_opset_import(0)->set_domain("com.example");
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: the model imports no opset of the default domain");
    // IR version 3 and later must list its opsets.
    ModelBuilder none(13);
    none.model.clear_opset_import();
    none.input("x", {2}).output("y");
    none.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(none.import(), "test.onnx: the model imports no opset of the default domain");
}

TEST(OnnxHostile, DefaultDomainImportedTwice) {
    ModelBuilder b(13);
    auto* o = b.model.add_opset_import();
    o->set_domain("ai.onnx");
    o->set_version(11);
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    EXPECT_MESSAGE(b.import(), "test.onnx: the default domain is imported twice", "13", "11");
}

// ---- nested subgraphs ---------------------------------------------------------------------------

// A model whose If nodes nest `depth` deep; the innermost branch returns x.
ModelBuilder nested_ifs(int depth) {
    ModelBuilder b(13);
    b.input("x", {2}).input("c", {}, TensorProto::BOOL).output("y");
    ::onnx::GraphProto* g = b.graph;
    for (int level = 0; level < depth; ++level) {
        auto* n = g->add_node();
        n->set_op_type("If");
        n->set_name("if_" + std::to_string(level));
        n->add_input("c");
        std::string out = "y" + (level ? "_" + std::to_string(level) : std::string());
        n->add_output(out);
        ::onnx::GraphProto* next = nullptr;
        for (const char* branch : {"then_branch", "else_branch"}) {
            auto* a = n->add_attribute();
            a->set_name(branch);
            a->set_type(::onnx::AttributeProto::GRAPH);
            ::onnx::GraphProto* sub = a->mutable_g();
            sub->set_name(std::string(branch) + std::to_string(level));
            std::string sub_out = "y_" + std::to_string(level + 1);
            sub->add_output()->set_name(sub_out);
            if (std::string(branch) == "then_branch") {
                next = sub;
            } else {
                auto* id = sub->add_node();
                id->set_op_type("Identity");
                id->add_input("x");
                id->add_output(sub_out);
            }
        }
        g = next;
    }
    auto* id = g->add_node();
    id->set_op_type("Identity");
    id->add_input("x");
    id->add_output("y_" + std::to_string(depth));
    return b;
}

TEST(OnnxHostile, SubgraphsNestedPastTheLimit) {
    EXPECT_NO_THROW(nested_ifs(8).import());
    EXPECT_MESSAGE(nested_ifs(100).import(), "test.onnx: node 'if_64' (If, opset 13)",
                   "nested more than 64 deep");
    // The same through the protobuf reader: the depth limit is the importer's, not protobuf's.
    std::string bytes;
    ASSERT_TRUE(nested_ifs(100).model.SerializeToString(&bytes));
    EXPECT_MESSAGE(from_onnx_bytes(bytes, {}, "deep.onnx"), "deep.onnx: node 'if_64' (If",
                   "nested more than 64 deep");
}

TEST(OnnxHostile, ProtobufNestedPastTheParsersLimit) {
    std::string bytes;
    ASSERT_TRUE(nested_ifs(1000).model.SerializeToString(&bytes));
    EXPECT_MESSAGE(from_onnx_bytes(bytes, {}, "deeper.onnx"), "deeper.onnx: not a valid ONNX model",
                   "nested deeper than");
}

// ---- files too big, cut short -----------------------------------------------------------------

TEST(OnnxHostile, TruncatedModelBytes) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.float_init("w", {64}, std::vector<float>(64, 0.5f));
    b.node("Relu", {"x"}, {"y"});
    std::string bytes;
    ASSERT_TRUE(b.model.SerializeToString(&bytes));
    // Every cut inside the initializer's data or the nodes after it is malformed or loses
    // something the model needs; none may crash.
    for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t{7}}) {
        try {
            from_onnx_bytes(std::string_view(bytes).substr(0, cut), {}, "cut.onnx");
            ADD_FAILURE() << "a model cut at " << cut << " imported";
        } catch (const UserError& e) {
            EXPECT_TRUE(testing::contains(e.what(), "cut.onnx")) << e.what();
        }
    }
}

TEST(OnnxHostile, ModelFileOverTheSizeLimit) {
    ModelBuilder b(13);
    b.input("x", {2}).output("y");
    b.float_init("w", {256}, std::vector<float>(256, 0.5f));
    b.node("Relu", {"x"}, {"y"});
    auto dir = testing::temp_dir("big_model");
    std::string path = (dir / "big.onnx").string();
    {
        std::ofstream out(path, std::ios::binary);
        ASSERT_TRUE(b.model.SerializeToOstream(&out));
    }
    ImportOptions opts;
    opts.max_model_bytes = 100;
    std::string file = path + ": the file is ";
    EXPECT_MESSAGE(from_onnx(path, opts), file.c_str(), " bytes, more than the limit of 100 bytes");
    EXPECT_MESSAGE(from_onnx_bytes(std::string(200, '\0'), opts, "mem.onnx"),
                   "mem.onnx: the model is 200 bytes, more than the limit of 100 bytes");
    opts.max_model_bytes = 1 << 20;
    EXPECT_NO_THROW(from_onnx(path, opts));
    std::filesystem::remove_all(dir);
}

TEST(OnnxHostile, FileOverProtobufsLimit) {
    // A sparse file of 2 GiB: its size is refused before a byte of it is read.
    EXPECT_EQ(ImportOptions{}.max_model_bytes, (int64_t{1} << 31) - 1);
    auto dir = testing::temp_dir("huge_model");
    std::string path = (dir / "huge.onnx").string();
    std::ofstream(path, std::ios::binary).close();
    std::filesystem::resize_file(path, uintmax_t{1} << 31);
    ImportOptions opts;
    opts.max_model_bytes = int64_t{1} << 40;  // no limit of ours: protobuf's still holds
    for (const ImportOptions& o : {ImportOptions{}, opts}) {
        std::string file = path + ": the file is 2147483648 bytes";
        EXPECT_MESSAGE(from_onnx(path, o), file.c_str(), "protobuf's limit of 2147483647 bytes",
                       "external data");
    }
    std::filesystem::remove_all(dir);
}

// Axes given at run time (a graph input): more of them than the input has dimensions is an
// error at import, not a vector of 2^64 - n dimensions (found by fuzzing).
TEST(OnnxHostile, SqueezeMoreRunTimeAxesThanDimensions) {
    ModelBuilder b(13);
    b.input("x", {1, 3, 1, 5}).input("axes", {39}, ::onnx::TensorProto::INT64).output("y");
    b.node("Squeeze", {"x", "axes"}, {"y"});
    EXPECT_MESSAGE(b.import(), "(Squeeze, opset 13)", "39 axes to squeeze from a rank-4 input");
}

}  // namespace
}  // namespace anvil::frontend
