// ONNX sequences and optionals in the graph IR (graph::SequenceType, graph::OptionalType). All
// are executor ops: the VM carries them out on its values (a sequence is a tuple of tensors, an
// empty optional is none; runtime/vm_sequence.h), nothing fuses, folds or lowers them.
//
//   seq.construct(%t...)              a sequence of the tensors (one dtype)
//   seq.empty(<result type>)          a sequence with no element (Sequence[empty, dtype])
//   seq.length(%s)                    its length, an int64 scalar
//   seq.at(%s, %pos, <result type>)   the element at %pos (negative counts from the back); the
//                                     result type's dimensions the sequence type does not fix
//                                     are fresh variables the executor binds from the element
//   seq.insert(%s, %t[, %pos])        a new sequence with %t before %pos (default: at the back)
//   seq.erase(%s[, %pos])             a new sequence without the element at %pos (default: last)
//   seq.concat(%s, axis=, new_axis=, <result type>)  ONNX ConcatFromSequence, a copy made by
//                                     the executor (the sequence's length is known only then)
//   seq.split(%x[, %split], axis=, keepdims=)  ONNX SplitToSequence where the number of parts
//                                     is known only at run time: parts of the sizes in a 1-D
//                                     %split, of a 0-D %split's size (the last smaller), or of
//                                     size 1 without one (keepdims = false then drops the axis)
//   optional.some(%x)                 an optional holding %x (a tensor or a sequence)
//   optional.none(<result type>)      an empty optional
//   optional.has_value(%o)            a bool scalar
//   optional.get(%o)                  the value; a run-time error when there is none
//
// %pos is a one-element integer tensor. The importer turns sequences whose elements it knows
// (seq.at of a seq.construct, a ConcatFromSequence of one) into ordinary ops instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/dps_outputs.h"
#include "graph/expr.h"

namespace anvil::ops {

// The result type of seq.empty, seq.at, optional.none.
struct SequenceResultAttrs : graph::AttrsBase<SequenceResultAttrs>, graph::TensorResults {
    static constexpr const char* kTypeName = "SequenceResultAttrs";
    void visit_fields(graph::AttrVisitor& v) override { visit_outputs(v); }
};

struct SequenceConcatAttrs : graph::AttrsBase<SequenceConcatAttrs>, graph::TensorResults {
    static constexpr const char* kTypeName = "SequenceConcatAttrs";
    int64_t axis = 0;
    bool new_axis = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("new_axis", &new_axis);
        visit_outputs(v);
    }
};

struct SequenceSplitAttrs : graph::AttrsBase<SequenceSplitAttrs> {
    static constexpr const char* kTypeName = "SequenceSplitAttrs";
    int64_t axis = 0;  // non-negative
    bool keepdims = true;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("keepdims", &keepdims);
    }
};

graph::Expr make_sequence(std::vector<graph::Expr> tensors, SourceLoc loc = {});
graph::Expr make_empty_sequence(DataType dtype, SourceLoc loc = {});
graph::Expr make_sequence_at(graph::Expr seq, graph::Expr pos, const graph::Type& result,
                             SourceLoc loc = {});
graph::Expr make_sequence_concat(graph::Expr seq, int64_t axis, bool new_axis,
                                 const graph::Type& result, SourceLoc loc = {});
graph::Expr make_optional_none(const graph::Type& result, SourceLoc loc = {});
// seq.split of `x` along `axis`; `split` may be undefined (parts of size 1).
graph::Expr make_sequence_split(graph::Expr x, graph::Expr split, int64_t axis, bool keepdims,
                                SourceLoc loc = {});

// The attributes of `e` when it is a seq.concat call; null otherwise.
const SequenceConcatAttrs* sequence_concat_attrs(const graph::Expr& e);
// The call's op name when `e` calls one of these ops ("seq.at"); empty otherwise.
std::string sequence_op_name(const graph::Expr& e);

}  // namespace anvil::ops
