// Import-time integer shape arithmetic; see shape_eval.h.
#include "frontend/onnx/shape_eval.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>

#include "ir/analyzer.h"
#include "ops/shape_tensor.h"

namespace anvil::frontend {

namespace {

// Shape arithmetic tensors are small; a bigger integer constant is data, not a shape.
constexpr int64_t kMaxElements = 1 << 20;

// An integer tensor whose elements are int64 expressions: constants, or symbolic dimensions and
// arithmetic on them (the Shape of a tensor with a symbolic batch).
struct IntTensor {
    std::vector<int64_t> shape;
    std::vector<PrimExpr> data;  // row-major
    DataType dtype;
};

PrimExpr I(int64_t v) {
    return make_int(DataType::int64(), v);
}

// The elements as integers; nullopt when one is symbolic.
std::optional<std::vector<int64_t>> ints(const IntTensor& t) {
    std::vector<int64_t> out;
    for (const auto& e : t.data) {
        const int64_t* v = as_const_int(e);
        if (!v) return std::nullopt;
        out.push_back(*v);
    }
    return out;
}

// The element count of a shape whose dimensions are non-negative and whose count fits (every
// shape of an IntTensor: they are checked where they are made, see checked_count).
int64_t count_of(const std::vector<int64_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// The element count of a shape the model gives (Expand's, ConstantOfShape's); UserError naming
// `what` when a dimension is negative or the count overflows.
int64_t checked_count(const ConvertContext& ctx, const std::vector<int64_t>& shape,
                      const std::string& what) {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) ctx.error() << what << " " << ints_str(shape) << " has a negative dimension";
        if (__builtin_mul_overflow(count, d, &count)) {
            ctx.error() << what << " " << ints_str(shape)
                        << " overflows 64 bits (its element count)";
        }
    }
    return count;
}

// ONNX integer arithmetic wraps around (as numpy's does); the C++ operators on int64_t would be
// undefined there, and INT64_MIN / -1 traps.
int64_t wrap(uint64_t v) {
    return static_cast<int64_t>(v);
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
    return s;
}

std::optional<IntTensor> int_tensor_of(const ConvertContext& ctx, const graph::Expr& e) {
    if (const auto* st = ops::shape_tensor_attrs(e)) {
        return IntTensor{st->shape, st->values, st->dtype};
    }
    runtime::NDArray data = constant_data(e);
    if (!data.defined() || data.num_elements() > kMaxElements) return std::nullopt;
    DataType dt = graph::dtype_of(data.dtype());
    if (!dt.is_integer() && !dt.is_bool()) return std::nullopt;
    IntTensor t{{data.shape().begin(), data.shape().end()}, {}, dt};
    for (int64_t v : ctx.const_ints(e, "input")) t.data.push_back(I(v));
    return t;
}

// A constant, or a shape_tensor when an element is symbolic (the VM computes it at run time).
graph::Expr expr_of(const ConvertContext& ctx, const IntTensor& t) {
    std::optional<std::vector<int64_t>> values = ints(t);
    if (!values) {
        if (t.dtype.is_bool() || t.shape.size() > 1) {
            ctx.error() << "symbolic shape arithmetic gives a " << t.shape.size() << "-D "
                        << t.dtype.str() << " tensor; only scalar and 1-D integer "
                        << "shape values can be symbolic";
        }
        // Computed after whatever the operands' values are computed after.
        std::vector<graph::Expr> after;
        for (const auto& in : ctx.inputs()) {
            if (!ops::shape_tensor_attrs(in)) continue;
            for (const auto& a : in.as<graph::Call>()->args) {
                bool seen = false;
                for (const auto& b : after) seen = seen || b.same_as(a);
                if (!seen) after.push_back(a);
            }
        }
        return ops::make_shape_tensor(t.data, t.shape, t.dtype, ctx.loc(), std::move(after));
    }
    runtime::NDArray a = runtime::NDArray::empty(t.shape, graph::dl_dtype_of(t.dtype));
    auto* p = static_cast<uint8_t*>(a.raw_data());
    for (size_t i = 0; i < values->size(); ++i) {
        int64_t v = (*values)[i];
        if (t.dtype.is_bool()) v = v != 0;
        // Little-endian: the low bytes of the int64 are the narrower integer.
        std::memcpy(p + i * t.dtype.bytes(), &v, t.dtype.bytes());
    }
    return ctx.constant(a);
}

// Element of `t` at output index `idx` of a broadcast result of rank `rank`.
PrimExpr broadcast_at(const IntTensor& t, const std::vector<int64_t>& idx) {
    size_t off = idx.size() - t.shape.size();
    int64_t flat = 0;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        flat = flat * t.shape[d] + (t.shape[d] == 1 ? 0 : idx[off + d]);
    }
    return t.data[flat];
}

