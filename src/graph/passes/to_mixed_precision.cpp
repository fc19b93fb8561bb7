// to_mixed_precision (TVM's ToMixedPrecision): float32 models computed in bfloat16 (or float16)
// where that is safe, float32 where it is not. Every op has one of three kinds, from the table
// below (the one place that says which ops must stay float32):
//   always  the products (conv2d, conv2d_transpose, dense, matmul, batch_matmul): float32
//           operands become the half type (constant weights converted at compile time), the sums
//           stay float32 (out_dtype="float32": vdpbf16ps accumulates in float32), and the result
//           is rounded to the half type for the ops that follow (those that need float32 read
//           the unrounded sum);
//   follow  ops whose result is as exact in the half type as their operands (relu, add, pooling
//           by max, element movers, ...): in the half type when every float32 operand already is
//           one or is a constant, else in float32;
//   never   everything else (softmax, exp, sums and means, norms, average pooling, ...): float32
//           operands, values in the half type converted back.
// Ops the table does not list are `never` and are reported as missing (missing_ops), as TVM's
// missing_op_mode does. A function returns what it returned before (float32 results converted
// back), so the model's signature does not change, and so does every let binding's value (its
// variable keeps its type): values bound by lets cross them in float32. Functions with a Compiler
// or Composite attribute and primitive ones are left as they are.
#include <map>
#include <set>

#include "graph/passes/graph_rewrite.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/elementwise.h"

namespace anvil::graph {

namespace {

enum class Kind { Always, Follow, Never };

// THE table. Ops missing from it stay float32 (and are reported).
const std::map<std::string, Kind>& op_kinds() {
    static const std::map<std::string, Kind> table = [] {
        std::map<std::string, Kind> t;
        for (const char* op :
             {"nn.conv2d", "nn.conv2d_transpose", "nn.dense", "nn.matmul", "nn.batch_matmul"}) {
            t[op] = Kind::Always;
        }
        // Exact in the half type given half-type operands: selections, element movers, and
        // elementwise functions whose result is rounded once (the code generator computes
        // half-type arithmetic in float32).
        for (const char* op : {"nn.relu",
                               "nn.leaky_relu",
                               "nn.prelu",
                               "clip",
                               "add",
                               "subtract",
                               "multiply",
                               "maximum",
                               "minimum",
                               "negative",
                               "abs",
                               "nn.bias_add",
                               "nn.max_pool2d",
                               "nn.max_pool3d",
                               "nn.global_max_pool2d",
                               "max",
                               "min",
                               "nn.hardswish",
                               "nn.hardsigmoid",
                               "sigmoid",
                               "tanh",
                               "nn.gelu",
                               "where",
                               "reshape",
                               "flatten",
                               "transpose",
                               "squeeze",
                               "expand_dims",
                               "concatenate",
                               "split",
                               "broadcast_to",
                               "tile",
                               "depth_to_space",
                               "space_to_depth",
                               "layout_transform",
                               "strided_slice",
                               "nn.pad",
                               "take",
                               "gather_elements",
                               "gather_nd",
                               "dynamic_reshape"}) {
            t[op] = Kind::Follow;
        }
        // Need float32's precision or range: long sums, exponentials, divisions, norms.
        for (const char* op :
             {"nn.softmax", "nn.log_softmax", "exp", "log", "sqrt", "rsqrt", "erf", "power",
              "divide", "sum", "mean", "prod", "cumsum", "einsum", "nn.avg_pool2d", "nn.avg_pool3d",
              "nn.global_avg_pool2d", "nn.batch_norm", "nn.layer_norm", "nn.instance_norm",
              "nn.lrn", "nn.attention", "nn.softplus", "nn.elu", "nn.selu", "nn.mish", "resize2d",
              "grid_sample", "roi_align", "nn.conv3d", "nn.conv3d_transpose", "equal", "not_equal",
              "less", "less_equal", "greater", "greater_equal", "argmax", "argmin", "floor", "ceil",
              "round", "sign",
              // Their branches and bodies are functions of their own, converted as such.
              "control.if", "control.loop"}) {
            t[op] = Kind::Never;
        }
        return t;
    }();
    return table;
}

bool is_float32_tensor(const Type& t) {
    const auto* tt = t.as<TensorType>();
    return tt && tt->dtype == DataType::float32();
}

class MixedPrecision : public ExprMutator {
public:
    MixedPrecision(DataType half, const PassContext& ctx, std::set<std::string>* missing)
        : half_(half), ctx_(ctx), missing_(missing) {}

