#include "graph/passes/graph_rewrite.h"

#include "graph/expr_functor.h"
#include "ops/activation.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

// The body of a function with its parameters replaced by values, and each variable it binds
// with a let replaced by a new one (a function called twice is inlined twice: a variable is
// bound once in a graph).
class Substituter : public ExprMutator {
public:
    explicit Substituter(std::unordered_map<const ExprNode*, Expr> values)
        : values_(std::move(values)) {}

    Expr mutate(const Expr& e) override {
        auto it = values_.find(e.get());
        return it != values_.end() ? it->second : ExprMutator::mutate(e);
    }

protected:
    // A nested function is closed: nothing of the inlined body's scope is in it.
    Expr mutate_(const Function*, const Expr& self) override { return self; }
    Expr mutate_(const Let* op, const Expr& self) override {
        Expr value = mutate(op->value);
        Ref<Var> fresh = make_var(op->var->name, op->var->type, op->var->loc);
        values_[op->var.get()] = Expr(fresh);
        return make_let(fresh, value, mutate(op->body), op->loc);
    }

private:
    std::unordered_map<const ExprNode*, Expr> values_;
};

}  // namespace

Expr inline_call(const Function& f, const std::vector<Expr>& args) {
    std::unordered_map<const ExprNode*, Expr> values;
    for (size_t i = 0; i < f.params.size(); ++i) values[f.params[i].get()] = args.at(i);
    return Substituter(std::move(values)).mutate(f.body);
}

IRModule rewrite_functions(const IRModule& m,
                           const std::function<Ref<Function>(const Ref<Function>&)>& rewrite) {
    IRModule out = m;
    for (auto& [name, f] : out.functions) {
        if (!f->primitive) f = rewrite(f);
    }
    return out;
}

const Call* as_op_call(const Expr& e, const std::string& name) {
    auto* call = e.as<Call>();
    if (!call || !call->op.defined() || call->op->name != name) return nullptr;
    return call;
}

const Op* find_op(const std::string& name) {
    const Op* op = ops::op_table().find(name);
    if (!op) internal_error() << "a graph pass creates op '" << name << "', which is no op";
    return op;
}

std::unordered_map<const ExprNode*, int> count_uses(const Expr& body) {
    std::unordered_map<const ExprNode*, int> uses;
    uses[body.get()]++;
    post_order_visit(body, [&](const Expr& e) {
        auto use = [&](const Expr& operand) { uses[operand.get()]++; };
        if (auto* c = e.as<Call>()) {
            for (const auto& a : c->args) use(a);
        } else if (auto* t = e.as<Tuple>()) {
            for (const auto& f : t->fields) use(f);
        } else if (auto* g = e.as<TupleGetItem>()) {
            use(g->tuple);
        } else if (auto* l = e.as<Let>()) {
            use(l->value);
            use(l->body);
        }
    });
    return uses;
}

namespace {

template <typename T>
void write_from_double(const std::vector<double>& v, const runtime::NDArray& a) {
    T* p = static_cast<T*>(a.raw_data());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
}

}  // namespace

Expr CallRewriter::mutate_(const Call* op, const Expr& self) {
    Expr e = ExprMutator::mutate_(op, self);
    Expr r = rewrite(self);
    return r.defined() && type_equal(r->type, e->type) ? r : e;
}

int CallRewriter::uses(const Expr& e) const {
    auto it = uses_.find(e.get());
    return it == uses_.end() ? 0 : it->second;
}

bool is_static_float_constant(const Expr& e) {
    auto* t = e->type.as<TensorType>();
    if (!e.is<Constant>() || !t || !t->is_static()) return false;
    return t->dtype == DataType::float32() || t->dtype == DataType::float64();
}

Expr make_constant_of(const std::vector<int64_t>& shape, DataType dtype,
                      const std::vector<double>& values, SourceLoc loc) {
    runtime::NDArray a = runtime::NDArray::empty(shape, dl_dtype_of(dtype));
    ANVIL_CHECK(static_cast<int64_t>(values.size()) == a.num_elements())
        << values.size() << " values for a constant of " << a.num_elements() << " elements";
    if (dtype == DataType::float32()) {
        write_from_double<float>(values, a);
    } else if (dtype == DataType::float64()) {
        write_from_double<double>(values, a);
    } else if (dtype == DataType::int32()) {
        write_from_double<int32_t>(values, a);
    } else if (dtype == DataType::int64()) {
        write_from_double<int64_t>(values, a);
    } else if (dtype == DataType::int_(8)) {
        write_from_double<int8_t>(values, a);
    } else {
        internal_error() << "constant of dtype " << dtype.str();
    }
    return make_constant(a, std::move(loc));
}

Expr make_clip(const Expr& x, double lo, double hi, SourceLoc loc) {
    ops::ClipAttrs a;
    a.a_min = lo;
    a.a_max = hi;
    return make_call(*find_op("clip"), {x}, make_ref<ops::ClipAttrs>(a), std::move(loc));
}

}  // namespace anvil::graph
