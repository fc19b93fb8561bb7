// The TorchScript graph description: what python/anvil/_torchscript.py writes of a TorchScript
// module (its inlined forward graph, attributes resolved to constants) and the PyTorch importer
// reads. Anvil's C++ never links libtorch: PyTorch reads its own format, this is the hand-over.
//
// It is JSON (the tensors travel apart, by name: a dict of arrays in process, an .npz file from
// the CLI):
//
//   {"format": "anvil.torchscript-graph", "version": 1, "model": "ResNet", "graph": BLOCK}
//   BLOCK  = {"inputs": [VALUE], "nodes": [NODE], "outputs": [ID]}
//   VALUE  = {"id": ID, "name": "x.1", "type": TYPE}        ID: an integer, unique in the model
//   NODE   = {"kind": "aten::conv2d", "inputs": [ID], "outputs": [VALUE],
//             "source": "resnet.py:268: ...",  (optional: the Python line TorchScript recorded)
//             "value": CONST,                  (prim::Constant only)
//             "attribute": "name",             (prim::GetAttr/SetAttr/CallMethod left unresolved)
//             "blocks": [BLOCK]}               (prim::If: then, else; prim::Loop: the body)
//   TYPE   = {"kind": "tensor", "dtype"?: "float32", "shape"?: [1, 3]} | {"kind": "int"} | float
//            | bool | str | none | device | number | {"kind": "list", "elem": TYPE}
//            | {"kind": "optional", "elem": TYPE} | {"kind": "tuple", "elems": [TYPE]}
//            | {"kind": "other", "str": "__torch__.M"}
//   CONST  = {"int": 3} | {"float": 0.5 or "inf"/"-inf"/"nan"} | {"bool": true} | {"str": "s"}
//            | {"none": true} | {"device": "cpu"} | {"list": [CONST]} | {"tuple": [CONST]}
//            | {"tensor": "layer1.0.conv1.weight", "dtype": "float32", "param": true,
//               "quantized"?: {"scales": [0.01], "zero_points": [0], "axis": -1}}
//   A quantized tensor travels as its integers (int8, uint8, int32) with its scales and zero
//   points: one each (axis -1) or one per index of `axis`. A quantized layer's packed
//   parameters are a tuple constant: (weight, bias, stride, padding, dilation, groups,
//   transposed, output_padding) for a convolution, (weight, bias) for a linear layer.
//
// A value is defined once (a block input or a node output) and used only after its definition,
// in its block or a block nested in it. The reader checks all of this and refuses anything else
// with a UserError naming the origin (and the node): the description may come from a file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anvil::frontend::pytorch {

struct TsType {
    enum Kind { Tensor, Int, Float, Bool, Str, None, Device, Number, List, Optional, Tuple, Other };
    Kind kind = Other;
    std::string dtype;                          // Tensor: "" when not recorded
    std::optional<std::vector<int64_t>> shape;  // Tensor: when recorded
    std::vector<TsType> elems;                  // List/Optional: one; Tuple: each field
    std::string str;                            // Other: TorchScript's spelling
};
// "Tensor", "int", "List[int]", ..., for messages.
std::string type_str(const TsType& t);

// The affine quantization of a tensor: real = (q - zero_point) * scale.
struct TsQuantization {
    std::vector<double> scales;
    std::vector<int64_t> zero_points;
    int64_t axis = -1;  // -1: per tensor
};

struct TsConst {
    enum Kind { Int, Float, Bool, Str, None, Device, List, Tuple, Tensor };
    Kind kind = None;
    int64_t i = 0;
    double f = 0;
    bool b = false;
    std::string s;       // Str, Device, Tensor (its name)
    std::string dtype;   // Tensor
    bool param = false;  // Tensor: one of the module's own (a parameter or buffer)
    std::optional<TsQuantization> quantized;  // Tensor: its integers' scales and zero points
    std::vector<TsConst> items;               // List, Tuple
};

struct TsValue {
    int64_t id = 0;
    std::string name;
    TsType type;
};

struct TsBlock;
struct TsNode {
    std::string kind;
    std::vector<int64_t> inputs;
    std::vector<TsValue> outputs;
    std::string source;  // "file:line: text" or ""
    std::optional<TsConst> value;
    std::string attribute;
    std::vector<TsBlock> blocks;
};

struct TsBlock {
    std::vector<TsValue> inputs;
    std::vector<TsNode> nodes;
    std::vector<int64_t> outputs;
};

struct TsGraph {
    std::string model;  // the module's class name
    TsBlock graph;
};

// Parses and checks a description; `origin` names it in errors ("model.pt", "<memory>").
TsGraph parse_torchscript_graph(std::string_view json, const std::string& origin);

}  // namespace anvil::frontend::pytorch
