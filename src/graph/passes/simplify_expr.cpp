// Algebraic simplification of the graph, bottom-up (operands are simplified before their users,
// so chains collapse in one walk):
//   reshape(reshape(x))           -> reshape(x) to the outer shape
//   reshape(x) of x's own shape    -> x
//   transpose(transpose(x, p), q)  -> transpose(x, p∘q), or x when that is the identity
//   cast(x) to x's own dtype       -> x
//   x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x (the constant all zeros or all ones)
//   power(x, 1) -> x;  power(x, 2) -> x * x (the variance of a layer norm: pow is a call per
//                      element, several times slower than a vector multiply, and x * x is the
//                      correctly rounded square that pow(x, 2) must return anyway)
//   (x - c1) + c2, nn.bias_add(x - c1, c2) -> x + (c2 - c1) for integer x and constants c1, c2
//                                    (exact in wrapping integers; fold_constants makes c2 - c1:
//                                    a quantized convolution's zero-point term and its bias)
// and the saturations of a requantization (canonicalize_qnn's clip to int32 and cast, then the
// model's clip to uint8 and cast), two vector operations fewer per element of its epilogue:
//   clip(clip(x, a, b), c, d)     -> clip(x, max(a, c), min(b, d)) (the ranges overlapping)
//   clip(cast<int>(clip(y, a, b)), c, d) -> cast<int>(clip(y, c, d)), y float32 or float64, the
//                                    first clip keeping the cast inside int (no wrap), [c, d]
//                                    inside it, whole numbers y's type holds exactly
//                                    (truncation commutes with such bounds)
//   cast<int2>(cast<int>(clip(y, c, d))) -> cast<int2>(clip(y, c, d)), y float32 or float64,
//                                    int2 no wider than int, [c, d] whole, exact in y's type
//                                    and held by both integer types
// and a rescaling by exactly 1/2, which every quantized ADD of TFLite's arithmetic has for its
// operand of the larger scale (a fixed-point multiply is a dozen vector instructions):
//   fixed_point_multiply(y, 2^30, 0), rounding UPWARD or TFLITE -> (y >> 1) + (y & 1), which is
//                                    floor((y + 1) / 2) = y / 2 rounded half up, without an
//                                    overflow
// A rewrite applies only when the result keeps the node's type (a broadcasting identity that
// grows x stays).
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/activation.h"
#include "ops/dense.h"
#include "ops/elementwise.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

// transpose's permutation with negative axes normalized; the reversal when `axes` is empty.
std::optional<std::vector<int64_t>> permutation(const Call& call, size_t ndim) {
    const std::vector<int64_t>* axes = &attrs_of<ops::TransposeAttrs>(call).axes;
    std::vector<int64_t> perm(ndim);
    if (axes->empty()) {
        for (size_t i = 0; i < ndim; ++i) perm[i] = static_cast<int64_t>(ndim - 1 - i);
        return perm;
    }
    if (axes->size() != ndim) return std::nullopt;
    for (size_t i = 0; i < ndim; ++i) {
        perm[i] = (*axes)[i] < 0 ? (*axes)[i] + static_cast<int64_t>(ndim) : (*axes)[i];
    }
    return perm;
}

class ExprSimplifier : public ExprMutator {
public:
    explicit ExprSimplifier(const PassContext& ctx) : ctx_(ctx) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || !call->op.defined()) return e;
        const std::string& name = call->op->name;
        if (name == "reshape") return simplify_reshape(e, *call);
        if (name == "transpose") return simplify_transpose(e, *call);
        if (name == "cast") return simplify_cast(e, *call);
        if (name == "clip") return simplify_clip(e, *call);
        if (name == "add" || name == "nn.bias_add") {
            if (Expr merged = merge_constant_terms(e, *call); merged.defined()) return merged;
        }
        if (name == "add" || name == "subtract" || name == "multiply" || name == "divide") {
            return simplify_identity(e, *call);
        }
        if (name == "power") return simplify_power(e, *call);
        if (name == "fixed_point_multiply") return simplify_halving(e, *call);
        return e;
    }

