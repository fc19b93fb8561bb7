#include "frontend/pytorch/quantized_values.h"

#include <cmath>
#include <set>

#include "frontend/composite_ops.h"
#include "ops/qnn.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// The output quantization PyTorch's quantized kernels fix for `kind` on `integers` (sigmoid,
// hardsigmoid: [0, 1] in steps of 1/256; tanh: [-1, 1] in steps of 2/256), else null.
std::shared_ptr<const Quantization> fixed_output(const std::string& kind, DataType integers) {
    bool u8 = integers == DataType::uint(8);
    if (integers != DataType::uint(8) && integers != DataType::int_(8)) return nullptr;
    if (kind == "aten::sigmoid" || kind == "aten::hardsigmoid") {
        return std::make_shared<const Quantization>(Quantization{{1.0 / 256}, {u8 ? 0 : -128}, -1});
    }
    if (kind == "aten::tanh") {
        return std::make_shared<const Quantization>(Quantization{{2.0 / 256}, {u8 ? 128 : 0}, -1});
    }
    return nullptr;
}

void quantize_in_place(const NodeBuilder& b, PtValue& v, const PtValue& like,
                       const std::string& kind) {
    if (v.kind == PtValue::List || v.kind == PtValue::Tuple) {
        for (auto& item : v.items) quantize_in_place(b, item, like, kind);
        return;
    }
    if (v.kind != PtValue::Tensor || v.quant || !v.tensor.defined()) return;
    DataType t = b.tensor_type(v.tensor, "the result").dtype;
    DataType integers = b.tensor_type(like.tensor, "the quantized operand").dtype;
    if (t == integers) {
        v.quant = like.quant;
    } else if (t.is_float()) {
        std::shared_ptr<const Quantization> fixed = fixed_output(kind, integers);
        if (!fixed && like.quant->axis >= 0) {
            b.error() << kind << " of a tensor quantized per channel is not supported (its "
                      << "scales would have to follow the result's axes); dequantize it first";
        }
        const Quantization& q = fixed ? *fixed : *like.quant;
        auto [attrs, a] = new_attrs<ops::QuantizeAttrs>();
        a->axis = q.axis;
        a->out_dtype = integers;
        Expr x = cast_to(b, v.tensor, DataType::float32());
        v.tensor =
            b.call("qnn.quantize", {x, scale_operand(b, q), zero_point_operand(b, q)}, attrs);
        v.quant = fixed ? fixed : like.quant;
    }
}

}  // namespace

PtValue quantized_constant(Expr integers, const TsConst& c, const SourceLoc& loc) {
    const TsQuantization& tq = *c.quantized;
    NodeBuilder b(loc, "quantized");
    const auto& t = b.tensor_type(integers, "the quantized tensor '" + c.s + "'");
    if (t.dtype != DataType::uint(8) && t.dtype != DataType::int_(8) &&
        t.dtype != DataType::int32()) {
        b.error() << "the quantized tensor '" << c.s << "' holds " << t.dtype.str()
                  << " integers; uint8, int8 and int32 are supported";
    }
    if (tq.axis >= static_cast<int64_t>(t.ndim())) {
        b.error() << "the quantized tensor '" << c.s << "' has " << t.ndim()
                  << " dimensions, its scales run along axis " << tq.axis;
    }
    if (tq.axis >= 0) {
        const int64_t* n = as_const_int(t.shape[tq.axis]);
        if (!n || *n != static_cast<int64_t>(tq.scales.size())) {
            b.error() << "the quantized tensor '" << c.s << "' has " << tq.scales.size()
                      << " scales along axis " << tq.axis << " of its shape "
                      << graph::type_str(integers->type);
        }
    }
    auto [lo, hi] = ops::quantized_range(t.dtype);
    for (int64_t z : tq.zero_points) {
        if (z < lo || z > hi) {
            b.error() << "the quantized tensor '" << c.s << "' has the zero point " << z
                      << ", outside the range of " << t.dtype.str();
        }
    }
    return PtValue::of_quantized(std::move(integers),
                                 Quantization{tq.scales, tq.zero_points, tq.axis});
}

bool sees_quantized_operands(const std::string& kind) {
    static const std::set<std::string> kinds = {"aten::quantize_per_tensor",
                                                "aten::quantize_per_channel",
                                                "aten::dequantize",
                                                "aten::int_repr",
                                                "aten::q_scale",
                                                "aten::q_zero_point",
                                                "aten::__getitem__",
                                                "aten::size",
                                                "aten::dim",
                                                "aten::numel",
                                                "aten::len",
                                                "aten::__is__",
                                                "aten::__isnot__"};
    return kind.starts_with("quantized::") || kind.starts_with("prim::") || kinds.count(kind);
}