    // `e` (rewritten) with the type `want` it had before: half-type values converted back.
    Expr restore(const Expr& e, const Type& want) {
        if (type_equal(e->type, want)) return e;
        // A product's float32 sum rounded to the half type: the sum itself, unrounded.
        if (const Call* c = as_op_call(e, "cast"); c && type_equal(c->args[0]->type, want)) {
            return c->args[0];
        }
        if (is_float32_tensor(want)) return cast_to(e, DataType::float32());
        const auto* tuple = want.as<TupleType>();
        if (!tuple) return e;
        std::vector<Expr> fields;
        const auto* literal = e.as<Tuple>();
        for (size_t i = 0; i < tuple->fields.size(); ++i) {
            Expr f = literal ? literal->fields[i] : make_tuple_get_item(e, int(i), e->loc);
            fields.push_back(restore(f, tuple->fields[i]));
        }
        return make_tuple(std::move(fields), e->loc);
    }

protected:
    Expr mutate_(const Function* op, const Expr& self) override {
        if (op->primitive || op->attrs.count("Composite") || op->attrs.count("Compiler")) {
            return self;
        }
        Expr body = restore(mutate(op->body), op->body->type);
        if (body.same_as(op->body)) return self;
        return Expr(with_body(*op, body));
    }

    Expr mutate_(const Let* op, const Expr& self) override {
        // The variable keeps its type, so its value does.
        Expr value = restore(mutate(op->value), op->value->type);
        Expr body = mutate(op->body);
        if (value.same_as(op->value) && body.same_as(op->body)) return self;
        return make_let(op->var, value, body, op->loc);
    }

    Expr mutate_(const Call* op, const Expr& self) override {
        std::vector<Expr> args;
        for (const auto& a : op->args) args.push_back(mutate(a));
        if (!op->op.defined()) {
            // A function call: the function's parameters keep their types.
            return rebuild(*op, self, restored(*op, args), mutate(op->callee));
        }
        const std::string& name = op->op->name;
        // A cast's dtype says what it returns; calls without float32 values are as they were.
        if (name == "cast" || !touches_float32(*op)) return rebuild(*op, self, args);
        // QNN ops (partitioning sees them before canonicalize_qnn) keep their float32 scales,
        // quantize float32 values and dequantize to float32: never, and not missing.
        if (name.rfind("qnn.", 0) == 0) return rebuild(*op, self, restored(*op, args));
        auto kind = op_kinds().find(name);
        if (kind == op_kinds().end()) {
            missing_->insert(name);
            return rebuild(*op, self, restored(*op, args));
        }
        if (kind->second == Kind::Always) {
            if (Expr r = always(*op, args); r.defined()) return r;
        } else if (kind->second == Kind::Follow && follows(*op, args)) {
            try {
                return rebuild(*op, self, halved(*op, args));
            } catch (const UserError&) {
                // The op's type rule refuses the half type here: it stays float32.
            }
        }
        return rebuild(*op, self, restored(*op, args));
    }

private:
    // Whether a float32 tensor goes into or comes out of the call.
    static bool touches_float32(const Call& call) {
        auto any = [](const Type& t, auto& self) -> bool {
            if (is_float32_tensor(t)) return true;
            if (const auto* tuple = t.as<TupleType>()) {
                for (const auto& f : tuple->fields) {
                    if (self(f, self)) return true;
                }
            }
            return false;
        };
        if (any(call.type, any)) return true;
        for (const auto& a : call.args) {
            if (any(a->type, any)) return true;
        }
        return false;
    }

    // Whether every float32 operand of `call` is now in the half type or is a constant.
    bool follows(const Call& call, const std::vector<Expr>& args) const {
        bool any_half = false;
        std::function<bool(const Expr&, const Expr&)> ok = [&](const Expr& before,
                                                               const Expr& now) {
            if (is_float32_tensor(before->type)) {
                const auto* t = now->type.as<TensorType>();
                if (t && t->dtype == half_) {
                    any_half = true;
                    return true;
                }
                return now.is<Constant>();
            }
            const auto* b = before.as<Tuple>();
            const auto* n = now.as<Tuple>();
            if (b && n) {
                for (size_t i = 0; i < b->fields.size(); ++i) {
                    if (!ok(b->fields[i], n->fields[i])) return false;
                }
                return true;
            }
            return type_equal(before->type, now->type) || !before->type.as<TupleType>();
        };
        for (size_t i = 0; i < args.size(); ++i) {
            if (!ok(call.args[i], args[i])) return false;
        }
        return any_half;
    }

    // The operands with every float32 value in the half type (constants converted).
    std::vector<Expr> halved(const Call& call, const std::vector<Expr>& args) {
        std::function<Expr(const Expr&, const Expr&)> half = [&](const Expr& before,
                                                                 const Expr& now) {
            if (is_float32_tensor(before->type)) return cast_to(now, half_);
            const auto* b = before.as<Tuple>();
            const auto* n = now.as<Tuple>();
            if (!b || !n) return now;
            std::vector<Expr> fields;
            for (size_t i = 0; i < b->fields.size(); ++i) {
                fields.push_back(half(b->fields[i], n->fields[i]));
            }
            return make_tuple(std::move(fields), now->loc);
        };
        std::vector<Expr> out;
        for (size_t i = 0; i < args.size(); ++i) out.push_back(half(call.args[i], args[i]));
        return out;
    }

