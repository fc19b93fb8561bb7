// fake_quantization_to_integer (TVM's FakeQuantizationToInteger): the QDQ form of quantized
// models (ONNX's QuantizeLinear / DequantizeLinear around float ops, imported as qnn.quantize /
// qnn.dequantize) computed in integers. Each qnn.quantize whose operand is a float op reading
// dequantized values becomes the QNN op on the integers:
//   Q(conv2d(DQ(x), DQ(w)) [+ DQ(b)] [relu | clip])  ->  cast(clip(requantize(
//       qnn.conv2d(x, w) [+ b], sx * sw -> so)))          (nn.dense likewise)
//   Q(concatenate((DQ(a), DQ(b), ...)))               ->  qnn.concatenate
//   Q(avg_pool2d(DQ(x))), Q(global_avg_pool2d(DQ(x))) ->  qnn.avg_pool2d
//   Q(max_pool2d | reshape | flatten | transpose | squeeze | expand_dims | strided_slice
//     | constant nn.pad (DQ(x)))                      ->  the op on the integers [requantize]
//   Q(DQ(x))                                          ->  x, or requantize(x)
// A relu or clip before the quantize becomes the clamp of the integer result. Activations must
// be quantized per tensor and every scale and zero point be a constant; a weight may be quantized
// per output channel. What does not match stays in floats, which is exact; the integer forms
// requantize in float32 (compute_dtype), as ONNX Runtime's integer kernels do, within one
// quantization step of the float form.
// An add of two dequantized tensors stays in floats too: dequantize, add and quantize fuse into
// one elementwise kernel that is ONNX's definition itself (ONNX Runtime's QLinearAdd computes in
// floats as well), at a third of the cost of qnn.add's integer form, whose two fixed-point
// multiplies per element dominated the int8 ResNet-18's residual layers.
#include <algorithm>
#include <cmath>

#include "graph/passes/graph_rewrite.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/elementwise.h"
#include "ops/pool.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

// A qnn.dequantize with constant scales and zero points.
struct Dequantized {
    Expr data;
    std::vector<double> scales, zero_points;
    int64_t axis = -1;
    bool per_tensor() const { return scales.size() == 1; }
};

std::optional<Dequantized> as_dequantized(const Expr& e) {
    const Call* dq = as_op_call(e, "qnn.dequantize");
    if (!dq) return std::nullopt;
    auto s = constant_values(dq->args[1]), z = constant_values(dq->args[2]);
    if (!s || !z || s->empty() || z->empty()) return std::nullopt;
    // One of them may be one value for every index along the axis.
    if (s->size() == 1) s->resize(z->size(), (*s)[0]);
    if (z->size() == 1) z->resize(s->size(), (*z)[0]);
    if (s->size() != z->size()) return std::nullopt;
    return Dequantized{dq->args[0], *s, *z, attrs_of<ops::DequantizeAttrs>(*dq).axis};
}

class FakeQuantizationToInteger : public CallRewriter {
public:
    using CallRewriter::CallRewriter;

protected:
    Expr rewrite(const Expr& self) override {
        const Call* q = as_op_call(self, "qnn.quantize");
        if (!q) return {};
        auto so = constant_values(q->args[1]), zo = constant_values(q->args[2]);
        if (!so || !zo || so->size() != 1 || zo->size() != 1) return {};
        out_ = Out{(*so)[0], (*zo)[0], attrs_of<ops::QuantizeAttrs>(*q).out_dtype, {}, {}};
        std::tie(out_.lo, out_.hi) = ops::quantized_range(out_.dtype);
        loc_ = self->loc;
        Expr body = clamp_of(q->args[0]);
        if (auto dq = as_dequantized(body)) return requantized(*dq, mutate(dq->data));
        if (as_op_call(body, "nn.conv2d") || as_op_call(body, "nn.dense") ||
            as_op_call(body, "nn.bias_add")) {
            return product(body);
        }
        if (as_op_call(body, "add")) return product(body);
        if (as_op_call(body, "concatenate")) return concatenate(*as_op_call(body, "concatenate"));
        if (as_op_call(body, "nn.avg_pool2d") || as_op_call(body, "nn.global_avg_pool2d")) {
            return avg_pool(*static_cast<const Call*>(body.get()));
        }
        if (as_op_call(body, "nn.pad")) return pad(*as_op_call(body, "nn.pad"));
        static const char* kMovers[] = {"nn.max_pool2d", "reshape",     "flatten",      "transpose",
                                        "squeeze",       "expand_dims", "strided_slice"};
        for (const char* op : kMovers) {
            if (const Call* c = as_op_call(body, op)) return mover(*c);
        }
        return {};
    }

private:
    // The quantize's output and the clamp a relu or clip before it makes.
    struct Out {
        double scale, zero_point;
        DataType dtype;
        double lo, hi;
    };