bool moves_elements_only(const std::string& kind) {
    static const std::set<std::string> kinds = {
        "aten::reshape",   "aten::view",      "aten::flatten",    "aten::permute",
        "aten::transpose", "aten::t",         "aten::contiguous", "aten::clone",
        "aten::detach",    "aten::squeeze",   "aten::unsqueeze",  "aten::select",
        "aten::slice",     "aten::narrow",    "aten::chunk",      "aten::split",
        "aten::unbind",    "aten::expand",    "aten::dropout",    "aten::feature_dropout",
        "aten::unflatten", "aten::expand_as", "aten::view_as",    "aten::reshape_as"};
    return kinds.count(kind) > 0;
}

const PtValue* first_quantized(const PtValues& values) {
    for (const auto& v : values) {
        if (v.kind == PtValue::Tensor && v.quant) return &v;
        if (v.kind == PtValue::List || v.kind == PtValue::Tuple) {
            if (const PtValue* q = first_quantized(v.items)) return q;
        }
    }
    return nullptr;
}

PtValues dequantized(const NodeBuilder& b, const PtValues& values) {
    PtValues out = values;
    for (auto& v : out) {
        if (v.kind == PtValue::Tensor && v.quant) {
            v = PtValue::of_tensor(dequantize(b, v));
        } else if (v.kind == PtValue::List || v.kind == PtValue::Tuple) {
            v.items = dequantized(b, v.items);
        }
    }
    return out;
}

void quantize_results(const NodeBuilder& b, PtValues& results, const PtValue& like,
                      const std::string& kind) {
    for (auto& v : results) quantize_in_place(b, v, like, kind);
}

bool moves_quantized_integers(const std::string& kind, const PtValues& operands) {
    return moves_elements_only(kind) && !operands.empty() && operands[0].kind == PtValue::Tensor &&
           operands[0].quant && operands[0].quant->axis < 0;
}

Expr scale_operand(const NodeBuilder& b, const Quantization& q) {
    std::vector<float> s(q.scales.begin(), q.scales.end());
    if (s.size() == 1) return b.constant_scalar(DataType::float32(), s[0]);
    auto data = runtime::NDArray::empty({static_cast<int64_t>(s.size())},
                                        runtime::dl_dtype_from_string("float32"));
    std::copy(s.begin(), s.end(), data.data<float>());
    return b.constant(std::move(data));
}

Expr zero_point_operand(const NodeBuilder& b, const Quantization& q) {
    if (q.zero_points.size() == 1) {
        return b.constant_scalar(DataType::int32(), static_cast<double>(q.zero_points[0]));
    }
    auto data = runtime::NDArray::empty({static_cast<int64_t>(q.zero_points.size())},
                                        runtime::dl_dtype_from_string("int32"));
    std::copy(q.zero_points.begin(), q.zero_points.end(), data.data<int32_t>());
    return b.constant(std::move(data));
}

Expr dequantize(const NodeBuilder& b, const PtValue& q) {
    auto [attrs, a] = new_attrs<ops::DequantizeAttrs>();
    a->axis = q.quant->axis;
    return b.call("qnn.dequantize",
                  {q.tensor, scale_operand(b, *q.quant), zero_point_operand(b, *q.quant)}, attrs);
}

PtValue quantize(const NodeBuilder& b, const Expr& x, double scale, int64_t zero_point,
                 DataType dtype) {
    auto [lo, hi] = ops::quantized_range(dtype);
    if (!(scale > 0) || !std::isfinite(scale) || zero_point < lo || zero_point > hi) {
        b.error() << "quantization to " << dtype.str() << " with scale " << scale
                  << " and zero point " << zero_point << ": the scale must be positive and "
                  << "the zero point in [" << lo << ", " << hi << "]";
    }
    Quantization q{{scale}, {zero_point}, -1};
    auto [attrs, a] = new_attrs<ops::QuantizeAttrs>();
    a->out_dtype = dtype;
    Expr y = b.call(
        "qnn.quantize",
        {cast_to(b, x, DataType::float32()), scale_operand(b, q), zero_point_operand(b, q)}, attrs);
    return PtValue::of_quantized(y, std::move(q));
}

}  // namespace anvil::frontend::pytorch
