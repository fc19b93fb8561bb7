// The TorchScript graph description reader (frontend/pytorch/torchscript_graph.h) and the
// importer's checks of what it reads: a description may come from a file the user hands the
// CLI, so every malformed one is a UserError naming the origin (and the node), never a crash.
// The descriptions here are written by hand; python/tests/pytorch covers what PyTorch writes.
#include "frontend/pytorch/torchscript_graph.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/pytorch/from_pytorch.h"
#include "graph/type.h"
#include "support/error.h"

namespace anvil::frontend {
namespace {

using runtime::NDArray;

// The message of the UserError `f` raises; a test failure if it raises none.
template <class F>
std::string user_error_of(F&& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no UserError";
    return "";
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// A description whose graph block is `graph`.
std::string document(const std::string& graph, const std::string& version = "1") {
    return R"({"format": "anvil.torchscript-graph", "version": )" + version +
           R"(, "model": "M", "graph": )" + graph + "}";
}

const char kTensor[] = R"({"kind": "tensor"})";

std::string value(int id, const std::string& name, const std::string& type = kTensor) {
    return R"({"id": )" + std::to_string(id) + R"(, "name": ")" + name + R"(", "type": )" + type +
           "}";
}

// forward(x) = relu(x): the smallest valid description.
std::string relu_graph() {
    // (The source text ends in ')': the raw string after it needs its own delimiter.)
    return R"({"inputs": [)" + value(1, "x.1") + R"(], "nodes": [
        {"kind": "aten::relu", "inputs": [1], "outputs": [)" +
           value(2, "y") + R"J(], "source": "model.py:7: return x.relu()"}],
        "outputs": [2]})J";
}

std::string parse_error(const std::string& text) {
    return user_error_of([&] { pytorch::parse_torchscript_graph(text, "m.pt"); });
}

std::vector<TorchInput> one_input(std::vector<int64_t> shape = {2, 3}) {
    return {TorchInput{.name = "x", .shape = std::move(shape)}};
}

TEST(TorchScriptGraph, ReadsAValidDescription) {
    pytorch::TsGraph g = pytorch::parse_torchscript_graph(document(relu_graph()), "m.pt");
    EXPECT_EQ(g.model, "M");
    ASSERT_EQ(g.graph.inputs.size(), 1u);
    EXPECT_EQ(g.graph.inputs[0].name, "x.1");
    ASSERT_EQ(g.graph.nodes.size(), 1u);
    EXPECT_EQ(g.graph.nodes[0].kind, "aten::relu");
    EXPECT_EQ(g.graph.nodes[0].source, "model.py:7: return x.relu()");
    TorchImport imported = from_torchscript(document(relu_graph()), {}, one_input(), "m.pt");
    EXPECT_EQ(graph::type_str(imported.mod.main()->body->type), "Tensor[(2, 3), float32]");
}

TEST(TorchScriptGraph, MalformedJson) {
    EXPECT_EQ(parse_error("{\"format\": "),
              "m.pt: malformed TorchScript graph description: document: not a JSON object");
    EXPECT_TRUE(contains(parse_error("[1, 2]"), "not a JSON object"));
    EXPECT_TRUE(contains(parse_error(""), "not a JSON object"));
}

TEST(TorchScriptGraph, WrongFormatOrVersion) {
    std::string other = R"({"format": "onnx", "version": 1, "graph": {}})";
    EXPECT_TRUE(contains(parse_error(other), "'format' is not \"anvil.torchscript-graph\""));
    EXPECT_TRUE(contains(parse_error(document(relu_graph(), "2")),
                         "version 2 is not supported (expected 1)"));
    EXPECT_TRUE(contains(parse_error(document(relu_graph(), "\"1\"")), "is not supported"));
    std::string no_version = R"({"format": "anvil.torchscript-graph", "graph": {}})";
    EXPECT_TRUE(contains(parse_error(no_version), "'version' is missing"));
}

TEST(TorchScriptGraph, MissingOrMistypedFields) {
    EXPECT_TRUE(contains(parse_error(document(R"({"inputs": [], "nodes": []})")),
                         "graph: 'outputs' is missing"));
    EXPECT_TRUE(contains(parse_error(document(R"({"inputs": 3, "nodes": [], "outputs": []})")),
                         "'inputs' must be an array"));
    std::string node_without_kind = R"({"inputs": [], "nodes": [{"inputs": [], "outputs": []}],
                                        "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(node_without_kind)), "node 0: 'kind' is missing"));
    std::string id_not_int = R"({"inputs": [{"id": "one", "type": {"kind": "int"}}],
                                 "nodes": [], "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(id_not_int)), "expected an integer"));
}

TEST(TorchScriptGraph, UseBeforeDefinition) {
    std::string g = R"({"inputs": [)" + value(1, "x") + R"(], "nodes": [
        {"kind": "aten::relu", "inputs": [3], "outputs": [)" +
                    value(2, "a") + R"(]},
        {"kind": "aten::relu", "inputs": [1], "outputs": [)" +
                    value(3, "b") + R"(]}], "outputs": [2]})";
    EXPECT_EQ(parse_error(document(g)),
              "m.pt: malformed TorchScript graph description: graph: node 0 (aten::relu): uses "
              "value 3 before or outside its definition");
    std::string undefined_output = R"({"inputs": [], "nodes": [], "outputs": [7]})";
    EXPECT_TRUE(contains(parse_error(document(undefined_output)),
                         "returns value 7, which is not defined there"));
}

TEST(TorchScriptGraph, UseOutsideTheBlockOfTheDefinition) {
    // %2 is defined in the If's then-block; the node after the If uses it.
    std::string g = R"({"inputs": [)" + value(1, "c", R"({"kind": "bool"})") + R"(], "nodes": [
        {"kind": "prim::If", "inputs": [1], "outputs": [],
         "blocks": [{"inputs": [], "nodes": [{"kind": "prim::Constant", "inputs": [],
                      "outputs": [)" +
                    value(2, "k", R"({"kind": "int"})") + R"(],
                      "value": {"int": 1}}], "outputs": []},
                    {"inputs": [], "nodes": [], "outputs": []}]},
        {"kind": "aten::neg", "inputs": [2], "outputs": [)" +
                    value(3, "n", R"({"kind": "int"})") + R"(]}], "outputs": [3]})";
    EXPECT_TRUE(contains(parse_error(document(g)),
                         "node 1 (aten::neg): uses value 2 before or outside its definition"));
}

TEST(TorchScriptGraph, DuplicateIds) {
    std::string g = R"({"inputs": [)" + value(1, "x") + R"(], "nodes": [
        {"kind": "aten::relu", "inputs": [1], "outputs": [)" +
                    value(1, "y") + R"(]}], "outputs": [1]})";
    EXPECT_TRUE(contains(parse_error(document(g)), "value 'y' (id 1) is defined twice"));
}

TEST(TorchScriptGraph, NestingTooDeep) {
    // Blocks: an If in the then-block of an If ..., 70 deep.
    std::string block = R"({"inputs": [], "nodes": [], "outputs": []})";
    for (int i = 0; i < 70; ++i) {
        block = R"({"inputs": [], "nodes": [{"kind": "prim::If", "inputs": [], "outputs": [],
                   "blocks": [)" +
                block + R"(]}], "outputs": []})";
    }
    EXPECT_TRUE(contains(parse_error(document(block)), "blocks nest more than 64 deep"));
    // Types: List[List[...]].
    std::string type = R"({"kind": "int"})";
    for (int i = 0; i < 70; ++i) type = R"({"kind": "list", "elem": )" + type + "}";
    std::string typed = R"({"inputs": [)" + value(1, "x", type) + R"(], "nodes": [],
                           "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(typed)), "types nest too deeply"));
    // Constants: [[[...]]].
    std::string c = R"({"int": 1})";
    for (int i = 0; i < 70; ++i) c = R"({"list": [)" + c + "]}";
    std::string constant = R"({"inputs": [], "nodes": [{"kind": "prim::Constant", "inputs": [],
        "outputs": [)" + value(1, "c", R"({"kind": "other"})") +
                           R"(], "value": )" + c + R"(}], "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(constant)), "constants nest too deeply"));
}

TEST(TorchScriptGraph, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
    // Far deeper than any limit, where the reader expects an integer or a constant.
    std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::string g = R"({"inputs": [{"id": )" + deep + R"(, "type": {"kind": "int"}}],
                       "nodes": [], "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(g)), "expected an integer"));
    std::string c = R"({"inputs": [], "nodes": [{"kind": "prim::Constant", "inputs": [],
        "outputs": [], "value": {"weird": )" +
                    deep + R"(}}], "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(c)), "unknown constant"));
    EXPECT_TRUE(contains(parse_error(document(relu_graph(), deep)), "is not supported"));
}

