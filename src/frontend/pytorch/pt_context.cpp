// PtContext: reading a TorchScript node's operands with the checks converters need.
#include "frontend/pytorch/converter.h"
#include "ir/analyzer.h"
#include "ops/shape_tensor.h"

namespace anvil::frontend::pytorch {

std::optional<int64_t> known_int(const PrimExpr& e) {
    PrimExpr simplified = simplify(e);
    const int64_t* v = as_const_int(simplified);
    return v ? std::optional<int64_t>(*v) : std::nullopt;
}

using graph::Expr;

const char* kind_name(PtValue::Kind kind) {
    switch (kind) {
        case PtValue::None:
            return "None";
        case PtValue::Tensor:
            return "Tensor";
        case PtValue::Int:
            return "int";
        case PtValue::Float:
            return "float";
        case PtValue::Bool:
            return "bool";
        case PtValue::Str:
            return "str";
        case PtValue::Device:
            return "Device";
        case PtValue::List:
            return "list";
        case PtValue::Tuple:
            return "tuple";
        case PtValue::Unknown:
            return "unknown";
    }
    return "?";
}

std::optional<DataType> dtype_from_scalar_type(int64_t code) {
    switch (code) {
        case 0:
            return DataType::uint(8);
        case 1:
            return DataType::int_(8);
        case 2:
            return DataType::int_(16);
        case 3:
            return DataType::int32();
        case 4:
            return DataType::int64();
        case 5:
            return DataType::float16();
        case 6:
            return DataType::float32();
        case 7:
            return DataType::float64();
        case 11:
            return DataType::bool_();
        case 15:
            return DataType::bfloat16();
        default:
            return std::nullopt;
    }
}

std::optional<DataType> dtype_from_name(const std::string& name) {
    static const std::pair<const char*, DataType> kNames[] = {
        {"float32", DataType::float32()}, {"float64", DataType::float64()},
        {"float16", DataType::float16()}, {"bfloat16", DataType::bfloat16()},
        {"int64", DataType::int64()},     {"int32", DataType::int32()},
        {"int16", DataType::int_(16)},    {"int8", DataType::int_(8)},
        {"uint8", DataType::uint(8)},     {"bool", DataType::bool_()}};
    for (const auto& [n, t] : kNames) {
        if (name == n) return t;
    }
    return std::nullopt;
}

PtContext::PtContext(const TsNode& node, SourceLoc loc, PtValues inputs, BlockConverter* blocks)
    : NodeBuilder(std::move(loc), node.outputs.empty() ? node.kind : node.outputs[0].name),
      node_(node),
      inputs_(std::move(inputs)),
      blocks_(blocks) {}

const PtValue& PtContext::input(size_t i) const {
    if (i >= inputs_.size()) {
        error() << "operand " << i << " is required but the node has " << inputs_.size();
    }
    return inputs_[i];
}

bool PtContext::is_none(size_t i) const {
    return i >= inputs_.size() || inputs_[i].kind == PtValue::None;
}

Expr number_tensor(const NodeBuilder& ctx, const PtValue& v, DataType dtype) {
    if (!v.scalar.defined()) {
        // A malformed graph can put a None (or a list) where a number belongs.
        if (!v.tensor.defined()) ctx.error() << "expected a number, got " << kind_name(v.kind);
        return cast_to(ctx, v.tensor, dtype);  // run-time number
    }
    PrimExpr s = simplify(v.scalar);
    // Through int64 exactly: a double cannot hold every int64 (2**53 + 1).
    if (const auto* i = as_const_int(s)) return cast_to(ctx, ctx.constant_int64({*i}, {}), dtype);
    if (const auto* f = s.as<FloatImm>()) return ctx.constant_scalar(dtype, f->value);
    // A symbolic size: a shape_tensor the executor fills in.
    Expr t = ops::make_shape_tensor({cast(DataType::int64(), s)}, {}, DataType::int64(), ctx.loc());
    return cast_to(ctx, t, dtype);
}

DataType number_dtype(PtValue::Kind kind) {
    if (kind == PtValue::Float) return DataType::float32();
    if (kind == PtValue::Bool) return DataType::bool_();
    return DataType::int64();
}

Expr PtContext::tensor(size_t i) const {
    const PtValue& v = input(i);
    if (v.kind == PtValue::Tensor) return v.tensor;
    if (v.is_number()) return number_tensor(*this, v, number_dtype(v.kind));
    error() << "operand " << i << " must be a tensor, got " << kind_name(v.kind);
    ANVIL_UNREACHABLE();
}

Expr PtContext::tensor_like(size_t i, const Expr& like) const {
    const PtValue& v = input(i);
    if (!v.is_number()) return tensor(i);
    DataType t = tensor_type(like, "operand").dtype;
    // A float scalar with an integer tensor promotes to float (int_tensor * 0.5 is float).
    if (v.kind == PtValue::Float && !t.is_floating()) t = DataType::float32();
    return number_tensor(*this, v, t);
}

namespace {

PrimExpr import_time_number(const PtContext& ctx, const PtValue& v, size_t i, const char* what) {
    if (!v.is_number()) {
        ctx.error() << "operand " << i << " must be " << what << ", got " << kind_name(v.kind);
    }
    if (!v.scalar.defined()) {
        ctx.error() << "operand " << i << " (" << what
                    << ") must be known when the model is imported, but it is computed from "
                       "tensor values at run time";
    }
    return simplify(v.scalar);
}

}  // namespace

PrimExpr PtContext::int_expr(size_t i) const {
    const PtValue& v = input(i);
    PrimExpr s = import_time_number(*this, v, i, "an int");
    if (v.kind == PtValue::Float) error() << "operand " << i << " must be an int, got a float";
    return s.dtype() == DataType::int64() ? s : cast(DataType::int64(), s);
}

int64_t PtContext::int_arg(size_t i) const {
    PrimExpr s = int_expr(i);
    const int64_t* c = as_const_int(s);
    if (!c) {
        error() << "operand " << i << " is the symbolic size " << s
                << ", but this op needs a value known at import time; give static input shapes";
    }
    return *c;
}

double PtContext::float_arg(size_t i) const {
    PrimExpr s = import_time_number(*this, input(i), i, "a number");
    if (const auto* c = as_const_int(s)) return static_cast<double>(*c);
    if (const auto* f = s.as<FloatImm>()) return f->value;
    error() << "operand " << i << " is the symbolic value " << s
            << ", but this op needs a value known at import time";
    ANVIL_UNREACHABLE();
}

bool PtContext::bool_arg(size_t i) const {
    PrimExpr s = import_time_number(*this, input(i), i, "a bool");
    if (const auto* c = as_const_int(s)) return *c != 0;
    error() << "operand " << i << " is the condition " << s
            << ", which is not known at import time";
    ANVIL_UNREACHABLE();
}

std::string PtContext::str_arg(size_t i) const {
    const PtValue& v = input(i);
    if (v.kind != PtValue::Str) error() << "operand " << i << " must be a str";
    return v.str;
}

std::vector<PrimExpr> PtContext::int_exprs(size_t i) const {
    const PtValue& v = input(i);
    if (v.is_number()) return {int_expr(i)};
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        error() << "operand " << i << " must be a list of ints, got " << kind_name(v.kind);
    }
    std::vector<PrimExpr> out;
    for (size_t k = 0; k < v.items.size(); ++k) {
        const PtValue& item = v.items[k];
        if (item.kind != PtValue::Int && item.kind != PtValue::Bool) {
            error() << "operand " << i << " must be a list of ints; item " << k << " is a "
                    << kind_name(item.kind);
        }
        if (!item.scalar.defined()) {
            error() << "operand " << i << ": item " << k
                    << " is computed from tensor values at run time; sizes must be known when "
                       "the model is imported";
        }
        out.push_back(cast(DataType::int64(), simplify(item.scalar)));
    }
    return out;
}

