#include "ops/op_spec.h"

namespace anvil::ops {

Ref<graph::Op> make_op(OpSpec spec) {
    auto op = make_ref<graph::Op>();
    auto* o = const_cast<graph::Op*>(op.get());
    o->name = std::move(spec.name);
    o->num_inputs = spec.num_inputs;
    o->make_default_attrs = spec.make_default_attrs;
    o->infer_type = spec.infer_type;
    o->compute = spec.compute;
    o->schedule = spec.schedule;
    o->pattern = spec.pattern;
    o->executor_op = spec.executor_op;
    o->fuses_injective_inputs = spec.fuses_injective_inputs;
    o->description = std::move(spec.description);
    return op;
}

}  // namespace anvil::ops
