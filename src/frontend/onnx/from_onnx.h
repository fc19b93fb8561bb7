// The ONNX front end: an ONNX model → a graph IRModule.
//
// The module's "main" takes the graph's inputs (those that are not initializers) as parameters,
// in the model's order, and returns its outputs (a tuple when there are several). Initializers
// become graph Constants, so constant folding sees the weights. Every call carries the SourceLoc
// of the ONNX node it came from (model file, node name, op type, opset), so an error raised by an
// op's type rule names the model node.
//
// Shape arithmetic on static shapes (Shape → Gather → Unsqueeze → Concat → Reshape, as PyTorch
// exports it) is evaluated during import, so such subgraphs arrive as constants; nothing else is
// evaluated here (general constant folding is a graph pass).
//
// Errors are UserErrors: an unreadable, malformed or truncated file names the file; an op,
// attribute value or element type the importer does not support names the node, its op type and
// the opset: `model.onnx: node 'Conv_12' (Conv, opset 13): ...`.
//
// Models are untrusted input. Refused with such an error, never crashed on or imported with a
// wrong meaning: a file over max_model_bytes or protobuf's 2 GiB; a dimension that is negative
// or a tensor whose element count or byte size overflows 64 bits (initializers, inputs, and the
// results of every node as its shape rule computes them); tensor data shorter or longer than its
// shape (raw_data, the typed fields, external data, which must lie inside the model's
// directory); a value used before the node that makes it (a cycle), defined twice or never; an
// opset below 1 or newer than the converters know, or none for the default domain when a node
// uses it; If/Loop/Scan bodies nested more than 64 deep. value_info is not read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/module.h"
#include "runtime/ndarray.h"
#include "runtime/vm.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace anvil::frontend {

struct ImportOptions {
    // Input name → shape; replaces the model's declared shape (symbolic or not) of that input.
    // Naming an input the model does not have is an error.
    std::map<std::string, std::vector<int64_t>> input_shapes;
    // A model file (or byte string) larger than this is refused before it is read. The default
    // is protobuf's own limit for one message, which a larger value cannot lift.
    int64_t max_model_bytes = (int64_t{1} << 31) - 1;
};

// Imports the model at `path`. External-data tensors are read relative to its directory.
graph::IRModule from_onnx(const std::string& path, const ImportOptions& options = {});
// Imports a parsed model. `model_path` names the model in messages and locates external data
// (its directory); empty means "<memory>" and the current directory.
graph::IRModule from_onnx(const ::onnx::ModelProto& model, const ImportOptions& options = {},
                          const std::string& model_path = "");
// Imports a serialized model.
graph::IRModule from_onnx_bytes(std::string_view bytes, const ImportOptions& options = {},
                                const std::string& model_path = "");

// Reads a serialized TensorProto (an ONNX test_data_set's input_K.pb / output_K.pb).
runtime::NDArray read_tensor_pb(const std::string& path);
// Reads a test-data value of `type`: a TensorProto for a tensor, a SequenceProto for a sequence
// (a tuple of tensors), an OptionalProto for an optional (none when empty).
runtime::VMValue read_value_pb(const std::string& path, const graph::Type& type);
// The value of a TensorProto; external data is read relative to `base_dir`. Errors are raised at
// `loc` and name `what` (e.g. "initializer 'fc.weight'").
runtime::NDArray tensor_from_proto(const ::onnx::TensorProto& tensor, const std::string& base_dir,
                                   const SourceLoc& loc, const std::string& what);

}  // namespace anvil::frontend
