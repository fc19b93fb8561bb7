// ConvertContext: what a converter sees of its node (inputs, attributes, constants) and how it
// builds calls at the node's location.
#include "frontend/onnx/converter.h"

namespace anvil::frontend {

using ::onnx::AttributeProto;

namespace {

const char* attr_kind_name(int type) {
    if (AttributeProto::AttributeType_IsValid(type)) {
        return AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type))
            .c_str();
    }
    return "UNKNOWN";
}

}  // namespace

const graph::Expr& ConvertContext::input(size_t i) const {
    if (i >= inputs_.size() || !inputs_[i].defined()) {
        error() << "input " << i << " is required but the node does not give it";
    }
    return inputs_[i];
}

graph::Expr ConvertContext::optional_input(size_t i) const {
    return i < inputs_.size() ? inputs_[i] : graph::Expr();
}

const AttributeProto* ConvertContext::find_attr(const std::string& name) const {
    for (const auto& a : node_.attribute()) {
        if (a.name() == name) return &a;
    }
    return nullptr;
}

bool ConvertContext::has_attr(const std::string& name) const {
    return find_attr(name) != nullptr;
}

namespace {

// The attribute's kind; attributes written without `type` (old exporters) are recognised by
// which field is set.
int attr_kind(const AttributeProto& a) {
    if (a.type() != AttributeProto::UNDEFINED) return a.type();
    if (a.has_i()) return AttributeProto::INT;
    if (a.has_f()) return AttributeProto::FLOAT;
    if (a.has_s()) return AttributeProto::STRING;
    if (a.has_t()) return AttributeProto::TENSOR;
    if (a.ints_size()) return AttributeProto::INTS;
    if (a.floats_size()) return AttributeProto::FLOATS;
    if (a.strings_size()) return AttributeProto::STRINGS;
    return AttributeProto::UNDEFINED;
}

}  // namespace

#define ANVIL_EXPECT_KIND(a, kind)                                                           \
    if (attr_kind(*a) != AttributeProto::kind && attr_kind(*a) != AttributeProto::UNDEFINED) \
        error() << "attribute '" << name << "' is " << attr_kind_name(attr_kind(*a))         \
                << ", expected " #kind;

int64_t ConvertContext::attr_int(const std::string& name, int64_t fallback) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return fallback;
    ANVIL_EXPECT_KIND(a, INT);
    return a->i();
}

float ConvertContext::attr_float(const std::string& name, float fallback) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return fallback;
    if (attr_kind(*a) == AttributeProto::INT) return static_cast<float>(a->i());
    ANVIL_EXPECT_KIND(a, FLOAT);
    return a->f();
}

std::string ConvertContext::attr_string(const std::string& name,
                                        const std::string& fallback) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return fallback;
    ANVIL_EXPECT_KIND(a, STRING);
    return a->s();
}

std::vector<int64_t> ConvertContext::attr_ints(const std::string& name,
                                               const std::vector<int64_t>& fallback) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return fallback;
    ANVIL_EXPECT_KIND(a, INTS);
    return {a->ints().begin(), a->ints().end()};
}

std::vector<float> ConvertContext::attr_floats(const std::string& name) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return {};
    ANVIL_EXPECT_KIND(a, FLOATS);
    return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> ConvertContext::attr_strings(const std::string& name) const {
    const AttributeProto* a = find_attr(name);
    if (!a) return {};
    ANVIL_EXPECT_KIND(a, STRINGS);
    return {a->strings().begin(), a->strings().end()};
}

runtime::NDArray ConvertContext::attr_tensor(const std::string& name) const {
    const AttributeProto* a = find_attr(name);
    if (!a) error() << "attribute '" << name << "' is required";
    ANVIL_EXPECT_KIND(a, TENSOR);
    return tensor_from_proto(a->t(), base_dir_, loc(), "attribute '" + name + "'");
}

#undef ANVIL_EXPECT_KIND

const ::onnx::GraphProto& ConvertContext::attr_graph(const std::string& name) const {
    const auto* a = find_attr(name);
    if (!a || !a->has_g()) error() << "attribute '" << name << "' (a graph) is required";
    return a->g();
}

SubgraphBuilder& ConvertContext::subgraphs() const {
    ANVIL_CHECK(subgraphs_) << "no subgraph builder for node " << loc().node_name;
    return *subgraphs_;
}

}  // namespace anvil::frontend
