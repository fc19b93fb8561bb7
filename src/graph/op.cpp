#include "graph/op.h"

#include "support/error.h"

namespace anvil::graph {

const char* op_pattern_name(OpPattern p) {
    switch (p) {
        case OpPattern::ElemWise:
            return "elemwise";
        case OpPattern::Broadcast:
            return "broadcast";
        case OpPattern::Injective:
            return "injective";
        case OpPattern::CommReduce:
            return "reduce";
        case OpPattern::OutEWiseFusable:
            return "out_elemwise_fusable";
        case OpPattern::Opaque:
            return "opaque";
    }
    return "?";
}

void OpTable::add(Ref<Op> op) {
    ANVIL_CHECK(!find(op->name)) << "op " << op->name << " is listed twice";
    ANVIL_CHECK(op->infer_type && op->make_default_attrs) << "op " << op->name << " is incomplete";
    ops_.push_back(std::move(op));
}

const Op* OpTable::find(const std::string& name) const {
    for (const auto& op : ops_) {
        if (op->name == name) return op.get();
    }
    return nullptr;
}

}  // namespace anvil::graph