private:
    static bool keeps_type(const Expr& replacement, const Expr& e) {
        return type_equal(replacement->type, e->type);
    }

    Expr simplify_reshape(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        if (keeps_type(x, e)) return x;
        auto* inner = as_op_call(x, "reshape");
        auto* out = e->type.as<TensorType>();
        if (!inner || !out || !out->is_static()) return e;
        for (int64_t d : out->static_shape()) {
            if (d == 0) return e;  // 0 in newshape may mean "copy this dimension"
        }
        // The outer reshape's target may use -1 or 0 relative to its input; the static result
        // shape says the same thing relative to any input.
        ops::ReshapeAttrs attrs = attrs_of<ops::ReshapeAttrs>(call);
        attrs.newshape = out->static_shape();
        attrs.dims.clear();  // symbolic entries, which would replace newshape
        Expr merged =
            make_call(call.op, {inner->args[0]}, make_ref<ops::ReshapeAttrs>(attrs), call.loc);
        return keeps_type(inner->args[0], merged) ? inner->args[0] : merged;
    }

    Expr simplify_transpose(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        auto* xt = x->type.as<TensorType>();
        if (!xt) return e;
        auto outer = permutation(call, xt->ndim());
        if (!outer) return e;
        Expr input = x;
        std::vector<int64_t> perm = *outer;
        if (auto* inner = as_op_call(x, "transpose")) {
            auto first = permutation(*inner, xt->ndim());
            if (!first) return e;
            // out[i] = y[outer[i]] and y[j] = x[first[j]], so out[i] = x[first[outer[i]]].
            for (size_t i = 0; i < perm.size(); ++i) perm[i] = (*first)[(*outer)[i]];
            input = inner->args[0];
        }
        std::vector<int64_t> identity(perm.size());
        std::iota(identity.begin(), identity.end(), 0);
        if (perm == identity) return input;
        if (input.same_as(x)) return e;
        ops::TransposeAttrs attrs = attrs_of<ops::TransposeAttrs>(call);
        attrs.axes = perm;
        return make_call(call.op, {input}, make_ref<ops::TransposeAttrs>(attrs), call.loc);
    }

    Expr simplify_identity(const Expr& e, const Call& call) {
        const std::string& name = call.op->name;
        double unit = (name == "add" || name == "subtract") ? 0.0 : 1.0;
        bool commutes = name == "add" || name == "multiply";
        const Expr &a = call.args[0], &b = call.args[1];
        auto is_unit = [&](const Expr& c) {
            auto v = uniform_value(c);
            return v && *v == unit;
        };
        if (is_unit(b) && keeps_type(a, e)) return a;
        if (commutes && is_unit(a) && keeps_type(b, e)) return b;
        return e;
    }

    static DataType dtype_of(const Expr& e) { return e->type.as<TensorType>()->dtype; }

    // The range of integer type t (bool and others: none).
    static std::optional<std::pair<double, double>> integer_range(DataType t) {
        if (!t.is_int() && !t.is_uint()) return std::nullopt;
        const int b = t.bits();
        if (t.is_uint()) return std::pair{0.0, std::ldexp(1.0, b) - 1};
        return std::pair{-std::ldexp(1.0, b - 1), std::ldexp(1.0, b - 1) - 1};
    }

    // v as a value of float type f (float32 or float64; others: nullopt), as clip rounds its
    // bounds to its operand's type.
    static std::optional<double> in_float(DataType f, double v) {
        if (f == DataType::float32()) return double(float(v));
        if (f == DataType::float64()) return v;
        return std::nullopt;
    }

    // Whether the clip bounds [lo, hi] of a float `f` value are whole numbers that f holds
    // exactly and integer type t holds: such a clip then commutes with the truncating cast to t,
    // and the cast cannot wrap.
    static bool exact_whole_range(DataType t, DataType f, double lo, double hi) {
        auto range = integer_range(t);
        auto flo = in_float(f, lo), fhi = in_float(f, hi);
        return range && flo && fhi && *flo == lo && *fhi == hi && lo == std::floor(lo) &&
               hi == std::floor(hi) && range->first <= lo && hi <= range->second;
    }

    Expr simplify_cast(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        if (keeps_type(x, e)) return x;
        // cast<int2>(cast<int>(clip(y, c, d))), int2 no wider than int: the whole numbers of
        // [c, d] cast alike. (Not a widening cast: that reads a narrow value, which other users
        // of it read too, and it would make them read the float instead.)
        const Call* inner = as_op_call(x, "cast");
        if (dtype_of(e).bits() > dtype_of(x).bits()) return e;
        const Call* range = inner ? as_op_call(inner->args[0], "clip") : nullptr;
        if (!range) return e;
        const auto& c = attrs_of<ops::ClipAttrs>(*range);
        const DataType f = dtype_of(range->args[0]);
        if (!exact_whole_range(dtype_of(x), f, c.a_min, c.a_max) ||
            !exact_whole_range(dtype_of(e), f, c.a_min, c.a_max)) {
            return e;
        }
        Expr direct = make_call(call.op, {inner->args[0]}, call.attrs, call.loc);
        return keeps_type(direct, e) ? direct : e;
    }

    Expr simplify_clip(const Expr& e, const Call& call) {
        const auto& outer = attrs_of<ops::ClipAttrs>(call);
        const Expr& x = call.args[0];
        if (const Call* inner = as_op_call(x, "clip")) {
            const auto& a = attrs_of<ops::ClipAttrs>(*inner);
            double lo = std::max(a.a_min, outer.a_min), hi = std::min(a.a_max, outer.a_max);
            if (!(lo <= hi)) return e;
            Expr merged = make_clip(inner->args[0], lo, hi, call.loc);
            return keeps_type(merged, e) ? merged : e;
        }
        // clip(cast<int>(clip(y, a, b)), c, d) of a float y, [c, d] inside [a, b] as y's type
        // rounds them and the cast's values inside int (nothing wraps): cast<int>(clip(y, c, d)).
        const Call* cast = as_op_call(x, "cast");
        const Call* first = cast ? as_op_call(cast->args[0], "clip") : nullptr;
        if (!first) return e;
        const DataType f = dtype_of(first->args[0]);
        const auto& a = attrs_of<ops::ClipAttrs>(*first);
        auto lo = in_float(f, a.a_min), hi = in_float(f, a.a_max);
        auto range = integer_range(dtype_of(x));
        if (!lo || !hi || !range || *lo < range->first || *hi > range->second ||
            !exact_whole_range(dtype_of(x), f, outer.a_min, outer.a_max) || outer.a_min < *lo ||
            outer.a_max > *hi) {
            return e;
        }
        Expr moved =
            make_call(cast->op, {make_clip(first->args[0], outer.a_min, outer.a_max, call.loc)},
                      cast->attrs, call.loc);
        return keeps_type(moved, e) ? moved : e;
    }

    // (x - c1) + c2 -> x + (c2 - c1) for integer values and constants c1, c2; c2 of a bias_add
    // along axis 1 first expanded to [C, 1, ..., 1]. Undefined when it does not apply.
    Expr merge_constant_terms(const Expr& e, const Call& call) {
        const Call* difference = as_op_call(call.args[0], "subtract");
        Expr c2 = call.args[1];
        const DataType t = dtype_of(e);
        if (!difference || !(t.is_int() || t.is_uint()) || !c2.is<Constant>() ||
            !difference->args[1].is<Constant>()) {
            return {};
        }
        if (call.op->name == "nn.bias_add") {
            const int64_t rank = static_cast<int64_t>(e->type.as<TensorType>()->ndim());
            if (attrs_of<ops::BiasAddAttrs>(call).axis != 1 || rank < 3) return {};
            ops::ExpandDimsAttrs a;
            a.axis = 1;
            a.num_newaxis = rank - 2;
            c2 = make_call(*find_op("expand_dims"), {c2}, make_ref<ops::ExpandDimsAttrs>(a),
                           call.loc);
        }
        const Op* add = find_op("add");
        const Op* subtract = find_op("subtract");
        Expr terms = make_call(*subtract, {c2, difference->args[1]}, nullptr, call.loc);
        // Only where the merged constant is no larger than both were (a scalar, per channel):
        // c1 [1, 1, H, W] and c2 [1, C, 1, 1] would make one of [1, C, H, W].
        auto elements = [](const Expr& v) {
            auto* t = v->type.as<TensorType>();
            return t && t->is_static() ? t->num_elements() : -1;
        };
        const int64_t size = elements(terms);
        if (size < 0 || size > std::max(elements(c2), elements(difference->args[1]))) {
            return {};
        }
        Expr merged = make_call(*add, {difference->args[0], terms}, nullptr, call.loc);
        return keeps_type(merged, e) ? merged : Expr();
    }

    Expr simplify_power(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        auto exponent = uniform_value(call.args[1]);
        if (!exponent || !keeps_type(x, e)) return e;
        if (*exponent == 1.0) return x;
        const Op* multiply = find_op("multiply");
        if (*exponent == 2.0) {
            return make_call(*multiply, {x, x}, multiply->make_default_attrs(), call.loc);
        }
        return e;
    }

    Expr simplify_halving(const Expr& e, const Call& call) {
        const Expr& y = call.args[0];
        const std::string& rounding = attrs_of<ops::FixedPointMultiplyAttrs>(call).rounding;
        if (rounding != "UPWARD" && rounding != "TFLITE") return e;
        if (uniform_value(call.args[1]) != double(int64_t(1) << 30) ||
            uniform_value(call.args[2]) != 0.0 || !keeps_type(y, e)) {
            return e;
        }
        Expr one = make_constant_of({}, DataType::int32(), {1}, call.loc);
        auto binary = [&](const char* op, const Expr& a, const Expr& b) {
            const Op* o = find_op(op);
            return make_call(*o, {a, b}, o->make_default_attrs(), call.loc);
        };
        return binary("add", binary("right_shift", y, one), binary("bitwise_and", y, one));
    }

    const PassContext& ctx_;
};

}  // namespace

IRModule simplify_expr(const IRModule& m, const PassContext& ctx) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = ExprSimplifier(ctx).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
