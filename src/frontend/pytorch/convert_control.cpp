// Converters of TorchScript's control flow: prim::If and prim::Loop, list.append, and the model
// assertions (raise) in branches.
//
// A condition known at import time (most of them: the model's flags and shapes decide them)
// selects the branch, which is converted in place. One known only at run time becomes
// control.if over two module functions (ops/control_flow.h); outer values a branch uses become
// its parameters (BlockConverter::convert_function). A branch that only raises (`assert c, "..."`
// and `if c: raise ...`) is a model assertion instead: the other branch is converted in place
// and the condition is checked at run time (BlockConverter::add_check).
//
// A loop becomes control.loop over a body function: i, the condition and the carried values are
// its parameters; it returns the next condition, the carried values and, for each list the body
// appends to, the appended items (scan outputs, stacked by the loop). A loop is unrolled instead
// when its trip count is known and it has one iteration, or when it is known, at most
// kMaxUnroll, and the body needs what only unrolling gives: the index as an import-time number
// (x[i] of a list, sizes), carried values whose shapes change or that are import-time numbers.
#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "frontend/pytorch/convert_ops.h"
#include "ir/analyzer.h"
#include "ir/structural_equal.h"
#include "ops/control_flow.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;
using graph::Type;

namespace {

// The most iterations unrolled when a graph loop cannot express the body. Each one copies the
// body's ops into the graph, so this and kMaxUnrolledNodes bound the graph's growth.
constexpr int64_t kMaxUnroll = 64;
// The most nodes an unrolled loop may convert (its trip count times its body's nodes, a nested
// loop counted as unrolled too): nested loops must not multiply into an import that never ends.
constexpr int64_t kMaxUnrolledNodes = 20000;
// The most items a graph loop may append to lists (each becomes a slice of the loop's stacked
// result at import).
constexpr int64_t kMaxAppendedItems = 4096;

// A module-function name made from the node's first output: "y_then".
std::string function_name(const PtContext& ctx, const std::string& what) {
    const auto& outs = ctx.node().outputs;
    std::string base = outs.empty() ? std::string("loop") : outs[0].name;
    return base + "_" + what;
}

void collect_defined(const TsBlock& b, std::set<int64_t>& defined) {
    for (const auto& v : b.inputs) defined.insert(v.id);
    for (const auto& n : b.nodes) {
        for (const auto& o : n.outputs) defined.insert(o.id);
        for (const auto& sub : n.blocks) collect_defined(sub, defined);
    }
}

// Whether `kind` changes its first operand: an in-place op ("aten::add_"), list.append.
bool mutates_first_operand(const std::string& kind) {
    if (kind == "aten::append") return true;
    return kind.size() > 2 && kind.back() == '_' && kind[kind.size() - 2] != '_';
}

// The nodes in `b` (and the blocks nested in it) that change a value not defined in `defined`.
void collect_outer_mutations(const TsBlock& b, const std::set<int64_t>& defined,
                             std::vector<const TsNode*>& found) {
    for (const auto& n : b.nodes) {
        if (mutates_first_operand(n.kind) && !n.inputs.empty() && !defined.count(n.inputs[0])) {
            found.push_back(&n);
        }
        for (const auto& sub : n.blocks) collect_outer_mutations(sub, defined, found);
    }
}

std::vector<const TsNode*> outer_mutations(const TsBlock& b) {
    std::set<int64_t> defined;
    collect_defined(b, defined);
    std::vector<const TsNode*> found;
    collect_outer_mutations(b, defined, found);
    return found;
}

// The nodes converting `b` once makes at most: a nested loop counts as unrolled kMaxUnroll
// times. Saturates past kMaxUnrolledNodes.
int64_t unrolled_size(const TsBlock& b) {
    int64_t n = 0;
    for (const auto& node : b.nodes) {
        n += 1;
        for (const auto& sub : node.blocks) {
            n += (node.kind == "prim::Loop" ? kMaxUnroll : 1) * unrolled_size(sub);
        }
        if (n > kMaxUnrolledNodes) return kMaxUnrolledNodes + 1;
    }
    return n;
}

bool contains_kind(const TsBlock& b, const std::string& kind) {
    for (const auto& n : b.nodes) {
        if (n.kind == kind) return true;
        for (const auto& sub : n.blocks) {
            if (contains_kind(sub, kind)) return true;
        }
    }
    return false;
}

// The prim::RaiseException a block runs unconditionally (TorchScript puts `raise` at the top
// level of its branch); null when there is none.
const TsNode* top_level_raise(const TsBlock& b) {
    for (const auto& n : b.nodes) {
        if (n.kind == "prim::RaiseException") return &n;
    }
    return nullptr;
}

// The message of a raise, as far as it is known without running the model: the string itself,
// or the format string of aten::format.
std::string raise_message(PtContext& ctx, const TsBlock& b, const TsNode& raise) {
    if (raise.inputs.empty()) return "";
    int64_t id = raise.inputs[0];
    for (const auto& n : b.nodes) {
        if (n.outputs.empty() || n.outputs[0].id != id) continue;
        if (n.kind == "prim::Constant" && n.value && n.value->kind == TsConst::Str) {
            return n.value->s;
        }
        if (n.kind == "aten::format" && !n.inputs.empty()) {
            const PtValue& f = ctx.blocks().value_of(n.inputs[0], ctx.loc());
            if (f.kind == PtValue::Str) return f.str;
        }
        return "";
    }
    const PtValue& v = ctx.blocks().value_of(id, ctx.loc());
    return v.kind == PtValue::Str ? v.str : "";
}

Expr condition_tensor(const PtContext& ctx, const PtValue& v, const std::string& what) {
    if (v.kind == PtValue::Tensor) return cast_to(ctx, v.tensor, DataType::bool_());
    if (!v.is_number()) ctx.error() << what << " is a " << kind_name(v.kind) << ", not a bool";
    return number_tensor(ctx, v, DataType::bool_());
}

// A block's values flattened to the tensors a graph function returns: a tensor as it is, a
// number as a 0-d tensor, lists and tuples item by item, None as nothing.
void flatten(const PtContext& ctx, const PtValue& v, std::vector<Expr>& out,
             const std::string& what) {
    switch (v.kind) {
        case PtValue::Tensor:
            out.push_back(v.tensor);
            return;
        case PtValue::Int:
        case PtValue::Float:
        case PtValue::Bool:
            out.push_back(number_tensor(ctx, v, number_dtype(v.kind)));
            return;
        case PtValue::List:
        case PtValue::Tuple:
            for (const auto& item : v.items) flatten(ctx, item, out, what);
            return;
        case PtValue::None:
            return;
        default:
            ctx.error() << what << " is a " << kind_name(v.kind)
                        << "; only tensors, numbers, None and lists and tuples of them can be "
                           "chosen at run time";
    }
}

// Whether `a` and `b` flatten alike (the same structure of tensors, numbers and None).
bool same_structure(const PtValue& a, const PtValue& b) {
    bool a_num = a.is_number(), b_num = b.is_number();
    if (a_num || b_num) return a_num && b_num && a.kind == b.kind;
    if (a.kind != b.kind || a.items.size() != b.items.size()) return false;
    for (size_t k = 0; k < a.items.size(); ++k) {
        if (!same_structure(a.items[k], b.items[k])) return false;
    }
    return true;
}

// The values `like` has the structure of, made of `fields` from `pos` on (a number becomes one
// known at run time).
PtValue unflatten(const PtValue& like, const std::vector<Expr>& fields, size_t& pos) {
    if (like.kind == PtValue::Tensor) return PtValue::of_tensor(fields.at(pos++));
    if (like.is_number()) return PtValue::of_runtime_number(like.kind, fields.at(pos++));
    if (like.kind == PtValue::List || like.kind == PtValue::Tuple) {
        std::vector<PtValue> items;
        for (const auto& item : like.items) items.push_back(unflatten(item, fields, pos));
        return PtValue::of_list(std::move(items), like.kind);
    }
    return like;  // None
}

Expr one_or_tuple(std::vector<Expr> values, const SourceLoc& loc) {
    if (values.size() == 1) return values[0];
    return graph::make_tuple(std::move(values), loc);
}

// The values of a control-flow call: its fields, or itself when it has one value.
std::vector<Expr> call_items(const Expr& call, const SourceLoc& loc) {
    auto* tuple = call->type.as<graph::TupleType>();
    if (!tuple) return {call};
    std::vector<Expr> out;
    for (size_t k = 0; k < tuple->fields.size(); ++k) {
        out.push_back(graph::make_tuple_get_item(call, static_cast<int>(k), loc));
    }
    return out;
}

std::vector<Type> types_of(const std::vector<Expr>& values) {
    std::vector<Type> types;
    for (const auto& v : values) types.push_back(v->type);
    return types;
}

Type scalar_type(DataType dtype) {
    return graph::make_tensor_type(std::vector<int64_t>{}, dtype);
}

void refuse_outer_mutations(PtContext& ctx, const TsBlock& b, const std::string& where) {
    for (const TsNode* n : outer_mutations(b)) {
        ctx.error() << n->kind << (n->source.empty() ? "" : " at " + n->source)
                    << " changes a value defined outside " << where
                    << "; that is not supported (build the value inside, or return it)";
    }
}

// The If's condition as a tensor, its branches as functions, and the call.
PtValues runtime_if(PtContext& ctx, const Expr& cond) {
    const TsNode& node = ctx.node();
    const TsBlock& then_b = node.blocks[0];
    const TsBlock& else_b = node.blocks[1];
    refuse_outer_mutations(ctx, then_b, "a branch taken at run time");
    refuse_outer_mutations(ctx, else_b, "a branch taken at run time");
    const TsNode* then_raise = top_level_raise(then_b);
    const TsNode* else_raise = top_level_raise(else_b);
    if (then_raise && else_raise) {
        ctx.error() << "both branches raise an exception ("
                    << raise_message(ctx, then_b, *then_raise)
                    << "); the model fails for every input";
    }
    if (then_raise || else_raise) {
        // A model assertion: the branch that does not raise is what runs; the condition that
        // leads to the raise is checked at run time.
        const TsBlock& raising = then_raise ? then_b : else_b;
        std::string message = raise_message(ctx, raising, *(then_raise ? then_raise : else_raise));
        Expr holds = then_raise ? ctx.call("logical_not", {cond}) : cond;
        SourceLoc check_loc = ctx.loc();
        const std::string& source = (then_raise ? then_raise : else_raise)->source;
        check_loc.node_name = "model assertion" + (source.empty() ? "" : " at " + source);
        check_loc.op_type = "the model raises '" + (message.empty() ? "(no message)" : message) +
                            "' (it failed for these inputs)";
        ctx.blocks().add_check(holds, check_loc);
        return ctx.blocks().convert_inline(then_raise ? else_b : then_b, {});
    }
    bool has_checks = contains_kind(then_b, "prim::RaiseException") ||
                      contains_kind(else_b, "prim::RaiseException");
    if (node.outputs.empty() && !has_checks) {
        // Nothing comes out and nothing is checked: the branches cannot matter.
        return {};
    }
    // Each branch returns its values flattened; both must flatten alike.
    PtValues then_values, else_values;
    auto body = [&](PtValues* keep, const std::string& what) {
        return [&ctx, keep, what](const PtValues& results) {
            *keep = results;
            std::vector<Expr> fields;
            for (const auto& r : results) flatten(ctx, r, fields, what);
            // Nothing to return: a branch that only checks returns true.
            if (fields.empty()) fields.push_back(ctx.constant_scalar(DataType::bool_(), 1));
            return one_or_tuple(fields, ctx.loc());
        };
    };
    auto then_f =
        ctx.blocks().convert_function(then_b, function_name(ctx, "then"), {}, {},
                                      body(&then_values, "a value of the then branch"), ctx.loc());
    auto else_f =
        ctx.blocks().convert_function(else_b, function_name(ctx, "else"), {}, {},
                                      body(&else_values, "a value of the else branch"), ctx.loc());
    for (size_t k = 0; k < then_values.size() && k < else_values.size(); ++k) {
        if (!same_structure(then_values[k], else_values[k])) {
            ctx.error() << "output " << k << " is a " << kind_name(then_values[k].kind)
                        << " in one branch and a " << kind_name(else_values[k].kind)
                        << " in the other (or lists of different lengths); choosing between "
                           "them at run time is not supported";
        }
    }
    std::vector<Type> known = types_of(then_f.captured);
    for (const auto& c : else_f.captured) known.push_back(c->type);
    Type result = ops::join_result_types({then_f.function->body->type, else_f.function->body->type},
                                         ops::dimension_vars(known), function_name(ctx, "dim"),
                                         ctx.loc(), "the branches of If");
    Expr call = ops::make_if(cond, then_f.name, then_f.captured, else_f.name, else_f.captured,
                             result, ctx.loc());
    if (node.outputs.empty()) {
        // Only the checks: the call must run before the results the enclosing function returns.
        ctx.blocks().add_check(call, ctx.loc());
        return {};
    }
    std::vector<Expr> fields = call_items(call, ctx.loc());
    PtValues outs;
    size_t pos = 0;
    for (const auto& v : then_values) outs.push_back(unflatten(v, fields, pos));
    return outs;
}

// What a prim::Loop node is: max_trip, the initial condition and the carried values; its body
// takes (i, carried...) and returns (condition, carried...).
struct LoopParts {
    const TsBlock* body = nullptr;
    std::vector<PtValue> initial;  // carried values before the loop
    std::vector<bool> passed_on;   // carried values the body returns unchanged
    std::optional<int64_t> trips;  // the trip count when known at import time
    bool static_cond = false;      // the body's condition is the constant true
};

LoopParts loop_parts(PtContext& ctx) {
    const TsNode& node = ctx.node();
    if (node.blocks.size() != 1) ctx.error() << "a Loop must have one block";
    if (ctx.num_inputs() < 2) ctx.error() << "a Loop takes max_trip and a condition";
    LoopParts p;
    p.body = &node.blocks[0];
    const TsBlock& body = *p.body;
    size_t n = ctx.num_inputs() - 2;
    if (body.inputs.size() != n + 1 || body.outputs.size() != n + 1 || node.outputs.size() != n) {
        ctx.error() << "the loop carries " << n << " value(s), but its body takes "
                    << body.inputs.size() << ", returns " << body.outputs.size()
                    << " and the node has " << node.outputs.size() << " output(s)";
    }
    for (size_t k = 0; k < n; ++k) {
        p.initial.push_back(ctx.input(2 + k));
        p.passed_on.push_back(body.outputs[1 + k] == body.inputs[1 + k].id);
    }
    // The trip count: max_trip when known, 0 when the initial condition is known false.
    const PtValue& max_trip = ctx.input(0);
    const PtValue& cond = ctx.input(1);
    std::optional<int64_t> max_known;
    if (max_trip.is_import_time()) {
        if (const std::optional<int64_t> v = known_int(max_trip.scalar)) max_known = *v;
    }
    std::optional<bool> cond_known;
    if (cond.is_import_time()) {
        if (const std::optional<int64_t> v = known_int(cond.scalar)) cond_known = *v != 0;
    }
    // The body's condition: a constant (for loops), defined in the body or outside it.
    int64_t c = body.outputs[0];
    const PtValue* body_cond = nullptr;
    bool defined_inside = false;
    for (const auto& n2 : body.nodes) {
        for (const auto& o : n2.outputs) {
            if (o.id != c) continue;
            defined_inside = true;
            if (n2.kind == "prim::Constant" && n2.value && n2.value->kind == TsConst::Bool) {
                p.static_cond = n2.value->b;
            }
        }
    }
    if (!defined_inside && c != body.inputs[0].id) {
        body_cond = &ctx.blocks().value_of(c, ctx.loc());
        if (body_cond->is_import_time()) {
            const std::optional<int64_t> v = known_int(body_cond->scalar);
            p.static_cond = v && *v != 0;
        }
    }
    if (cond_known && !*cond_known) {
        p.trips = 0;
    } else if (cond_known && max_known && p.static_cond) {
        p.trips = std::max<int64_t>(*max_known, 0);
    }
    return p;
}

// The loop converted in place, iteration by iteration, with the index an import-time number.
PtValues unrolled_loop(PtContext& ctx, const LoopParts& p, int64_t max_trips) {
    PtValues carried = p.initial;
    for (int64_t i = 0; i < max_trips; ++i) {
        PtValues inputs = {PtValue::of_int(i)};
        inputs.insert(inputs.end(), carried.begin(), carried.end());
        PtValues outs = ctx.blocks().convert_inline(*p.body, inputs);
        carried.assign(outs.begin() + 1, outs.end());
        const PtValue& cond = outs[0];
        if (!cond.is_import_time()) {
            ctx.error() << "the loop's condition is computed at run time in iteration " << i
                        << " of a loop unrolled at import time";
        }
        const std::optional<int64_t> v = known_int(cond.scalar);
        if (!v) ctx.error() << "the loop's condition depends on symbolic sizes";
        if (*v == 0) break;
    }
    return carried;
}

bool same_dim(const PrimExpr& a, const PrimExpr& b) {
    const int64_t* x = as_const_int(a);
    const int64_t* y = as_const_int(b);
    if (x || y) return x && y && *x == *y;
    return structural_equal(a, b);
}

// Why a graph loop could not be built in the strict mode (carried types kept as they enter).
struct NeedsUnroll {
    std::string why;
};

// The carried value's tensor as it enters the loop: a tensor, or a number as a 0-d tensor.
Expr carried_tensor(const PtContext& ctx, const PtValue& v, size_t k) {
    if (v.kind == PtValue::Tensor) return v.tensor;
    if (v.is_number()) return number_tensor(ctx, v, number_dtype(v.kind));
    ctx.error() << "carried value " << k << " is a " << kind_name(v.kind)
                << "; a loop run as a graph loop can carry tensors and numbers only";
    ANVIL_UNREACHABLE();
}

// The loop as control.loop. `strict`: the carried values must keep the types they enter with
// (else NeedsUnroll); otherwise the dimensions that change become variables.
PtValues graph_loop(PtContext& ctx, const LoopParts& p, bool strict) {
    const TsBlock& original = *p.body;
    // The body as converted: values passed on unchanged are the values before the loop (found
    // outside the body, so captured), and each outer list the body appends to is an extra
    // input and output, empty on entry, whose items after an iteration are the scan outputs.
    TsBlock body;
    body.inputs.push_back(original.inputs[0]);
    body.outputs.push_back(original.outputs[0]);
    std::vector<size_t> carried_index;  // positions among the node's carried values
    for (size_t k = 0; k < p.initial.size(); ++k) {
        if (p.passed_on[k]) {
            ctx.blocks().bind_value(original.inputs[1 + k].id, p.initial[k]);
            continue;
        }
        carried_index.push_back(k);
        body.inputs.push_back(original.inputs[1 + k]);
        body.outputs.push_back(original.outputs[1 + k]);
    }
    std::vector<int64_t> lists;  // outer lists appended to
    for (const TsNode* n : outer_mutations(original)) {
        if (n->kind != "aten::append") {
            ctx.error() << n->kind << (n->source.empty() ? "" : " at " + n->source)
                        << " changes a value defined outside the loop; that is not supported "
                           "(carry the value through the loop instead)";
        }
        if (std::find(lists.begin(), lists.end(), n->inputs[0]) == lists.end()) {
            lists.push_back(n->inputs[0]);
        }
    }
    for (int64_t id : lists) {
        const PtValue& list = ctx.blocks().value_of(id, ctx.loc());
        if (list.kind != PtValue::List) {
            ctx.error() << "the loop appends to a " << kind_name(list.kind) << ", not a list";
        }
        if (!p.trips) {
            ctx.error() << "the loop appends to a list, but how often it runs is known only at "
                           "run time; a list of a length known only at run time is not supported "
                           "(stack the items into a tensor carried through the loop instead)";
        }
        body.inputs.push_back({.id = id, .name = "list"});
        body.outputs.push_back(id);
    }
    body.nodes = original.nodes;
    std::vector<Expr> initial;
    std::vector<PtValue::Kind> kinds;
    for (size_t k : carried_index) {
        if (strict && p.initial[k].kind != PtValue::Tensor &&
            !(p.initial[k].is_number() && !p.initial[k].is_import_time())) {
            throw NeedsUnroll{"carried value " + std::to_string(k) + " is a " +
                              kind_name(p.initial[k].kind) + " known at import time"};
        }
        initial.push_back(carried_tensor(ctx, p.initial[k], k));
        kinds.push_back(p.initial[k].kind);
    }
    const size_t n = initial.size();
    std::vector<Type> param_types = types_of(initial);
    std::vector<size_t> items_per_list;  // per iteration
    std::vector<PtValues> list_items;    // of the last conversion, for their kinds
    std::set<const Var*> fresh;          // dimension variables of changing dimensions
    for (int attempt = 0;; ++attempt) {
        size_t mark = ctx.blocks().mark();
        std::vector<Ref<graph::Var>> params = {
            graph::make_var("i", scalar_type(DataType::int64()), ctx.loc()),
            graph::make_var("cond", scalar_type(DataType::bool_()), ctx.loc())};
        PtValues inputs = {PtValue::of_runtime_number(PtValue::Int, params[0])};
        for (size_t k = 0; k < n; ++k) {
            params.push_back(graph::make_var("v" + std::to_string(k), param_types[k], ctx.loc()));
            inputs.push_back(kinds[k] == PtValue::Tensor
                                 ? PtValue::of_tensor(params.back())
                                 : PtValue::of_runtime_number(kinds[k], params.back()));
        }
        for (size_t l = 0; l < lists.size(); ++l) inputs.push_back(PtValue::of_list({}));
        items_per_list.assign(lists.size(), 0);
        list_items.assign(lists.size(), {});
        auto make_body = [&](const PtValues& outs) {
            std::vector<Expr> fields = {condition_tensor(ctx, outs[0], "the loop's condition")};
            for (size_t k = 0; k < n; ++k) {
                const PtValue& v = outs[1 + k];
                Expr t = v.kind == PtValue::Tensor ? v.tensor : carried_tensor(ctx, v, k);
                if (kinds[k] != PtValue::Tensor) {
                    t = cast_to(ctx, t, graph::expect_tensor(param_types[k], ctx.loc(), "").dtype);
                }
                fields.push_back(t);
            }
            for (size_t l = 0; l < lists.size(); ++l) {
                const PtValue& items = outs[1 + n + l];
                list_items[l] = items.items;
                items_per_list[l] = items.items.size();
                for (const auto& item : items.items) {
                    if (item.kind != PtValue::Tensor && !item.is_number()) {
                        ctx.error() << "the loop appends a " << kind_name(item.kind)
                                    << " to a list; only tensors and numbers are supported";
                    }
                    fields.push_back(item.kind == PtValue::Tensor
                                         ? item.tensor
                                         : number_tensor(ctx, item, number_dtype(item.kind)));
                }
            }
            return graph::make_tuple(fields, ctx.loc());
        };
        auto f = ctx.blocks().convert_function(body, function_name(ctx, "body"), params, inputs,
                                               make_body, ctx.loc());
        std::vector<Type> returned = ops::result_fields(f.function->body->type);
        bool stable = true;
        for (size_t k = 0; k < n; ++k) {
            const Type& r = returned[1 + k];
            if (graph::type_equal(r, param_types[k])) continue;
            const auto* pt = param_types[k].as<graph::TensorType>();
            const auto* rt = r.as<graph::TensorType>();
            if (!pt || !rt || pt->dtype != rt->dtype || pt->ndim() != rt->ndim()) {
                ctx.error() << "carried value " << carried_index[k] << " enters the loop as "
                            << graph::type_str(param_types[k]) << " and leaves an iteration as "
                            << graph::type_str(r)
                            << " (a different rank or dtype is not supported)";
            }
            if (strict) {
                ctx.blocks().roll_back(mark);
                throw NeedsUnroll{"carried value " + std::to_string(carried_index[k]) +
                                  " changes shape from " + graph::type_str(param_types[k]) +
                                  " to " + graph::type_str(r)};
            }
            // Each dimension an iteration changes becomes a variable (bound when the body is
            // entered); the others stay.
            std::vector<PrimExpr> dims = pt->shape;
            for (size_t j = 0; j < dims.size(); ++j) {
                const auto* var = dims[j].as<Var>();
                if (same_dim(dims[j], rt->shape[j]) || (var && fresh.count(var))) continue;
                dims[j] = ctx.new_dims(1)[0];
                fresh.insert(dims[j].as<Var>());
                stable = false;
            }
            param_types[k] = graph::make_tensor_type(dims, pt->dtype);
        }
        if (!stable && attempt > 3) {
            ctx.error() << "the loop's carried values do not settle on a shape";
        }
        if (!stable) {
            ctx.blocks().roll_back(mark);
            continue;
        }
        // The result: carried values as the caller can know them, then each scan output with
        // the trip count in front.
        std::vector<Type> known_types = types_of(initial);
        for (const auto& c : f.captured) known_types.push_back(c->type);
        std::vector<const Var*> known = ops::dimension_vars(known_types);
        std::vector<Type> result;
        std::string prefix = function_name(ctx, "dim");
        for (size_t k = 0; k < n; ++k) {
            result.push_back(ops::join_result_types({initial[k]->type, returned[1 + k]}, known,
                                                    prefix, ctx.loc(), "the loop's carried value"));
        }
        for (size_t k = 1 + n; k < returned.size(); ++k) {
            Type element = ops::join_result_types({returned[k]}, known, prefix, ctx.loc(),
                                                  "an item the loop appends");
            const auto& e = graph::expect_tensor(element, ctx.loc(), "an appended item");
            std::vector<PrimExpr> shape = {make_int(DataType::int64(), *p.trips)};
            shape.insert(shape.end(), e.shape.begin(), e.shape.end());
            result.push_back(graph::make_tensor_type(shape, e.dtype));
        }
        Expr max_trip = p.trips ? ctx.constant_int64({*p.trips}, {})
                                : number_tensor(ctx, ctx.input(0), DataType::int64());
        Expr cond = condition_tensor(ctx, ctx.input(1), "the loop's condition");
        Expr call = ops::make_loop(max_trip, cond, initial, f.captured, f.name,
                                   graph::make_tuple_type(result), ctx.loc());
        std::vector<Expr> fields = call_items(call, ctx.loc());
        PtValues outs = p.initial;
        for (size_t k = 0; k < n; ++k) {
            outs[carried_index[k]] = kinds[k] == PtValue::Tensor
                                         ? PtValue::of_tensor(fields[k])
                                         : PtValue::of_runtime_number(kinds[k], fields[k]);
        }
        // Each list gains its items, iteration by iteration.
        int64_t per_iteration = 0;
        for (size_t per : items_per_list) per_iteration += static_cast<int64_t>(per);
        if (per_iteration > 0 && *p.trips > kMaxAppendedItems / per_iteration) {
            ctx.error() << "the loop appends " << per_iteration << " item(s) to lists in each of "
                        << *p.trips << " iterations; at most " << kMaxAppendedItems
                        << " items are supported (stack them into a tensor carried through the "
                           "loop instead)";
        }
        size_t pos = n;
        for (size_t l = 0; l < lists.size(); ++l) {
            PtValue list = ctx.blocks().value_of(lists[l], ctx.loc());
            for (int64_t i = 0; i < *p.trips; ++i) {
                for (size_t m = 0; m < items_per_list[l]; ++m) {
                    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
                    a->axis = 0;
                    Expr item = ctx.call(
                        "take",
                        {fields[pos + m], ctx.constant_scalar(DataType::int64(), double(i))},
                        attrs);
                    const PtValue& like = list_items[l][m];
                    list.items.push_back(like.kind == PtValue::Tensor
                                             ? PtValue::of_tensor(item)
                                             : PtValue::of_runtime_number(like.kind, item));
                }
            }
            pos += items_per_list[l];
            ctx.blocks().bind_value(lists[l], list);
        }
        return outs;
    }
}

}  // namespace

