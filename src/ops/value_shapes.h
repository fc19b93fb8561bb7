// Shapes computed from tensor values at run time (ONNX Reshape, Expand, Tile, ConstantOfShape,
// Range, ... whose shape operands are model inputs or computed tensors). Neither op has a kernel:
// the VM carries them out (runtime/vm_program.h), so a model stays general in those values
// instead of being specialized to one run's.
//
//   bind_values(%x, %t1, ..., vars=(a, b, c), checks=(...))
//       is %x; before anything uses it, the integer values of %t1, ... (in order, row-major) are
//       bound to the dimension variables a, b, c, and each check (a condition over dimensions)
//       must hold, else a UserError names the node. Ops after it use a, b, c in their shapes.
//   dynamic_reshape(%x, %shape, dims=(d0, d1), allowzero=False)
//       ONNX Reshape to the values of %shape (0 copies the input's dimension unless allowzero,
//       one -1 is inferred; the element counts must agree): a view of %x, no copy; the result's
//       dimensions are bound to the variables d0, d1.
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/expr.h"

namespace anvil::ops {

struct BindValuesAttrs : graph::AttrsBase<BindValuesAttrs> {
    static constexpr const char* kTypeName = "BindValuesAttrs";
    std::vector<PrimExpr> vars;    // int64 variables, one per value
    std::vector<PrimExpr> checks;  // conditions (non-zero when they hold)
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("vars", &vars);
        v.visit("checks", &checks);
    }
};

struct DynamicReshapeAttrs : graph::AttrsBase<DynamicReshapeAttrs> {
    static constexpr const char* kTypeName = "DynamicReshapeAttrs";
    std::vector<PrimExpr> dims;  // int64 variables, one per entry of the shape
    bool allowzero = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("dims", &dims);
        v.visit("allowzero", &allowzero);
    }
};

// `x` with `vars` bound to the values of `tensors` (integer tensors of static shapes) and
// `checks` verified at run time.
graph::Expr make_bind_values(graph::Expr x, const std::vector<graph::Expr>& tensors,
                             std::vector<PrimExpr> vars, std::vector<PrimExpr> checks,
                             SourceLoc loc = {});

// The attributes of `e` when it is such a call; null otherwise.
const BindValuesAttrs* bind_values_attrs(const graph::Expr& e);
const DynamicReshapeAttrs* dynamic_reshape_attrs(const graph::Expr& e);

}  // namespace anvil::ops