TEST(TorchScriptGraph, UnknownConstantAndTypeKinds) {
    std::string c = R"({"inputs": [], "nodes": [{"kind": "prim::Constant", "inputs": [],
        "outputs": [)" +
                    value(1, "c", R"({"kind": "other"})") +
                    R"(], "value": {"complex": [1, 2]}}], "outputs": [1]})";
    EXPECT_TRUE(contains(parse_error(document(c)), "unknown constant {\"complex\""));
    std::string t = R"({"inputs": [)" + value(1, "x", R"({"kind": "quaternion"})") +
                    R"(], "nodes": [], "outputs": []})";
    EXPECT_TRUE(contains(parse_error(document(t)), "unknown type kind 'quaternion'"));
    std::string f = R"({"inputs": [], "nodes": [{"kind": "prim::Constant", "inputs": [],
        "outputs": [)" +
                    value(1, "c", R"({"kind": "float"})") +
                    R"(], "value": {"float": "lots"}}], "outputs": [1]})";
    EXPECT_TRUE(contains(parse_error(document(f)), "a float constant must be a number"));
}

// forward(x) = x + w * 1, where w is the tensor constant `w` described as `dtype`.
std::string graph_with_tensor(const std::string& dtype, bool param) {
    return R"({"inputs": [)" + value(1, "x.1") + R"(], "nodes": [
        {"kind": "prim::Constant", "inputs": [], "outputs": [)" +
           value(2, "w") + R"(], "source": "model.py:3: w",
         "value": {"tensor": "w", "dtype": ")" +
           dtype + R"(", "param": )" + (param ? "true" : "false") + R"(}},
        {"kind": "prim::Constant", "inputs": [], "outputs": [)" +
           value(3, "one", R"({"kind": "int"})") + R"(], "value": {"int": 1}},
        {"kind": "aten::add", "inputs": [1, 2, 3], "outputs": [)" +
           value(4, "y") + R"(], "source": "model.py:4: x + w"}],
        "outputs": [4]})";
}

