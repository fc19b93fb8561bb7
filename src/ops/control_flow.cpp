#include "ops/control_flow.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "graph/expr_functor.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"
#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Expr;
using graph::Type;

namespace {

Type result_type(std::vector<Type> outputs) {
    if (outputs.size() == 1) return outputs[0];
    return graph::make_tuple_type(std::move(outputs));
}

// A one-element tensor (ONNX conditions and trip counts are scalars or [1]).
void expect_scalar(const Type& t, const SourceLoc& loc, const std::string& what,
                   std::optional<DataType> dtype = std::nullopt) {
    const auto& tt = graph::expect_tensor(t, loc, what);
    if (!tt.is_static() || tt.num_elements() != 1) {
        user_error(loc) << what << " must hold one element, not " << graph::type_str(t);
    }
    if (dtype && tt.dtype != *dtype) {
        user_error(loc) << what << " must be " << dtype->str() << ", not " << tt.dtype.str();
    }
}

Type if_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
             const SourceLoc& loc) {
    const auto& a = attrs_as<IfAttrs>(attrs);
    if (args.empty()) user_error(loc) << "control.if needs a condition";
    expect_scalar(args[0], loc, "the condition of control.if");
    if (a.num_then_args < 0 || a.num_then_args > static_cast<int64_t>(args.size()) - 1) {
        user_error(loc) << "control.if: num_then_args " << a.num_then_args << " but "
                        << args.size() - 1 << " argument(s) after the condition";
    }
    return result_type(a.output_types("control.if"));
}

Type loop_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
               const SourceLoc& loc) {
    const auto& a = attrs_as<LoopAttrs>(attrs);
    if (args.size() < 2 || a.num_carried < 0 ||
        a.num_carried > static_cast<int64_t>(args.size()) - 2) {
        user_error(loc) << "control.loop takes a trip count, a condition and num_carried ("
                        << a.num_carried << ") values, not " << args.size() << " argument(s)";
    }
    expect_scalar(args[0], loc, "the trip count of control.loop", DataType::int64());
    expect_scalar(args[1], loc, "the condition of control.loop", DataType::bool_());
    std::vector<Type> outputs = a.output_types("control.loop");
    if (static_cast<int64_t>(outputs.size()) < a.num_carried) {
        user_error(loc) << "control.loop returns " << outputs.size() << " value(s), fewer than its "
                        << a.num_carried << " carried value(s)";
    }
    return result_type(std::move(outputs));
}

// Whether a value of type `actual` may be passed where `declared` is expected: same dtype and
// rank, equal dimensions where both are constants.
// A sequence fits a sequence type whose dims it has (or that fixes none); a value, or an optional
// of one, fits an optional of its type.
bool fits(const Type& actual, const Type& declared) {
    if (auto* od = declared.as<graph::OptionalType>()) {
        auto* oa = actual.as<graph::OptionalType>();
        return fits(oa ? oa->elem : actual, od->elem);
    }
    if (auto* sd = declared.as<graph::SequenceType>()) {
        auto* sa = actual.as<graph::SequenceType>();
        if (!sa || sa->dtype != sd->dtype) return false;
        if (sa->empty || (!sd->dims && !sd->empty)) return true;
        if (!sa->dims || !sd->dims || sa->dims->size() != sd->dims->size()) return false;
        for (size_t i = 0; i < sd->dims->size(); ++i) {
            int64_t d = (*sd->dims)[i];
            if (d != graph::SequenceType::kAnyDim && d != (*sa->dims)[i]) return false;
        }
        return true;
    }
    auto* a = actual.as<graph::TensorType>();
    auto* d = declared.as<graph::TensorType>();
    if (!a || !d) return graph::type_equal(actual, declared);
    if (a->dtype != d->dtype || a->ndim() != d->ndim()) return false;
    for (size_t i = 0; i < a->ndim(); ++i) {
        const int64_t* x = as_const_int(a->shape[i]);
        const int64_t* y = as_const_int(d->shape[i]);
        if (x && y && *x != *y) return false;
    }
    return true;
}

const graph::Function& callee(const graph::IRModule& m, const std::string& name, const Expr& call,
                              const std::string& what) {
    auto it = m.functions.find(name);
    if (it == m.functions.end()) {
        user_error(call->loc) << what << ": the module has no graph function '" << name << "'";
    }
    return *it->second;
}

void check_args(const graph::Function& f, const std::string& name, const std::vector<Type>& passed,
                const Expr& call, const std::string& what) {
    if (passed.size() != f.params.size()) {
        user_error(call->loc) << what << ": '" << name << "' takes " << f.params.size()
                              << " value(s), the call passes " << passed.size();
    }
    for (size_t i = 0; i < passed.size(); ++i) {
        if (!fits(passed[i], f.params[i]->type)) {
            user_error(call->loc) << what << ": argument " << i << " of '" << name << "' is "
                                  << graph::type_str(passed[i]) << ", its parameter %"
                                  << f.params[i]->name << " is "
                                  << graph::type_str(f.params[i]->type);
        }
    }
}