    // The operands with the types they had.
    std::vector<Expr> restored(const Call& call, const std::vector<Expr>& args) {
        std::vector<Expr> out;
        for (size_t i = 0; i < args.size(); ++i)
            out.push_back(restore(args[i], call.args[i]->type));
        return out;
    }

    // A product in the half type with float32 sums, rounded to the half type; undefined when the
    // call is no float32 product (an integer one, another out_dtype).
    Expr always(const Call& call, const std::vector<Expr>& args) {
        if (!is_float32_tensor(call.type)) return {};
        for (const auto& a : call.args) {
            if (!is_float32_tensor(a->type)) return {};
        }
        Ref<Attrs> attrs = with_float32_sums(call);
        if (!attrs.defined()) return {};
        std::vector<Expr> half_args;
        for (const auto& a : args) half_args.push_back(cast_to(a, half_));
        Expr product;
        try {
            product = make_call(*call.op, std::move(half_args), attrs, call.loc);
        } catch (const UserError&) {
            return {};
        }
        return cast_to(product, half_);
    }

    Ref<Attrs> with_float32_sums(const Call& call) const {
        auto with = [&](auto a) {
            if (!a.out_dtype.is_void()) return Ref<Attrs>();
            a.out_dtype = DataType::float32();
            return Ref<Attrs>(make_ref<decltype(a)>(a));
        };
        const std::string& name = call.op->name;
        if (name == "nn.conv2d") return with(attrs_of<ops::Conv2DAttrs>(call));
        if (name == "nn.conv2d_transpose") return with(attrs_of<ops::Conv2DTransposeAttrs>(call));
        if (name == "nn.dense") return with(attrs_of<ops::DenseAttrs>(call));
        return with(attrs_of<ops::MatmulAttrs>(call));  // nn.matmul, nn.batch_matmul
    }

    // `e` as `dtype`: a constant converted now (when the context can evaluate), else a cast.
    Expr cast_to(const Expr& e, DataType dtype) {
        const auto* t = e->type.as<TensorType>();
        if (!t || t->dtype == dtype) return e;
        auto a = make_ref<ops::CastAttrs>();
        const_cast<ops::CastAttrs*>(a.get())->dtype = dtype;
        Expr c = make_call(*find_op("cast"), {e}, a, e->loc);
        if (e.is<Constant>() && ctx_.evaluate) return make_constant(ctx_.evaluate(c), e->loc);
        return c;
    }

    // `call` (which is `self`) on `args` (and `callee`, for a function call).
    static Expr rebuild(const Call& call, const Expr& self, std::vector<Expr> args,
                        const Expr& callee = {}) {
        bool same = callee.same_as(call.callee);
        for (size_t i = 0; i < args.size(); ++i) same &= args[i].same_as(call.args[i]);
        if (same) return self;
        if (call.op.defined()) return make_call(*call.op, std::move(args), call.attrs, call.loc);
        ANVIL_CHECK(callee.is<Function>()) << "call of a " << expr_kind_name(callee->kind);
        return make_call_function(callee.cast<Function>(), std::move(args), call.loc);
    }

    DataType half_;
    const PassContext& ctx_;
    std::set<std::string>* missing_;
};

}  // namespace

MixedPrecisionResult convert_to_mixed_precision(const IRModule& m, DataType half,
                                                const PassContext& ctx) {
    if (half != DataType::bfloat16() && half != DataType::float16()) {
        user_error() << "to_mixed_precision: the mixed precision type must be bfloat16 or "
                     << "float16, got " << half.str();
    }
    std::set<std::string> missing;
    IRModule out = rewrite_functions(m, [&](const Ref<Function>& f) {
        MixedPrecision pass(half, ctx, &missing);
        Expr e = pass.mutate(Expr(f));
        return e.cast<Function>();
    });
    return {out, std::vector<std::string>(missing.begin(), missing.end())};
}

IRModule to_mixed_precision(const IRModule& m, const PassContext& ctx) {
    if (ctx.mixed_precision.is_void()) {
        user_error() << "to_mixed_precision needs the half type to compute in (anvil compile "
                     << "--mixed-precision bf16, anvil.transform.ToMixedPrecision(\"bfloat16\"))";
    }
    return convert_to_mixed_precision(m, ctx.mixed_precision, ctx).module;
}

}  // namespace anvil::graph