TEST(TorchScriptImport, ModuleTensorsBecomeParamsByName) {
    NDArray w = NDArray::empty({3}, DLDataType{kDLFloat, 32, 1});
    TorchImport imported =
        from_torchscript(document(graph_with_tensor("float32", true)), {{"w", w}}, one_input());
    ASSERT_EQ(imported.params.size(), 1u);
    EXPECT_EQ(imported.params[0].first, "w");
    ASSERT_EQ(imported.mod.main()->params.size(), 2u);
    EXPECT_EQ(imported.mod.main()->params[1]->name, "w");
    // Not one of the module's own: a constant, no param.
    TorchImport constant =
        from_torchscript(document(graph_with_tensor("float32", false)), {{"w", w}}, one_input());
    EXPECT_TRUE(constant.params.empty());
    EXPECT_EQ(constant.mod.main()->params.size(), 1u);
}

TEST(TorchScriptImport, MissingTensor) {
    std::string msg = user_error_of(
        [] { from_torchscript(document(graph_with_tensor("float32", true)), {}, one_input()); });
    EXPECT_EQ(msg,
              "model.py:3: node 'w' (prim::Constant): the tensor 'w' the graph uses was "
              "not given");
}

TEST(TorchScriptImport, TensorDtypeMismatch) {
    NDArray w = NDArray::empty({3}, DLDataType{kDLInt, 64, 1});
    std::string msg = user_error_of([&] {
        from_torchscript(document(graph_with_tensor("float32", true)), {{"w", w}}, one_input());
    });
    EXPECT_TRUE(contains(msg, "tensor 'w' is described as float32 but its data is int64")) << msg;
    std::string unsupported = user_error_of([&] {
        from_torchscript(document(graph_with_tensor("complex64", true)), {{"w", w}}, one_input());
    });
    EXPECT_TRUE(contains(unsupported, "tensor 'w' has the unsupported element type complex64"))
        << unsupported;
}