void check_results(const std::vector<Type>& returned, const std::vector<Type>& stated,
                   const std::string& name, const Expr& call, const std::string& what) {
    if (returned.size() != stated.size()) {
        user_error(call->loc) << what << ": '" << name << "' returns " << returned.size()
                              << " value(s), the call states " << stated.size();
    }
    for (size_t i = 0; i < returned.size(); ++i) {
        if (!fits(returned[i], stated[i])) {
            user_error(call->loc) << what << ": result " << i << " of '" << name << "' is "
                                  << graph::type_str(returned[i]) << ", the call states "
                                  << graph::type_str(stated[i]);
        }
    }
}

void check_if(const graph::IRModule& m, const Expr& e, const IfAttrs& a) {
    const auto& call = *e.as<graph::Call>();
    std::vector<Type> args;
    for (size_t i = 1; i < call.args.size(); ++i) args.push_back(call.args[i]->type);
    std::vector<Type> then_args(args.begin(), args.begin() + a.num_then_args);
    std::vector<Type> else_args(args.begin() + a.num_then_args, args.end());
    std::vector<Type> stated = a.output_types("control.if");
    for (const auto& [name, passed] :
         {std::pair{a.then_branch, then_args}, std::pair{a.else_branch, else_args}}) {
        const auto& f = callee(m, name, e, "control.if");
        check_args(f, name, passed, e, "control.if");
        check_results(result_fields(f.body->type), stated, name, e, "control.if");
    }
}

void check_loop(const graph::IRModule& m, const Expr& e, const LoopAttrs& a) {
    const auto& call = *e.as<graph::Call>();
    const auto& f = callee(m, a.body, e, "control.loop");
    std::vector<Type> passed = {graph::make_tensor_type(std::vector<int64_t>{}, DataType::int64()),
                                graph::make_tensor_type(std::vector<int64_t>{}, DataType::bool_())};
    for (size_t i = 2; i < call.args.size(); ++i) passed.push_back(call.args[i]->type);
    check_args(f, a.body, passed, e, "control.loop");
    std::vector<Type> returned = result_fields(f.body->type);
    std::vector<Type> stated = a.output_types("control.loop");
    if (returned.empty() || static_cast<int64_t>(returned.size()) != 1 + (int64_t)stated.size()) {
        user_error(e->loc) << "control.loop: the body '" << a.body << "' returns "
                           << returned.size() << " value(s); it must return the condition and "
                           << stated.size() << " more";
    }
    if (!fits(returned[0], passed[1])) {
        user_error(e->loc) << "control.loop: the body '" << a.body << "' returns the condition as "
                           << graph::type_str(returned[0]) << ", not a bool scalar";
    }
    // Scan outputs are stacked: the stated type has one more (leading) dimension.
    std::vector<Type> per_iteration(returned.begin() + 1, returned.end());
    for (size_t k = a.num_carried; k < stated.size(); ++k) {
        const auto& s = graph::expect_tensor(stated[k], e->loc, "a scan output of control.loop");
        if (s.ndim() == 0) {
            user_error(e->loc) << "control.loop: scan output " << k << " has rank 0";
        }
        stated[k] = graph::make_tensor_type(
            std::vector<PrimExpr>(s.shape.begin() + 1, s.shape.end()), s.dtype);
    }
    check_results(per_iteration, stated, a.body, e, "control.loop");
}

}  // namespace

Expr make_if(Expr cond, const std::string& then_branch, std::vector<Expr> then_args,
             const std::string& else_branch, std::vector<Expr> else_args, const Type& result,
             SourceLoc loc) {
    auto attrs = Ref<IfAttrs>(new IfAttrs());
    auto* a = const_cast<IfAttrs*>(attrs.get());
    a->then_branch = then_branch;
    a->else_branch = else_branch;
    a->num_then_args = static_cast<int64_t>(then_args.size());
    a->set_outputs(result);
    std::vector<Expr> args = {std::move(cond)};
    args.insert(args.end(), then_args.begin(), then_args.end());
    args.insert(args.end(), else_args.begin(), else_args.end());
    return graph::make_call(get_op("control.if"), std::move(args), attrs, std::move(loc));
}

Expr make_loop(Expr max_trip, Expr cond, std::vector<Expr> carried, std::vector<Expr> constants,
               const std::string& body, const Type& result, SourceLoc loc) {
    auto attrs = Ref<LoopAttrs>(new LoopAttrs());
    auto* a = const_cast<LoopAttrs*>(attrs.get());
    a->body = body;
    a->num_carried = static_cast<int64_t>(carried.size());
    a->set_outputs(result);
    std::vector<Expr> args = {std::move(max_trip), std::move(cond)};
    args.insert(args.end(), carried.begin(), carried.end());
    args.insert(args.end(), constants.begin(), constants.end());
    return graph::make_call(get_op("control.loop"), std::move(args), attrs, std::move(loc));
}

const IfAttrs* if_attrs(const Expr& e) {
    return call_attrs<IfAttrs>(e, "control.if");
}

const LoopAttrs* loop_attrs(const Expr& e) {
    return call_attrs<LoopAttrs>(e, "control.loop");
}