std::vector<int64_t> broadcast_shapes(const ConvertContext& ctx,
                                      const std::vector<const IntTensor*>& ts) {
    size_t rank = 0;
    for (const auto* t : ts) rank = std::max(rank, t->shape.size());
    std::vector<int64_t> out(rank, 1);
    for (const auto* t : ts) {
        size_t off = rank - t->shape.size();
        for (size_t d = 0; d < t->shape.size(); ++d) {
            int64_t& o = out[off + d];
            if (t->shape[d] == o || t->shape[d] == 1) continue;
            if (o != 1) ctx.error() << "operand shapes do not broadcast";
            o = t->shape[d];
        }
    }
    return out;
}

// out[i] = f(operands at i) with numpy broadcasting.
// nullopt when f gives nullopt for an element (an operation on a symbolic value that only
// constants support).
std::optional<IntTensor> map_broadcast(
    const ConvertContext& ctx, const std::vector<const IntTensor*>& ts, DataType dtype,
    const std::function<std::optional<PrimExpr>(const std::vector<PrimExpr>&)>& f) {
    IntTensor out{broadcast_shapes(ctx, ts), {}, dtype};
    int64_t n = count_of(out.shape);
    if (n > kMaxElements) ctx.error() << "shape arithmetic result too large";
    std::vector<int64_t> idx(out.shape.size(), 0);
    std::vector<PrimExpr> args(ts.size());
    for (int64_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < ts.size(); ++k) args[k] = broadcast_at(*ts[k], idx);
        std::optional<PrimExpr> v = f(args);
        if (!v) return std::nullopt;
        out.data.push_back(*v);
        for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
            if (++idx[d] < out.shape[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

std::optional<int64_t> binary(const std::string& op, int64_t a, int64_t b,
                              const ConvertContext& ctx);

bool is_binary(const std::string& op, const ConvertContext& ctx) {
    return binary(op, 1, 1, ctx).has_value();
}

// `op` on expressions: evaluated when both are constants; on a symbolic operand only the
// arithmetic shapes use (dimensions are non-negative, so Div is floor division), else nullopt.
std::optional<PrimExpr> binary_expr(const std::string& op, const PrimExpr& a, const PrimExpr& b,
                                    const ConvertContext& ctx) {
    const int64_t *x = as_const_int(a), *y = as_const_int(b);
    if (x && y) {
        std::optional<int64_t> v = binary(op, *x, *y, ctx);
        if (!v) return std::nullopt;
        return I(*v);
    }
    if (op == "Add") return simplify(a + b);
    if (op == "Sub") return simplify(a - b);
    if (op == "Mul") return simplify(a * b);
    if (op == "Div") return simplify(floordiv(a, b));
    if (op == "Max") return simplify(max(a, b));
    if (op == "Min") return simplify(min(a, b));
    return std::nullopt;
}

std::optional<int64_t> binary(const std::string& op, int64_t a, int64_t b,
                              const ConvertContext& ctx) {
    auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    if (op == "Add") return wrap(ua + ub);
    if (op == "Sub") return wrap(ua - ub);
    if (op == "Mul") return wrap(ua * ub);
    if (op == "Div" || op == "Mod") {
        if (b == 0) ctx.error() << "integer division by zero in shape arithmetic";
        if (b == -1) return op == "Div" ? wrap(0 - ua) : 0;
        if (op == "Div") return a / b;
        // ONNX Mod with fmod=0 takes the sign of the divisor (Python's %).
        int64_t r = a % b;
        if (ctx.attr_int("fmod", 0) == 0 && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    if (op == "Max") return std::max(a, b);
    if (op == "Min") return std::min(a, b);
    if (op == "Equal") return a == b;
    if (op == "Less") return a < b;
    if (op == "Greater") return a > b;
    if (op == "LessOrEqual") return a <= b;
    if (op == "GreaterOrEqual") return a >= b;
    if (op == "And") return a && b;
    if (op == "Or") return a || b;
    return std::nullopt;
}

bool is_comparison(const std::string& op) {
    return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
           op == "GreaterOrEqual";
}

// Unsqueeze/Squeeze/Reduce axes: an attribute before opset 13, an input from 13 on.
std::vector<int64_t> axes_of(ConvertContext& ctx, const std::vector<std::optional<IntTensor>>& in,
                             int input_from_opset) {
    if (ctx.opset() < input_from_opset) return ctx.attr_ints("axes");
    if (in.size() > 1 && in[1]) {
        if (auto v = ints(*in[1])) return *v;
        ctx.error() << "the axes are not constants";
    }
    return {};
}

std::optional<IntTensor> gather(ConvertContext& ctx, const IntTensor& data, const IntTensor& t) {
    std::optional<std::vector<int64_t>> index_values = ints(t);
    if (!index_values) return std::nullopt;
    struct {
        const std::vector<int64_t>& shape;
        const std::vector<int64_t>& data;
    } indices{t.shape, *index_values};
    int64_t rank = static_cast<int64_t>(data.shape.size());
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis");
    IntTensor out{{}, {}, data.dtype};
    out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
    out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
    out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    int64_t outer = count_of({data.shape.begin(), data.shape.begin() + axis});
    int64_t inner = count_of({data.shape.begin() + axis + 1, data.shape.end()});
    int64_t dim = data.shape[axis];
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t idx : indices.data) {
            if (idx < -dim || idx >= dim) {
                ctx.error() << "index " << idx << " is out of range for a dimension of " << dim;
            }
            if (idx < 0) idx += dim;
            for (int64_t i = 0; i < inner; ++i) {
                out.data.push_back(data.data[(o * dim + idx) * inner + i]);
            }
        }
    }
    return out;
}

IntTensor concat(ConvertContext& ctx, const std::vector<std::optional<IntTensor>>& in) {
    int64_t rank = static_cast<int64_t>(in[0]->shape.size());
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis");
    IntTensor out{in[0]->shape, {}, in[0]->dtype};
    out.shape[axis] = 0;
    for (const auto& t : in) {
        if (static_cast<int64_t>(t->shape.size()) != rank) ctx.error() << "inputs differ in rank";
        out.shape[axis] += t->shape[axis];
    }
    int64_t outer = count_of({out.shape.begin(), out.shape.begin() + axis});
    for (int64_t o = 0; o < outer; ++o) {
        for (const auto& t : in) {
            int64_t chunk = count_of({t->shape.begin() + axis, t->shape.end()});
            out.data.insert(out.data.end(), t->data.begin() + o * chunk,
                            t->data.begin() + (o + 1) * chunk);
        }
    }
    return out;
}

IntTensor slice(ConvertContext& ctx, const std::vector<std::optional<IntTensor>>& in) {
    const IntTensor& x = *in[0];
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (ctx.opset() < 10) {
        starts = ctx.attr_ints("starts");
        ends = ctx.attr_ints("ends");
        axes = ctx.attr_ints("axes");
    } else {
        auto values = [&](size_t i, std::vector<int64_t>* out) {
            if (in.size() <= i || !in[i]) return;
            auto v = ints(*in[i]);
            if (!v) ctx.error() << "slice bounds on symbolic dimensions are not supported yet";
            *out = *v;
        };
        values(1, &starts);
        values(2, &ends);
        values(3, &axes);
        values(4, &steps);
    }
    if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (starts.size() != ends.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
        ctx.error() << "the starts, ends, axes and steps differ in length";
    }
    std::vector<int64_t> begin(rank, 0), step(rank, 1), len = x.shape;
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = ctx.normalize_axis(axes[i], rank, "axis");
        int64_t dim = x.shape[a], s = steps[i];
        if (s == 0) ctx.error() << "slice step 0";
        // ONNX's clamping: [0, dim] for a positive step; [0, dim - 1] for the start and
        // [-1, dim - 1] for the end with a negative step.
        auto clamp = [&](int64_t v, bool is_end) {
            if (v < 0) v += dim;
            if (s > 0) return std::clamp<int64_t>(v, 0, dim);
            return std::clamp<int64_t>(v, is_end ? -1 : 0, dim - 1);
        };
        int64_t b = clamp(starts[i], false), e = clamp(ends[i], true);
        begin[a] = b;
        step[a] = s;
        // In 128 bits: a step near INT64_MAX (or INT64_MIN) must not overflow the rounding.
        __int128 distance = s > 0 ? __int128{e} - b : __int128{b} - e;
        __int128 stride = s > 0 ? __int128{s} : -__int128{s};
        len[a] = static_cast<int64_t>(std::max<__int128>(0, (distance + stride - 1) / stride));
    }
    IntTensor out{len, {}, x.dtype};
    std::vector<int64_t> xs = strides_of(x.shape), idx(rank, 0);
    for (int64_t n = count_of(len), i = 0; i < n; ++i) {
        int64_t flat = 0;
        for (int64_t d = 0; d < rank; ++d) flat += (begin[d] + idx[d] * step[d]) * xs[d];
        out.data.push_back(x.data[flat]);
        for (int64_t d = rank - 1; d >= 0; --d) {
            if (++idx[d] < len[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

// Transpose of an integer tensor; perm defaults to the axes reversed.
IntTensor transpose(ConvertContext& ctx, const IntTensor& x) {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> perm = ctx.attr_ints("perm");
    if (perm.empty()) {
        for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    if (static_cast<int64_t>(perm.size()) != rank) {
        ctx.error() << "perm " << ints_str(perm) << " has " << perm.size() << " axes for a rank-"
                    << rank << " input";
    }
    std::vector<bool> used(rank, false);
    for (int64_t p : perm) {
        if (p < 0 || p >= rank || used[p]) {
            ctx.error() << "perm " << ints_str(perm) << " is not a permutation of the " << rank
                        << " axes";
        }
        used[p] = true;
    }
    IntTensor out{{}, {}, x.dtype};
    for (int64_t p : perm) out.shape.push_back(x.shape[p]);
    std::vector<int64_t> xs = strides_of(x.shape), idx(rank, 0);
    for (int64_t n = count_of(out.shape), i = 0; i < n; ++i) {
        int64_t flat = 0;
        for (int64_t d = 0; d < rank; ++d) flat += idx[d] * xs[perm[d]];
        out.data.push_back(x.data[flat]);
        for (int64_t d = rank - 1; d >= 0; --d) {
            if (++idx[d] < out.shape[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

std::vector<int64_t> reshape_target(ConvertContext& ctx, const std::vector<int64_t>& in_shape,
                                    std::vector<int64_t> shape, bool allowzero) {
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && !allowzero) {
            if (i >= in_shape.size()) ctx.error() << "shape entry 0 copies a missing dimension";
            shape[i] = in_shape[i];
        }
        if (shape[i] < -1) {
            ctx.error() << "shape entry " << shape[i] << " is not a size (nor -1 or 0)";
        }
        if (shape[i] == -1) {
            if (infer >= 0) ctx.error() << "the target shape has more than one -1";
            infer = static_cast<int64_t>(i);
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            ctx.error() << "the target shape " << ints_str(shape) << " overflows 64 bits";
        }
    }
    int64_t total = count_of(in_shape);
    if (infer >= 0) {
        if (known == 0 || total % known) ctx.error() << "cannot infer the -1 of the target shape";
        shape[infer] = total / known;
    } else if (known != total) {
        ctx.error() << "cannot reshape " << total << " elements into " << known;
    }
    return shape;
}

}  // namespace

std::optional<std::vector<graph::Expr>> fold_shape_node(ConvertContext& ctx) {
    const std::string& op = ctx.node().op_type();
    if (ctx.num_inputs() == 0 && op != "Range") return std::nullopt;
    std::vector<std::optional<IntTensor>> in;
    for (const auto& e : ctx.inputs()) {
        if (!e.defined()) {
            in.emplace_back();
            continue;
        }
        auto t = int_tensor_of(ctx, e);
        if (!t) return std::nullopt;
        in.push_back(std::move(t));
    }
    if (!in[0]) return std::nullopt;
    const IntTensor& x = *in[0];
    auto one = [&](const IntTensor& t) { return std::vector<graph::Expr>{expr_of(ctx, t)}; };

    if (op == "Identity") return one(x);
    if (op == "Neg" || op == "Abs" || op == "Not") {
        IntTensor out = x;
        for (auto& e : out.data) {
            const int64_t* v = as_const_int(e);
            if (!v && op != "Neg") return std::nullopt;
            auto u = v ? static_cast<uint64_t>(*v) : 0;
            int64_t r = op == "Neg" ? wrap(0 - u) : op == "Abs" ? (*v < 0 ? wrap(0 - u) : *v) : !*v;
            e = v ? I(r) : simplify(0 - e);
        }
        return one(out);
    }
    if (is_binary(op, ctx)) {
        std::vector<const IntTensor*> ts;
        for (const auto& t : in) {
            if (!t) return std::nullopt;
            ts.push_back(&*t);
        }
        if (ts.size() != 2 && op != "Max" && op != "Min") return std::nullopt;
        DataType dt = is_comparison(op) ? DataType::bool_() : x.dtype;
        auto out = map_broadcast(ctx, ts, dt, [&](const std::vector<PrimExpr>& a) {
            std::optional<PrimExpr> acc = a[0];
            for (size_t k = 1; k < a.size() && acc; ++k) acc = binary_expr(op, *acc, a[k], ctx);
            return acc;
        });
        if (!out) return std::nullopt;
        return one(*out);
    }
    if (op == "Where" && in.size() == 3 && in[1] && in[2]) {
        auto out = map_broadcast(ctx, {&x, &*in[1], &*in[2]}, in[1]->dtype,
                                 [](const std::vector<PrimExpr>& a) -> std::optional<PrimExpr> {
                                     const int64_t* c = as_const_int(a[0]);
                                     if (!c) return std::nullopt;
                                     return *c ? a[1] : a[2];
                                 });
        if (!out) return std::nullopt;
        return one(*out);
    }
    if (op == "Gather" && in.size() == 2 && in[1]) {
        auto out = gather(ctx, x, *in[1]);
        if (!out) return std::nullopt;
        return one(*out);
    }
    if (op == "Concat") {
        for (const auto& t : in) {
            if (!t) return std::nullopt;
        }
        return one(concat(ctx, in));
    }
    if (op == "Slice" && (ctx.opset() < 10 || (in.size() >= 3 && in[1] && in[2]))) {
        return one(slice(ctx, in));
    }
    if (op == "Transpose") return one(transpose(ctx, x));
    if (op == "Unsqueeze" || op == "Squeeze") {
        IntTensor out = x;
        std::vector<int64_t> axes = axes_of(ctx, in, 13);
        if (op == "Unsqueeze") {
            int64_t rank = static_cast<int64_t>(x.shape.size() + axes.size());
            std::vector<bool> inserted(rank, false);
            for (int64_t a : axes) {
                int64_t axis = ctx.normalize_axis(a, rank, "axis");
                if (inserted[axis]) ctx.error() << "axis " << axis << " is given twice";
                inserted[axis] = true;
            }
            out.shape.clear();
            for (int64_t d = 0, k = 0; d < rank; ++d) {
                out.shape.push_back(inserted[d] ? 1 : x.shape[k++]);
            }
        } else {
            int64_t rank = static_cast<int64_t>(x.shape.size());
            std::vector<bool> removed(rank, axes.empty());
            for (int64_t a : axes) removed[ctx.normalize_axis(a, rank, "axis")] = true;
            out.shape.clear();
            for (int64_t d = 0; d < rank; ++d) {
                if (removed[d] && x.shape[d] != 1 && !axes.empty()) {
                    ctx.error() << "cannot squeeze dimension " << d << " of size " << x.shape[d];
                }
                if (!(removed[d] && x.shape[d] == 1)) out.shape.push_back(x.shape[d]);
            }
        }
        return one(out);
    }
    if (op == "Reshape" && in.size() == 2 && in[1] && ints(*in[1])) {
        IntTensor out = x;
        out.shape = reshape_target(ctx, x.shape, *ints(*in[1]), ctx.attr_int("allowzero", 0) != 0);
        return one(out);
    }
    if (op == "Cast") {
        auto to = dtype_from_onnx(static_cast<int>(ctx.attr_int("to", 0)));
        if (!to || !(to->is_integer() || to->is_bool())) return std::nullopt;
        IntTensor out = x;
        out.dtype = *to;
        return one(out);
    }
    if (op == "Expand" && in.size() == 2 && in[1] && ints(*in[1])) {
        std::vector<int64_t> shape = *ints(*in[1]);
        // Too big for shape arithmetic: the converter broadcasts (and checks the result's size).
        if (checked_count(ctx, shape, "the shape") > kMaxElements) return std::nullopt;
        IntTensor target{shape, std::vector<PrimExpr>(count_of(shape), I(0)), x.dtype};
        auto out = map_broadcast(ctx, {&x, &target}, x.dtype,
                                 [](const std::vector<PrimExpr>& a) { return a[0]; });
        return one(*out);
    }
    if (op == "Range" && in.size() == 3 && in[1] && in[2] && ints(x) && ints(*in[1]) &&
        ints(*in[2])) {
        int64_t start = ints(x)->at(0), limit = ints(*in[1])->at(0), delta = ints(*in[2])->at(0);
        if (delta == 0) ctx.error() << "Range with delta 0";
        IntTensor out{{0}, {}, x.dtype};
        for (int64_t v = start; delta > 0 ? v < limit : v > limit;) {
            out.data.push_back(I(v));
            if (static_cast<int64_t>(out.data.size()) > kMaxElements) return std::nullopt;
            if (__builtin_add_overflow(v, delta, &v)) break;  // past the limit of int64 values
        }
        out.shape[0] = static_cast<int64_t>(out.data.size());
        return one(out);
    }
    if (op == "ConstantOfShape" && ints(x)) {
        // The value's element type decides the result's; only integer fills are shape math.
        IntTensor out{*ints(x), {}, DataType::float32()};
        checked_count(ctx, out.shape, "the shape");
        int64_t fill = 0;
        if (ctx.has_attr("value")) {
            graph::Expr v = ctx.constant(ctx.attr_tensor("value"));
            auto vt = int_tensor_of(ctx, v);
            if (!vt) return std::nullopt;
            out.dtype = vt->dtype;
            auto fill_value = ints(*vt);
            if (!fill_value) return std::nullopt;
            fill = fill_value->at(0);
        } else {
            return std::nullopt;  // float32 zeros: the converter makes them
        }
        if (count_of(out.shape) > kMaxElements) return std::nullopt;
        out.data.assign(count_of(out.shape), I(fill));
        return one(out);
    }
    return std::nullopt;
}

}  // namespace anvil::frontend