    // `e` less a relu or clip, whose bounds narrow out_'s range (in output integers).
    Expr clamp_of(const Expr& e) {
        if (const Call* r = as_op_call(e, "nn.relu")) {
            out_.lo = std::max(out_.lo, out_.zero_point);
            return r->args[0];
        }
        if (const auto* c = call_attrs_of<ops::ClipAttrs>(e, "clip")) {
            if (std::isfinite(c->a_min)) {
                out_.lo =
                    std::max(out_.lo, std::nearbyint(c->a_min / out_.scale) + out_.zero_point);
            }
            if (std::isfinite(c->a_max)) {
                out_.hi =
                    std::min(out_.hi, std::nearbyint(c->a_max / out_.scale) + out_.zero_point);
            }
            return static_cast<const Call*>(e.get())->args[0];
        }
        return e;
    }

    Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr) const {
        const Op* o = find_op(op);
        return make_call(*o, std::move(args), attrs.defined() ? attrs : o->make_default_attrs(),
                         loc_);
    }
    Expr scalar(DataType t, double v) const { return make_constant_of({}, t, {v}, loc_); }
    Expr vector(DataType t, const std::vector<double>& v) const {
        if (v.size() == 1) return scalar(t, v[0]);
        return make_constant_of({int64_t(v.size())}, t, v, loc_);
    }
    Expr out_scale() const { return scalar(DataType::float32(), out_.scale); }
    Expr out_zero_point() const { return scalar(DataType::int32(), out_.zero_point); }

    // `x` (integers of `scales` / `zero_points`, per tensor or along `axis`) requantized to the
    // output's integers, clamped.
    Expr finish(const Expr& x, const std::vector<double>& scales,
                const std::vector<double>& zero_points, int64_t axis) const {
        auto [attrs, a] = ops_attrs<ops::RequantizeAttrs>();
        a->axis = axis;
        a->compute_dtype = "float32";  // as ONNX Runtime's integer kernels requantize
        a->out_dtype = DataType::int32();
        Expr r = call("qnn.requantize",
                      {x, vector(DataType::float32(), scales),
                       vector(DataType::int32(), zero_points), out_scale(), out_zero_point()},
                      attrs);
        return clamp_cast(r);
    }
    // `x` clamped to the output's range (narrowed by a relu or clip) and cast to its type.
    Expr clamp_cast(const Expr& x) const {
        auto [lo, hi] = ops::quantized_range(out_.dtype);
        Expr y = x;
        if (out_.lo > lo || out_.hi < hi || tensor_of(x).dtype != out_.dtype) {
            auto [attrs, c] = ops_attrs<ops::ClipAttrs>();
            c->a_min = out_.lo;
            c->a_max = out_.hi;
            y = call("clip", {y}, attrs);
        }
        if (tensor_of(y).dtype == out_.dtype) return y;
        auto [attrs, c] = ops_attrs<ops::CastAttrs>();
        c->dtype = out_.dtype;
        return call("cast", {y}, attrs);
    }
    template <typename A>
    static std::pair<Ref<Attrs>, A*> ops_attrs() {
        auto r = make_ref<A>();
        return {r, const_cast<A*>(r.get())};
    }
    static const TensorType& tensor_of(const Expr& e) { return *e->type.as<TensorType>(); }
    bool same_as_out(const Dequantized& d, DataType t) const {
        return d.per_tensor() && d.scales[0] == out_.scale && d.zero_points[0] == out_.zero_point &&
               t == out_.dtype;
    }

    // Q(DQ(x)): x, or x requantized.
    Expr requantized(const Dequantized& d, const Expr& x) const {
        if (same_as_out(d, tensor_of(x).dtype)) return clamp_cast(x);
        if (!d.per_tensor() && d.axis < 0) return {};
        return finish(x, d.scales, d.zero_points, d.axis);
    }

    // conv2d / dense of dequantized operands, maybe plus a bias.
    Expr product(const Expr& body) {
        Expr prod = body;
        Expr bias;
        int64_t bias_axis = 1;
        if (const Call* b = as_op_call(body, "nn.bias_add")) {
            prod = b->args[0];
            bias = b->args[1];
            bias_axis = attrs_of<ops::BiasAddAttrs>(*b).axis;
        } else if (const Call* a = as_op_call(body, "add")) {
            prod = a->args[0];
            bias = a->args[1];
            bias_axis = -1;  // a dense's bias broadcasts along the last axis
        }
        const Call* p = as_op_call(prod, "nn.conv2d");
        bool dense = false;
        if (!p && (p = as_op_call(prod, "nn.dense"))) dense = true;
        if (!p) return {};
        auto x = as_dequantized(p->args[0]), w = as_dequantized(p->args[1]);
        if (!x || !w || !x->per_tensor()) return {};
        if (!w->per_tensor() && w->axis != 0) return {};
        const auto& wt = tensor_of(w->data);
        if (wt.ndim() == 0 || !as_const_int(wt.shape[0])) return {};
        int64_t channels = *as_const_int(wt.shape[0]);
        int64_t rank = int64_t(tensor_of(prod).ndim());
        int64_t channel_axis = dense ? rank - 1 : 1;
        if (bias.defined() && (bias_axis + (bias_axis < 0 ? rank : 0)) != channel_axis) return {};
        // The accumulator's scale, per output channel when the weight's is.
        std::vector<double> acc_scale;
        for (double s : w->scales) acc_scale.push_back(double(float(x->scales[0]) * float(s)));
        Expr xi = mutate(x->data), wi = mutate(w->data);
        Expr acc;
        if (dense) {
            auto [attrs, a] = ops_attrs<ops::QnnDenseAttrs>();
            a->units = channels;
            acc = call(
                "qnn.dense",
                {xi, wi, vector(DataType::int32(), x->zero_points),
                 vector(DataType::int32(), w->zero_points), vector(DataType::float32(), x->scales),
                 vector(DataType::float32(), w->scales)},
                attrs);
        } else {
            const auto& c = attrs_of<ops::Conv2DAttrs>(*p);
            auto [attrs, a] = ops_attrs<ops::QnnConv2DAttrs>();
            a->strides = c.strides;
            a->padding = c.padding;
            a->dilation = c.dilation;
            a->groups = c.groups;
            acc = call(
                "qnn.conv2d",
                {xi, wi, vector(DataType::int32(), x->zero_points),
                 vector(DataType::int32(), w->zero_points), vector(DataType::float32(), x->scales),
                 vector(DataType::float32(), w->scales)},
                attrs);
        }
        if (bias.defined()) {
            Expr b = integer_bias(bias, acc_scale, channels);
            if (!b.defined()) return {};
            auto [attrs, a] = ops_attrs<ops::BiasAddAttrs>();
            a->axis = channel_axis;
            acc = call("nn.bias_add", {acc, b}, attrs);
        }
        std::vector<double> zeros(acc_scale.size(), 0.0);
        return finish(acc, acc_scale, zeros, acc_scale.size() == 1 ? -1 : channel_axis);
    }

    // The bias in the accumulator's integers: DQ(b) of int32 b at the accumulator's scale (as
    // ONNX's QDQ models have it), or a float constant quantized to it.
    Expr integer_bias(const Expr& bias, const std::vector<double>& acc_scale, int64_t channels) {
        const auto& bt = tensor_of(bias);
        if (bt.ndim() != 1 || !as_const_int(bt.shape[0]) ||
            *as_const_int(bt.shape[0]) != channels) {
            return {};
        }
        if (auto d = as_dequantized(bias)) {
            if (tensor_of(d->data).dtype != DataType::int32()) return {};
            for (size_t c = 0; c < size_t(channels); ++c) {
                double want = acc_scale[acc_scale.size() == 1 ? 0 : c];
                double got = d->scales[d->per_tensor() ? 0 : c];
                double zp = d->zero_points[d->per_tensor() ? 0 : c];
                if (zp != 0 || std::abs(got - want) > 1e-6 * want) return {};
            }
            return mutate(d->data);
        }
        if (!is_static_float_constant(bias)) return {};
        auto [attrs, a] = ops_attrs<ops::QuantizeAttrs>();
        a->axis = 0;
        a->out_dtype = DataType::int32();
        Expr f = bias;
        if (bt.dtype != DataType::float32()) {
            auto [ca, c] = ops_attrs<ops::CastAttrs>();
            c->dtype = DataType::float32();
            f = call("cast", {bias}, ca);
        }
        return call("qnn.quantize",
                    {f, vector(DataType::float32(), acc_scale), scalar(DataType::int32(), 0)},
                    attrs);
    }

    Expr concatenate(const Call& cat) {
        // concatenate's operands are the tensors joined (qnn.concatenate's are tuples).
        std::vector<Expr> data, scales, zero_points;
        for (const Expr& f : cat.args) {
            auto d = as_dequantized(f);
            if (!d || !d->per_tensor()) return {};
            data.push_back(mutate(d->data));
            if (tensor_of(data.back()).dtype != out_.dtype) return {};
            scales.push_back(vector(DataType::float32(), d->scales));
            zero_points.push_back(vector(DataType::int32(), d->zero_points));
        }
        Expr r = call("qnn.concatenate",
                      {make_tuple(data), make_tuple(scales), make_tuple(zero_points), out_scale(),
                       out_zero_point()},
                      cat.attrs);
        return clamp_cast(r);
    }

    Expr avg_pool(const Call& pool) {
        auto x = as_dequantized(pool.args[0]);
        if (!x || !x->per_tensor()) return {};
        Expr xi = mutate(x->data);
        if (tensor_of(xi).dtype != out_.dtype) return {};
        Ref<Attrs> attrs = pool.attrs;
        if (pool.op->name == "nn.global_avg_pool2d") {
            const auto& t = tensor_of(xi);
            const auto& g = attrs_of<ops::GlobalPool2DAttrs>(pool);
            const int64_t* h = t.ndim() == 4 ? as_const_int(t.shape[2]) : nullptr;
            const int64_t* w = t.ndim() == 4 ? as_const_int(t.shape[3]) : nullptr;
            if (!h || !w || g.layout != "NCHW") return {};
            auto [pa, p] = ops_attrs<ops::Pool2DAttrs>();
            p->pool_size = {*h, *w};
            attrs = pa;
        }
        Expr r = call("qnn.avg_pool2d",
                      {xi, vector(DataType::float32(), x->scales),
                       vector(DataType::int32(), x->zero_points), out_scale(), out_zero_point()},
                      attrs);
        return clamp_cast(r);
    }

    // An op that only moves or selects elements, on the integers.
    Expr mover(const Call& op) {
        auto x = as_dequantized(op.args[0]);
        if (!x || !x->per_tensor()) return {};
        std::vector<Expr> args{mutate(x->data)};
        for (size_t i = 1; i < op.args.size(); ++i) args.push_back(mutate(op.args[i]));
        Expr moved = call(op.op->name, args, op.attrs);
        Dequantized d = *x;
        d.data = moved;
        return requantized(d, moved);
    }

    // A constant pad: its value in the integers (the zero point for 0).
    Expr pad(const Call& op) {
        auto x = as_dequantized(op.args[0]);
        const auto& a = attrs_of<ops::PadAttrs>(op);
        if (!x || !x->per_tensor() || a.pad_mode != "constant" || !a.dynamic_pad_width.empty()) {
            return {};
        }
        double value = a.pad_value;
        if (op.args.size() == 2) {
            auto v = constant_values(op.args[1]);
            if (!v || v->size() != 1) return {};
            value = (*v)[0];
        }
        Expr xi = mutate(x->data);
        auto [lo, hi] = ops::quantized_range(tensor_of(xi).dtype);
        auto [attrs, p] = ops_attrs<ops::PadAttrs>();
        p->pad_width = a.pad_width;
        p->pad_value = std::clamp(std::nearbyint(value / x->scales[0]) + x->zero_points[0], lo, hi);
        Expr padded = call("nn.pad", {xi}, attrs);
        return requantized(*x, padded);
    }

    Out out_{};
    SourceLoc loc_;
};

}  // namespace

IRModule fake_quantization_to_integer(const IRModule& m, const PassContext& ctx) {
    return rewrite_calls<FakeQuantizationToInteger>(m, ctx);
}

}  // namespace anvil::graph