PtValues convert_if(PtContext& ctx) {
    const TsNode& node = ctx.node();
    if (node.blocks.size() != 2) ctx.error() << "an If must have two blocks";
    const PtValue& cond = ctx.input(0);
    if (cond.is_import_time()) {
        PrimExpr c = simplify(cond.scalar);
        if (const int64_t* v = as_const_int(c)) {
            return ctx.blocks().convert_inline(node.blocks[*v ? 0 : 1], {});
        }
    }
    // Known only at run time (or a condition on symbolic sizes, which the executor evaluates).
    return runtime_if(ctx, condition_tensor(ctx, cond, "the condition"));
}

// for/while loops: a graph loop (control.loop), unrolled where that is clearly better (see the
// file comment).
PtValues convert_loop(PtContext& ctx) {
    LoopParts p = loop_parts(ctx);
    const int64_t size = unrolled_size(*p.body);
    if (p.trips && *p.trips <= 1 && size <= kMaxUnrolledNodes) {
        return unrolled_loop(ctx, p, *p.trips);
    }
    if (p.trips && *p.trips <= kMaxUnroll && *p.trips * size <= kMaxUnrolledNodes) {
        // Try the graph loop with the types as they enter; unroll when the body needs more.
        size_t mark = ctx.blocks().mark();
        try {
            return graph_loop(ctx, p, true);
        } catch (const NeedsUnroll&) {
        } catch (const UserError&) {
            // The body needs the index at import time (or failed otherwise: unrolling
            // then reports the body's own error with the index known).
        }
        ctx.blocks().roll_back(mark);
        return unrolled_loop(ctx, p, *p.trips);
    }
    return graph_loop(ctx, p, false);
}

// list.append(x): the list with x at its end. The importer rebinds the list operand to the
// result (lists are values here), so later uses of the list see the item.
PtValues convert_append(PtContext& ctx) {
    const PtValue& list = ctx.input(0);
    if (list.kind != PtValue::List) {
        ctx.error() << "appends to a " << kind_name(list.kind) << "; the list must be known here";
    }
    PtValue out = list;
    out.items.push_back(ctx.input(1));
    return {out};
}

}  // namespace anvil::frontend::pytorch