TEST(TorchScriptImport, InputsMustMatchForward) {
    std::string none =
        user_error_of([] { from_torchscript(document(relu_graph()), {}, {}, "m.pt"); });
    EXPECT_TRUE(
        contains(none, "m.pt: the module's forward takes 1 input(s) but only 0 were described"))
        << none;
    std::string dim = user_error_of([] {
        from_torchscript(document(relu_graph()), {}, one_input({2, -5}), "m.pt");
    });
    EXPECT_TRUE(contains(dim, "input 'x': dimension 1 is -5")) << dim;
}

TEST(TorchScriptImport, ALoopWhoseTripCountIsNoneIsAnError) {
    // prim::Loop(None, True, x): found by the fuzzer (a null tensor was read, not reported).
    std::string g = R"({"inputs": [)" + value(1, "x.1") + R"(], "nodes": [
        {"kind": "prim::Constant", "inputs": [], "outputs": [)" +
                    value(2, "c", R"({"kind": "bool"})") + R"(], "value": {"bool": true}},
        {"kind": "prim::Constant", "inputs": [], "outputs": [)" +
                    value(3, "n", R"({"kind": "none"})") + R"(], "value": {"none": true}},
        {"kind": "prim::Loop", "inputs": [3, 2, 1], "outputs": [)" +
                    value(4, "y") + R"J(], "source": "model.py:5: for i in range(n)",
         "blocks": [{"inputs": [)J" +
                    value(5, "i", R"({"kind": "int"})") + ", " + value(6, "y.1") +
                    R"(], "nodes": [], "outputs": [2, 6]}]}],
        "outputs": [4]})";
    std::string msg = user_error_of([&] { from_torchscript(document(g), {}, one_input()); });
    EXPECT_TRUE(contains(msg, "(prim::Loop): expected a number, got None")) << msg;
    EXPECT_TRUE(contains(msg, "model.py:5")) << msg;
}

TEST(TorchScriptImport, UnsupportedOpsAreListedTogetherWithTheirLines) {
    std::string g = R"({"inputs": [)" + value(1, "x.1") + R"(], "nodes": [
        {"kind": "aten::frobnicate", "inputs": [1], "outputs": [)" +
                    value(2, "a") + R"J(], "source": "model.py:10: frob(x)"},
        {"kind": "aten::relu", "inputs": [2], "outputs": [)J" +
                    value(3, "b") + R"(]},
        {"kind": "aten::twiddle", "inputs": [3], "outputs": [)" +
                    value(4, "c") + R"J(], "source": "model.py:12: twiddle(b)"}],
        "outputs": [4]})J";
    std::string msg =
        user_error_of([&] { from_torchscript(document(g), {}, one_input(), "m.pt"); });
    EXPECT_TRUE(contains(msg, "2 op kind(s)")) << msg;
    EXPECT_TRUE(contains(msg, "aten::frobnicate (1 node)\n      at model.py:10: frob(x)")) << msg;
    EXPECT_TRUE(contains(msg, "aten::twiddle (1 node)\n      at model.py:12: twiddle(b)")) << msg;
}

}  // namespace
}  // namespace anvil::frontend