std::vector<Type> result_fields(const Type& t) {
    if (auto* tuple = t.as<graph::TupleType>()) return tuple->fields;
    return {t};
}

namespace {

void add_vars(const PrimExpr& dim, std::vector<const Var*>* vars) {
    pre_order_visit(dim, [&](const PrimExpr& x) {
        auto* v = x.as<Var>();
        if (v && std::find(vars->begin(), vars->end(), v) == vars->end()) vars->push_back(v);
    });
}

void add_vars(const Type& t, std::vector<const Var*>* vars) {
    if (auto* tuple = t.as<graph::TupleType>()) {
        for (const auto& f : tuple->fields) add_vars(f, vars);
    } else if (auto* tt = t.as<graph::TensorType>()) {
        for (const auto& d : tt->shape) add_vars(d, vars);
    } else if (auto* ot = t.as<graph::OptionalType>()) {
        add_vars(ot->elem, vars);
    }
}

}  // namespace

std::vector<const Var*> dimension_vars(const std::vector<Type>& types) {
    std::vector<const Var*> vars;
    for (const auto& t : types) add_vars(t, &vars);
    return vars;
}

std::vector<const Var*> dimension_vars(const PrimExpr& dim) {
    std::vector<const Var*> vars;
    add_vars(dim, &vars);
    return vars;
}

Type join_result_types(const std::vector<Type>& results, const std::vector<const Var*>& known,
                       const std::string& prefix, const SourceLoc& loc, const std::string& what) {
    ANVIL_CHECK(!results.empty()) << "joining no result types";
    int fresh = 0;
    auto is_known = [&](const PrimExpr& d) {
        for (const Var* v : dimension_vars(d)) {
            if (std::find(known.begin(), known.end(), v) == known.end()) return false;
        }
        return true;
    };
    std::function<Type(const std::vector<Type>&)> join = [&](const std::vector<Type>& ts) {
        if (auto* first = ts[0].as<graph::TupleType>()) {
            std::vector<Type> fields;
            for (size_t i = 0; i < first->fields.size(); ++i) {
                std::vector<Type> column;
                for (const auto& t : ts) {
                    auto* tuple = t.as<graph::TupleType>();
                    if (!tuple || tuple->fields.size() != first->fields.size()) {
                        user_error(loc) << what << " give " << graph::type_str(ts[0]) << " and "
                                        << graph::type_str(t);
                    }
                    column.push_back(tuple->fields[i]);
                }
                fields.push_back(join(column));
            }
            return graph::make_tuple_type(std::move(fields));
        }
        // Optionals: the join of the values (a plain value is an optional that has one).
        bool any_optional = false;
        for (const auto& t : ts) any_optional = any_optional || t.is<graph::OptionalType>();
        if (any_optional) {
            std::vector<Type> values;
            for (const auto& t : ts) {
                auto* o = t.as<graph::OptionalType>();
                values.push_back(o ? o->elem : t);
            }
            return graph::make_optional_type(join(values));
        }
        if (auto* first = ts[0].as<graph::SequenceType>()) {
            Type joined(first);
            for (const auto& t : ts) {
                auto* st = t.as<graph::SequenceType>();
                std::optional<Type> j;
                if (st) j = graph::join_sequence_types(*joined.as<graph::SequenceType>(), *st);
                if (!j) {
                    user_error(loc) << what << " give " << graph::type_str(ts[0]) << " and "
                                    << graph::type_str(t);
                }
                joined = *j;
            }
            return joined;
        }
        const auto& first = graph::expect_tensor(ts[0], loc, what);
        std::vector<PrimExpr> shape;
        for (size_t d = 0; d < first.ndim(); ++d) {
            bool same = is_known(first.shape[d]);
            for (const auto& t : ts) {
                const auto& tt = graph::expect_tensor(t, loc, what);
                if (tt.dtype != first.dtype || tt.ndim() != first.ndim()) {
                    user_error(loc)
                        << what << " give " << graph::type_str(ts[0]) << " and "
                        << graph::type_str(t) << " (a different dtype or rank is not supported)";
                }
                same = same && structural_equal(tt.shape[d], first.shape[d]);
            }
            shape.push_back(same ? first.shape[d]
                                 : PrimExpr(make_var(prefix + "_" + std::to_string(fresh++),
                                                     DataType::int64())));
        }
        return graph::make_tensor_type(std::move(shape), first.dtype);
    };
    return join(results);
}

void check_control_flow(const graph::IRModule& m) {
    for (const auto& [name, f] : m.functions) {
        graph::post_order_visit(f->body, [&](const Expr& e) {
            if (const auto* a = if_attrs(e)) check_if(m, e, *a);
            if (const auto* a = loop_attrs(e)) check_loop(m, e, *a);
        });
    }
}

Ref<graph::Op> make_control_if_op() {
    return make_op({.name = "control.if",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<IfAttrs>,
                    .infer_type = if_type,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = "call one of two graph functions, by a condition"});
}

Ref<graph::Op> make_control_loop_op() {
    return make_op({.name = "control.loop",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<LoopAttrs>,
                    .infer_type = loop_type,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = "call a graph function repeatedly (ONNX Loop)"});
}

}  // namespace anvil::ops