std::vector<int64_t> PtContext::ints(size_t i) const {
    std::vector<int64_t> out;
    for (const auto& e : int_exprs(i)) {
        const std::optional<int64_t> c = known_int(e);
        if (!c) {
            error() << "operand " << i << " holds the symbolic size " << e
                    << ", but this op needs values known at import time; give static input "
                       "shapes";
        }
        out.push_back(*c);
    }
    return out;
}

std::vector<Expr> PtContext::tensors(size_t i) const {
    const PtValue& v = input(i);
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        error() << "operand " << i << " must be a list of tensors, got " << kind_name(v.kind);
    }
    std::vector<Expr> out;
    for (size_t k = 0; k < v.items.size(); ++k) {
        if (v.items[k].kind != PtValue::Tensor) {
            error() << "operand " << i << " must be a list of tensors; item " << k << " is a "
                    << kind_name(v.items[k].kind);
        }
        out.push_back(v.items[k].tensor);
    }
    return out;
}

std::optional<DataType> PtContext::dtype_arg(size_t i) const {
    if (is_none(i)) return std::nullopt;
    int64_t code = int_arg(i);
    auto t = dtype_from_scalar_type(code);
    if (!t)
        error() << "operand " << i << ": the dtype with ScalarType code " << code
                << " (complex or quantized) is not supported";
    return t;
}

const TsType& PtContext::output_type(size_t k) const {
    if (k >= node_.outputs.size()) error() << "the node has no output " << k;
    return node_.outputs[k].type;
}

BlockConverter& PtContext::blocks() const {
    ANVIL_CHECK(blocks_) << "no block converter for " << node_.kind;
    return *blocks_;
}

}  // namespace anvil::frontend::pytorch
