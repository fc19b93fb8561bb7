// shape_tensor(): an integer tensor whose elements are shape expressions over the model's
// symbolic dimensions, e.g. [n, seq * 2, 16] — the value of ONNX Shape on a tensor of symbolic
// shape and of the integer arithmetic on it. It has no kernel: the VM computes the values from
// its shape slots at run time (runtime/vm_program.h, shape_tensor). The importer reads the values
// back where a shape operand is expected (Reshape), so shapes stay symbolic instead of being
// specialized to the sizes of one run.
//
//   shape_tensor(%after..., values=[...], shape=[...], dtype=int64)
//
// The arguments are values whose computation binds dimensions the values use (a tensor whose
// shape is known only once it is computed: an element taken out of a sequence, a result of a
// loop); the executor computes them first. Their data is not read.
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "graph/expr.h"

namespace anvil::ops {

struct ShapeTensorAttrs : graph::AttrsBase<ShapeTensorAttrs> {
    static constexpr const char* kTypeName = "ShapeTensorAttrs";
    std::vector<PrimExpr> values;  // int64 expressions, row-major
    std::vector<int64_t> shape;    // of the tensor (empty: a scalar)
    DataType dtype = DataType::int64();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("values", &values);
        v.visit("shape", &shape);
        v.visit("dtype", &dtype);
    }
};

graph::Expr make_shape_tensor(std::vector<PrimExpr> values, std::vector<int64_t> shape,
                              DataType dtype, SourceLoc loc = {},
                              std::vector<graph::Expr> after = {});

// The values of `e` when it is a shape_tensor call; null otherwise.
const ShapeTensorAttrs* shape_tensor_attrs(const graph::Expr& e);

}  // namespace anvil::ops
