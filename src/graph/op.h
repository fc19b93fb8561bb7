// Operators as the graph sees them. Everything about an op lives in its family file under ops/
// (attributes, type rule, TE compute, fusion pattern, schedules); this struct is the interface
// the graph level and the lowering use, and ops/ops.def is the one table of all ops.
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/type.h"
#include "support/source_loc.h"
#include "te/config_space.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "tir/passes/passes.h"

namespace anvil::graph {

// How an op fuses with its neighbours (TVM's OpPatternKind, same order: lower fuses more).
enum class OpPattern : uint8_t {
    ElemWise = 0,         // out[i] = f(in[i]) on same-shaped tensors
    Broadcast = 1,        // elementwise with numpy broadcasting
    Injective = 2,        // each output element reads a computable set of inputs (reshape, ...)
    CommReduce = 3,       // a reduction (sum, max, ...)
    OutEWiseFusable = 4,  // an anchor whose output can take elementwise tails (conv2d, dense)
    Opaque = 8,           // never fused
};
const char* op_pattern_name(OpPattern p);

struct Op;

// The output type for the given argument types and attributes; UserError at `loc` (the model
// node) when the arguments do not fit.
using TypeRule = Type (*)(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                          const SourceLoc& loc);
// The TE computation of the op's output(s) from its inputs.
using ComputeRule = std::vector<te::Tensor> (*)(const std::vector<te::Tensor>& inputs,
                                                const Attrs& attrs, const Type& out_type);
// Schedules a fused group whose anchor is this op: `anchor` is the op's output tensor inside
// the group (for a group of injective ops only, whose intermediates are all inlined: the
// group's first output), `outputs` the group's outputs. The default schedules injective ops. `ctx`
// carries the target's facts and the knob configuration (te/config_space.h): every choice a rule
// makes is a knob whose default is the analytical choice.
using ScheduleRule = void (*)(te::Schedule& s, const te::Tensor& anchor,
                              const std::vector<te::Tensor>& outputs,
                              const te::ScheduleContext& ctx);

struct Op : Object {
    std::string name;    // "nn.conv2d", "add", ...
    int num_inputs = 1;  // -1: variadic
    Ref<Attrs> (*make_default_attrs)() = nullptr;
    TypeRule infer_type = nullptr;
    ComputeRule compute = nullptr;
    ScheduleRule schedule = nullptr;
    OpPattern pattern = OpPattern::Opaque;
    // Carried out by the executor, not by a kernel (call_tir, shape_tensor): never fused,
    // folded or lowered.
    bool executor_op = false;
    // An anchor that reads its inputs through their index arithmetic (nn.attention): the
    // injective and elementwise ops computing an input for it alone fuse into its kernel (the
    // schedule inlines them), as they would into an injective consumer.
    bool fuses_injective_inputs = false;
    std::string description;  // one line, for inspect and docs
};

// Name → op. ops/ builds the one table of every op (ops::op_table()); the graph level takes it
// as a parameter where it needs lookups by name (the parser), which keeps graph/ independent of
// ops/.
class OpTable {
public:
    void add(Ref<Op> op);
    const Op* find(const std::string& name) const;  // null when absent
    const std::vector<Ref<Op>>& all() const { return ops_; }

private:
    std::vector<Ref<Op>> ops_;
};

}  // namespace anvil::graph
