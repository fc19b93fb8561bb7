// The result type of a call in destination-passing style (ops/call_tir.h: call_tir and
// call_packed), kept as attribute fields so that it prints, parses, compares and hashes like
// any attribute. Attribute structs of such calls derive from DpsOutputs besides AttrsBase; the
// text format (graph/parser.cpp, graph/printer.cpp) finds them by that base and writes the
// result as a type: call_tir(@k, (%x,), Tensor[(n, 128), float32]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/type.h"

namespace anvil::graph {

// A call's result type kept as attribute fields: for output k, out_ndims[k] dimensions taken in
// order from out_shapes, and out_dtypes[k] (comma-separated). Several outputs make a tuple
// result. Control-flow and sequence ops (ops/control_flow.h, ops/sequence.h) keep their result
// types this way too, and may have sequences and optionals among them: out_dtypes[k] is then
// "sequence float32", "optional float32" or "optional sequence float32"; a sequence's rank is
// -1 when any rank is possible and -2 when it is known to be empty, and a dimension its elements
// need not share is -1.
struct TensorResults {
    virtual ~TensorResults() = default;
    std::vector<PrimExpr> out_shapes;
    std::vector<int64_t> out_ndims;
    std::string out_dtypes;

    void visit_outputs(AttrVisitor& v) {
        v.visit("out_shapes", &out_shapes);
        v.visit("out_ndims", &out_ndims);
        v.visit("out_dtypes", &out_dtypes);
    }
    // Stores `result`, a tensor, sequence or optional type or a tuple of them (UserError
    // otherwise).
    void set_outputs(const Type& result);
    // The output types, in order; UserError naming `callee` when the fields do not describe
    // types.
    std::vector<Type> output_types(const std::string& callee) const;
};

// The attributes of a destination-passing call (the text format writes their result as a type).
struct DpsOutputs : TensorResults {};

}  // namespace anvil::graph
