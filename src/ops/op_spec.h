// How a family file defines an op: the fields of graph::Op as one struct with designated
// initializers, so that every make_<id>_op() reads as the list of what the op is.
//
//   Ref<graph::Op> make_softmax_op() {
//       return make_op({.name = "nn.softmax",
//                       .make_default_attrs = default_attrs<SoftmaxAttrs>,
//                       .infer_type = softmax_type, ...});
//   }
#pragma once

#include <string>
#include <string_view>

#include "graph/expr.h"
#include "graph/op.h"
#include "support/error.h"

namespace anvil::ops {

// The fields mean what graph::Op's do; those left out keep graph::Op's defaults.
struct OpSpec {
    std::string name;
    int num_inputs = 1;  // -1: variadic
    Ref<graph::Attrs> (*make_default_attrs)() = nullptr;
    graph::TypeRule infer_type = nullptr;
    graph::ComputeRule compute = nullptr;
    graph::ScheduleRule schedule = nullptr;
    graph::OpPattern pattern = graph::OpPattern::Opaque;
    bool executor_op = false;
    bool fuses_injective_inputs = false;
    std::string description;
};

Ref<graph::Op> make_op(OpSpec spec);

// The make_default_attrs of an op whose attributes are `A` (graph::NoAttrs for none).
template <typename A>
Ref<graph::Attrs> default_attrs() {
    return Ref<graph::Attrs>(new A());
}

// A rule's attributes as the op's own attribute struct (InternalError for another struct: a
// caller passing the wrong one is our bug, and reading through it would be undefined).
template <typename A>
const A& attrs_as(const graph::Attrs& attrs) {
    ANVIL_CHECK(std::string_view(attrs.type_name()) == A::kTypeName)
        << "attributes " << attrs.type_name() << " read as " << A::kTypeName;
    return static_cast<const A&>(attrs);
}

// The attributes of `e` when it is a call of the op named `op`; null otherwise.
template <typename A>
const A* call_attrs(const graph::Expr& e, const char* op) {
    auto* call = e.as<graph::Call>();
    if (!call || !call->op.defined() || call->op->name != op) return nullptr;
    return &attrs_as<A>(*call->attrs);
}

}  // namespace anvil::ops
