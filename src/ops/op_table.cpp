#include "ops/op_table.h"

#include "support/error.h"

namespace anvil::ops {

#define ANVIL_OP(id, op_name) Ref<graph::Op> make_##id##_op();
#include "ops/ops.def"
#undef ANVIL_OP

const graph::OpTable& op_table() {
    static const graph::OpTable table = [] {
        graph::OpTable t;
#define ANVIL_OP(id, op_name)                                                            \
    {                                                                                    \
        Ref<graph::Op> op = make_##id##_op();                                            \
        ANVIL_CHECK(op->name == op_name)                                                 \
            << "ops.def names " << op_name << " but " << #id << " defines " << op->name; \
        t.add(op);                                                                       \
    }
#include "ops/ops.def"
#undef ANVIL_OP
        return t;
    }();
    return table;
}

const graph::Op& get_op(const std::string& name) {
    const graph::Op* op = op_table().find(name);
    ANVIL_CHECK(op) << "no op named " << name;
    return *op;
}

}  // namespace anvil::ops
