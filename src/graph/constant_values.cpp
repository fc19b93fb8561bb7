#include "graph/constant_values.h"

namespace anvil::graph {

namespace {

template <typename T>
void read_as_double(const runtime::NDArray& a, std::vector<double>* out) {
    const T* p = static_cast<const T*>(a.raw_data());
    out->assign(p, p + a.num_elements());
}

}  // namespace

std::optional<std::vector<double>> constant_values(const Expr& e) {
    auto* c = e.as<Constant>();
    if (!c) return std::nullopt;
    DLDataType t = c->data.dtype();
    std::vector<double> out;
    if (t.lanes != 1) return std::nullopt;
    if (t.code == kDLFloat && t.bits == 32) {
        read_as_double<float>(c->data, &out);
    } else if (t.code == kDLFloat && t.bits == 64) {
        read_as_double<double>(c->data, &out);
    } else if (t.code == kDLInt && t.bits == 32) {
        read_as_double<int32_t>(c->data, &out);
    } else if (t.code == kDLInt && t.bits == 64) {
        read_as_double<int64_t>(c->data, &out);
    } else {
        return std::nullopt;
    }
    return out;
}

std::optional<double> uniform_value(const Expr& e) {
    auto values = constant_values(e);
    if (!values || values->empty()) return std::nullopt;
    for (double v : *values) {
        if (v != values->front()) return std::nullopt;
    }
    return values->front();
}

}  // namespace anvil::graph
