// Converters of TorchScript's control flow. A condition known at import time (most of them: the
// model's flags and shapes decide them) selects the branch, which is converted in place; one
// known only at run time becomes control.if over module functions (ops/control_flow.h).
#include "frontend/pytorch/convert_ops.h"
#include "ir/analyzer.h"

namespace anvil::frontend::pytorch {

PtValues convert_if(PtContext& ctx) {
    const TsNode& node = ctx.node();
    if (node.blocks.size() != 2) ctx.error() << "an If must have two blocks";
    const PtValue& cond = ctx.input(0);
    if (cond.is_import_time()) {
        PrimExpr c = simplify(cond.scalar);
        if (const int64_t* v = as_const_int(c)) {
            return ctx.blocks().convert_inline(node.blocks[*v ? 0 : 1], {});
        }
        ctx.error() << "the condition " << c
                    << " depends on symbolic sizes; branching on it is not supported yet";
    }
    ctx.error() << "branching on a value computed at run time is not supported yet";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::frontend::pytorch
