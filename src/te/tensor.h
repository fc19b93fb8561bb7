// Tensor expressions: the computation, separate from how it is scheduled.
//
// A Tensor is the single output of an Operation:
//   PlaceholderOp  an input: a name, a shape and a dtype.
//   ComputeOp      out[axis...] = body, where body reads other tensors through Loads of their
//                  buffers and may be a Reduce over reduce_axis (then the op is a reduction).
// Each operation owns the Buffer that holds its result; a Load of that buffer is how a body
// reads the tensor (`A(i, j)`), and Buffer::producer points back to the operation.
// Operations are immutable; scheduling (te/schedule.h) may replace an operation by a rewritten
// copy that writes the same buffer.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/source_loc.h"

namespace anvil::te {

enum class OpKind : uint8_t { Placeholder, Compute };

struct Operation : Object {
    Operation(OpKind k, std::string n, SourceLoc l)
        : kind(k), name(std::move(n)), loc(std::move(l)) {}
    const OpKind kind;
    const std::string name;
    const SourceLoc loc;  // the user's call site
    Ref<Buffer> buffer;   // set once by the constructor of the concrete op
    // What the stage is for, as the op that built it says (TVM's op.tag): "pad", "pack", ...
    // Schedules find an op's helper stages by tag, never by name, so renaming a stage cannot
    // change a schedule. Set once, right after the op is made (set_tag); empty when untagged.
    std::string tag;
};

struct PlaceholderOp : Operation {
    static constexpr OpKind kKind = OpKind::Placeholder;
    PlaceholderOp(std::string n, std::vector<PrimExpr> shape, DataType dtype, SourceLoc l);
};

struct Tensor;

struct ComputeOp : Operation {
    static constexpr OpKind kKind = OpKind::Compute;
    // Makes the op and its buffer; `reuse_buffer` lets a rewritten copy keep writing the
    // original buffer (cache_write, cache_read rewrites).
    ComputeOp(std::string n, std::vector<Ref<IterVar>> axis, PrimExpr body, SourceLoc l,
              Ref<Buffer> reuse_buffer = nullptr);
    std::vector<Ref<IterVar>> axis;         // data-parallel axes, one per output dimension
    std::vector<Ref<IterVar>> reduce_axis;  // from the body's Reduce, if it is one
    PrimExpr body;
    std::vector<Ref<Operation>> inputs;  // operations whose buffers the body loads, in order
    bool is_reduction() const { return body.is<Reduce>(); }
};

// A handle to an operation's output.
struct Tensor {
    Ref<Operation> op;

    Tensor() = default;
    explicit Tensor(Ref<Operation> o) : op(std::move(o)) {}

    const std::string& name() const { return op->name; }
    const std::vector<PrimExpr>& shape() const { return op->buffer->shape; }
    DataType dtype() const { return op->buffer->dtype; }
    size_t ndim() const { return shape().size(); }
    const Ref<Buffer>& buffer() const { return op->buffer; }
    // The compute op's axes (empty for placeholders).
    const std::vector<Ref<IterVar>>& axis() const;
    const std::vector<Ref<IterVar>>& reduce_axis() const;

    // Reads the tensor at the given indices (integer expressions, one per dimension).
    PrimExpr operator()(std::vector<PrimExpr> indices) const;
    template <typename... I>
    PrimExpr operator()(I... indices) const {
        return (*this)(std::vector<PrimExpr>{PrimExpr(indices)...});
    }
    bool same_as(const Tensor& other) const { return op.same_as(other.op); }
};

// The operation that produces `buffer`, when it is a TE tensor's buffer.
Ref<Operation> producer_of(const Ref<Buffer>& buffer);

// ---- building tensor expressions --------------------------------------------------------

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype = DataType::float32(),
                   const std::string& name = "placeholder", SourceLoc loc = SourceLoc::here());

using ComputeFn = std::function<PrimExpr(std::span<const PrimExpr>)>;

// out[i0, i1, ...] = fn(i0, i1, ...); axis variables are named i, j, k, l, m, ... unless
// `axis_names` gives names.
Tensor compute(std::vector<PrimExpr> shape, const ComputeFn& fn,
               const std::string& name = "compute", SourceLoc loc = SourceLoc::here(),
               std::vector<std::string> axis_names = {});
Tensor compute(std::vector<PrimExpr> shape, const std::function<PrimExpr(PrimExpr)>& fn,
               const std::string& name = "compute", SourceLoc loc = SourceLoc::here());
Tensor compute(std::vector<PrimExpr> shape, const std::function<PrimExpr(PrimExpr, PrimExpr)>& fn,
               const std::string& name = "compute", SourceLoc loc = SourceLoc::here());
Tensor compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr)>& fn,
               const std::string& name = "compute", SourceLoc loc = SourceLoc::here());
Tensor compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr, PrimExpr)>& fn,
               const std::string& name = "compute", SourceLoc loc = SourceLoc::here());

// Tags `t`'s op (Operation::tag) and returns `t`; only for an op just made, before any schedule
// or reader sees it.
Tensor set_tag(Tensor t, std::string tag);

// A reduction axis over [0, extent) or a range.
Ref<IterVar> reduce_axis(PrimExpr extent, const std::string& name = "k");
Ref<IterVar> reduce_axis(Range range, const std::string& name = "k");

}  // namespace anvil::te
