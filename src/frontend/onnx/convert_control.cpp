// Converters of ONNX's control flow: If, Loop and Scan. Their subgraphs become graph functions
// of the module (outer values they use become extra parameters) called by control.if /
// control.loop (ops/control_flow.h); Scan is a loop whose body takes slice i of each scan input.
#include <limits>
#include <optional>

#include "frontend/onnx/convert_ops.h"
#include "ops/control_flow.h"
#include "ops/sequence.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;
using graph::Type;

namespace {

// A module-function name made from the node's first output: "y_body".
std::string function_name(const ConvertContext& ctx, const std::string& what) {
    std::string base = ctx.node().output_size() ? ctx.node().output(0) : ctx.loc().node_name;
    for (char& c : base) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "f" + base;
    return base + "_" + what;
}

// A branch's result: its one value, or a tuple of several (as control.if's result type is).
Expr branch_result(std::vector<Expr> values) {
    if (values.size() == 1) return values[0];
    return graph::make_tuple(std::move(values));
}

std::vector<Type> types_of(const std::vector<Expr>& values) {
    std::vector<Type> types;
    for (const auto& v : values) types.push_back(v->type);
    return types;
}

// The values of a control-flow call: its fields, or itself when it has one value.
Exprs items(ConvertContext& ctx, const Expr& call) {
    auto* tuple = call->type.as<graph::TupleType>();
    if (!tuple) return {call};
    Exprs out;
    for (size_t k = 0; k < tuple->fields.size(); ++k) {
        out.push_back(graph::make_tuple_get_item(call, static_cast<int>(k), ctx.loc()));
    }
    return out;
}

Type scalar_type(DataType dtype) {
    return graph::make_tensor_type(std::vector<int64_t>{}, dtype);
}

// A tensor type of `t`'s dtype and rank whose dimensions are all fresh variables.
Type general_type(const ConvertContext& ctx, const Type& t, const std::string& what) {
    const auto& tt = graph::expect_tensor(t, ctx.loc(), what);
    return graph::make_tensor_type(ctx.new_dims(tt.ndim()), tt.dtype);
}

// The loop body `g` as a function (i, cond, carried..., constants..., captured...) → (cond,
// carried..., scans...). `bind_inputs` maps the function's parameters to the subgraph's inputs.
// The carried parameters take the initial values' types when every iteration keeps them;
// otherwise the body is converted again with fresh dimensions for those that change.
SubgraphFunction loop_body(
    ConvertContext& ctx, const ::onnx::GraphProto& g, const std::vector<Type>& carried,
    const std::vector<Type>& constants,
    const std::function<Exprs(const std::vector<Ref<graph::Var>>&)>& bind_inputs,
    const std::function<Exprs(Exprs, const std::vector<Ref<graph::Var>>&)>& outputs) {
    std::vector<Type> param_types = carried;
    for (int attempt = 0;; ++attempt) {
        size_t mark = ctx.subgraphs().mark();
        std::vector<Ref<graph::Var>> params = {
            graph::make_var("i", scalar_type(DataType::int64()), ctx.loc()),
            graph::make_var("cond", scalar_type(DataType::bool_()), ctx.loc())};
        for (size_t k = 0; k < param_types.size(); ++k) {
            params.push_back(graph::make_var("v" + std::to_string(k), param_types[k], ctx.loc()));
        }
        for (size_t k = 0; k < constants.size(); ++k) {
            params.push_back(graph::make_var("c" + std::to_string(k), constants[k], ctx.loc()));
        }
        SubgraphFunction body = ctx.subgraphs().add_function(
            g, function_name(ctx, "body"), params, bind_inputs(params),
            [&](Exprs outs) { return graph::make_tuple(outputs(std::move(outs), params)); });
        std::vector<Type> returned = ops::result_fields(body.function->body->type);
        if (returned.size() < 1 + carried.size()) {
            ctx.error() << "the body returns " << returned.size() << " value(s); it must return "
                        << "the condition and the " << carried.size() << " carried value(s)";
        }
        bool stable = true;
        for (size_t k = 0; k < carried.size(); ++k) {
            if (graph::type_equal(returned[1 + k], param_types[k])) continue;
            if (!param_types[k].is<graph::TensorType>() ||
                !returned[1 + k].is<graph::TensorType>()) {
                // A sequence or an optional: the join of what enters and what an iteration
                // gives. Joins only lose detail, so this settles in a few tries.
                Type joined = ops::join_result_types({param_types[k], returned[1 + k]}, {},
                                                     function_name(ctx, "dim"), ctx.loc(),
                                                     "the loop's carried value");
                if (graph::type_equal(joined, param_types[k])) continue;
                if (attempt > 3) {
                    ctx.error() << "carried value " << k << " changes from "
                                << graph::type_str(param_types[k]) << " to "
                                << graph::type_str(returned[1 + k]) << " in every iteration";
                }
                param_types[k] = joined;
                stable = false;
                continue;
            }
            if (attempt > 0) {
                // The parameter's dimensions are all fresh variables by now (bound when the
                // body is entered), so any shape of the same rank and dtype is fine.
                const auto* p = param_types[k].as<graph::TensorType>();
                const auto* r = returned[1 + k].as<graph::TensorType>();
                if (p->dtype == r->dtype && p->ndim() == r->ndim()) continue;
                ctx.error() << "carried value " << k << " changes from "
                            << graph::type_str(param_types[k]) << " to "
                            << graph::type_str(returned[1 + k])
                            << " in an iteration (a different rank or dtype is not supported)";
            }
            param_types[k] = general_type(ctx, param_types[k], "carried value");
            stable = false;
        }
        if (stable) return body;
        ctx.subgraphs().roll_back(mark);
    }
}

// The loop's result type: the carried values as the caller can know them (the initial values'
// dimensions where every iteration keeps them), then each scan output with a leading dimension
// for the iteration count (`trips` when it is known before the loop runs).
Type loop_result(ConvertContext& ctx, const SubgraphFunction& body,
                 const std::vector<Type>& carried, const std::vector<Type>& known_types,
                 std::optional<int64_t> trips = std::nullopt) {
    std::vector<const Var*> known = ops::dimension_vars(known_types);
    std::vector<Type> returned = ops::result_fields(body.function->body->type);
    std::vector<Type> result;
    std::string prefix = function_name(ctx, "dim");
    for (size_t k = 0; k < carried.size(); ++k) {
        result.push_back(ops::join_result_types({carried[k], returned[1 + k]}, known, prefix,
                                                ctx.loc(), "the loop's carried value"));
    }
    for (size_t k = 1 + carried.size(); k < returned.size(); ++k) {
        Type element = ops::join_result_types({returned[k]}, known, prefix, ctx.loc(),
                                              "the loop's scan output");
        const auto& e = graph::expect_tensor(element, ctx.loc(), "a scan output");
        std::vector<PrimExpr> shape =
            trips ? std::vector<PrimExpr>{make_int(DataType::int64(), *trips)} : ctx.new_dims(1);
        shape.insert(shape.end(), e.shape.begin(), e.shape.end());
        result.push_back(graph::make_tensor_type(shape, e.dtype));
    }
    return graph::make_tuple_type(result);
}

Expr scalar_of(ConvertContext& ctx, const Expr& x, DataType dtype, const std::string& what) {
    const auto& t = ctx.tensor_type(x, what);
    if (t.dtype != dtype) ctx.error() << what << " must be " << dtype.str();
    if (!t.is_static() || t.num_elements() != 1) ctx.error() << what << " must hold one value";
    return x;
}

}  // namespace

Exprs convert_if(ConvertContext& ctx) {
    Expr cond = ctx.input(0);
    SubgraphFunction then_f = ctx.subgraphs().add_function(
        ctx.attr_graph("then_branch"), function_name(ctx, "then"), {}, {}, branch_result);
    SubgraphFunction else_f = ctx.subgraphs().add_function(
        ctx.attr_graph("else_branch"), function_name(ctx, "else"), {}, {}, branch_result);
    std::vector<Type> known = types_of(then_f.captured);
    for (const auto& c : else_f.captured) known.push_back(c->type);
    Type result = ops::join_result_types({then_f.function->body->type, else_f.function->body->type},
                                         ops::dimension_vars(known), function_name(ctx, "dim"),
                                         ctx.loc(), "the branches of If");
    Expr call = ops::make_if(cond, then_f.name, then_f.captured, else_f.name, else_f.captured,
                             result, ctx.loc());
    return items(ctx, call);
}

Exprs convert_loop(ConvertContext& ctx) {
    Expr max_trip = ctx.optional_input(0);
    Expr cond = ctx.optional_input(1);
    if (!max_trip.defined()) {
        max_trip = ctx.constant_int64({std::numeric_limits<int64_t>::max()}, {});
    }
    if (!cond.defined()) cond = ctx.constant_scalar(DataType::bool_(), 1);
    max_trip = scalar_of(ctx, max_trip, DataType::int64(), "the trip count M");
    cond = scalar_of(ctx, cond, DataType::bool_(), "the condition");
    Exprs initial(ctx.inputs().begin() + 2, ctx.inputs().end());
    for (const auto& v : initial) {
        if (!v.defined()) ctx.error() << "a loop-carried value is omitted";
    }
    std::vector<Type> carried = types_of(initial);
    SubgraphFunction body = loop_body(
        ctx, ctx.attr_graph("body"), carried, {},
        [](const std::vector<Ref<graph::Var>>& params) {
            return Exprs(params.begin(), params.end());
        },
        [](Exprs outs, const std::vector<Ref<graph::Var>>&) { return outs; });
    std::vector<Type> known_types = carried;
    for (const auto& c : body.captured) known_types.push_back(c->type);
    Type result = loop_result(ctx, body, carried, known_types);
    Expr call =
        ops::make_loop(max_trip, cond, initial, body.captured, body.name, result, ctx.loc());
    return items(ctx, call);
}

namespace {

// The loop of a Scan (opset 9's semantics) over `scans` along `in_axes` (reversed where
// `in_dirs` is non-zero), carrying `states`: the final states, then each scan output stacked on
// a new axis 0 in iteration order. The body is converted once into `*body` and reused by later
// calls (Scan-8 runs it per batch element).
Exprs scan_loop(ConvertContext& ctx, const Exprs& states, const Exprs& scans,
                std::vector<int64_t> in_axes, const std::vector<int64_t>& in_dirs,
                SubgraphFunction* body_cache) {
    auto num_scan = static_cast<int64_t>(scans.size());
    // The number of iterations: the scan inputs' length along their axes.
    int64_t length = -1;
    for (int64_t k = 0; k < num_scan; ++k) {
        std::vector<int64_t> shape = ctx.static_shape(scans[k], "scan input");
        in_axes[k] =
            ctx.normalize_axis(in_axes[k], static_cast<int64_t>(shape.size()), "scan_input_axes");
        if (length >= 0 && shape[in_axes[k]] != length) {
            ctx.error() << "the scan inputs have different lengths " << length << " and "
                        << shape[in_axes[k]];
        }
        length = shape[in_axes[k]];
    }
    const ::onnx::GraphProto& g = ctx.attr_graph("body");
    std::vector<Type> carried = types_of(states);
    size_t n = states.size();
    SubgraphFunction& body = *body_cache;
    if (!body.function.defined())
        body = loop_body(
            ctx, g, carried, types_of(scans),
            [&](const std::vector<Ref<graph::Var>>& params) {
                Exprs inputs(params.begin() + 2, params.begin() + 2 + n);
                for (int64_t k = 0; k < num_scan; ++k) {
                    Expr index = params[0];
                    if (in_dirs[k] != 0) {
                        index = ctx.call("subtract", {ctx.constant_int64({length - 1}, {}), index});
                    }
                    auto attrs = make_ref<ops::TakeAttrs>();
                    const_cast<ops::TakeAttrs*>(attrs.get())->axis = in_axes[k];
                    inputs.push_back(ctx.call("take", {params[2 + n + k], index}, attrs));
                }
                return inputs;
            },
            [&](Exprs outs, const std::vector<Ref<graph::Var>>&) {
                outs.insert(outs.begin(), ctx.constant_scalar(DataType::bool_(), 1));
                return outs;
            });
    std::vector<Type> known_types = carried;
    for (const auto& s : scans) known_types.push_back(s->type);
    for (const auto& c : body.captured) known_types.push_back(c->type);
    Type result = loop_result(ctx, body, carried, known_types, length);
    Exprs constants = scans;
    constants.insert(constants.end(), body.captured.begin(), body.captured.end());
    Expr call =
        ops::make_loop(ctx.constant_int64({length}, {}), ctx.constant_scalar(DataType::bool_(), 1),
                       states, constants, body.name, result, ctx.loc());
    return items(ctx, call);
}

}  // namespace

// Scan (opset 9): the body runs once per slice along each scan input's axis, carrying states.
Exprs convert_scan(ConvertContext& ctx) {
    int64_t num_scan = ctx.attr_int("num_scan_inputs", 0);
    int64_t num_states = static_cast<int64_t>(ctx.num_inputs()) - num_scan;
    if (num_scan < 1 || num_states < 0) {
        ctx.error() << "num_scan_inputs " << num_scan << " does not fit its " << ctx.num_inputs()
                    << " input(s)";
    }
    Exprs states(ctx.inputs().begin(), ctx.inputs().begin() + num_states);
    Exprs scans(ctx.inputs().begin() + num_states, ctx.inputs().end());
    auto axes_attr = [&](const char* name, int64_t count) {
        std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(count, 0));
        if (static_cast<int64_t>(v.size()) != count) {
            ctx.error() << "attribute '" << name << "' must have " << count << " value(s)";
        }
        return v;
    };
    std::vector<int64_t> in_axes = axes_attr("scan_input_axes", num_scan);
    std::vector<int64_t> in_dirs = axes_attr("scan_input_directions", num_scan);
    SubgraphFunction body;
    Exprs outs = scan_loop(ctx, states, scans, in_axes, in_dirs, &body);
    // Scan outputs come stacked on axis 0, in iteration order: reverse and move them as asked.
    size_t n = states.size();
    size_t num_outputs = outs.size() - n;
    std::vector<int64_t> out_axes = axes_attr("scan_output_axes", num_outputs);
    std::vector<int64_t> out_dirs = axes_attr("scan_output_directions", num_outputs);
    for (size_t k = 0; k < num_outputs; ++k) {
        Expr& y = outs[n + k];
        if (out_dirs[k] != 0) {
            int64_t length = ctx.static_shape(y, "a scan output")[0];
            std::vector<int64_t> reversed;
            for (int64_t i = length - 1; i >= 0; --i) reversed.push_back(i);
            auto attrs = make_ref<ops::TakeAttrs>();
            y = ctx.call("take", {y, ctx.constant_int64(reversed, {length})}, attrs);
        }
        int64_t rank = ctx.rank(y);
        int64_t axis = ctx.normalize_axis(out_axes[k], rank, "scan_output_axes");
        if (axis != 0) {
            std::vector<int64_t> perm;
            for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
            perm.push_back(0);
            for (int64_t d = axis + 1; d < rank; ++d) perm.push_back(d);
            auto attrs = make_ref<ops::TransposeAttrs>();
            const_cast<ops::TransposeAttrs*>(attrs.get())->axes = perm;
            y = ctx.call("transpose", {y}, attrs);
        }
    }
    return outs;
}

// Scan (opset 8): the inputs and outputs carry a leading batch axis, each batch element scanned
// on its own (the same body, one loop per element; the batch must be static); scan inputs are
// [batch, sequence, ...]. sequence_lens, when given, must be the full length everywhere.
Exprs convert_scan8(ConvertContext& ctx) {
    int64_t num_scan = ctx.attr_int("num_scan_inputs", 0);
    int64_t num_states = static_cast<int64_t>(ctx.num_inputs()) - 1 - num_scan;
    if (num_scan < 1 || num_states < 0) {
        ctx.error() << "num_scan_inputs " << num_scan << " does not fit its " << ctx.num_inputs()
                    << " input(s)";
    }
    Exprs states(ctx.inputs().begin() + 1, ctx.inputs().begin() + 1 + num_states);
    Exprs scans(ctx.inputs().begin() + 1 + num_states, ctx.inputs().end());
    int64_t batch = -1;
    for (const Exprs* group : {&states, &scans}) {
        for (const auto& v : *group) {
            std::vector<int64_t> shape = ctx.static_shape(v, "a state or scan input");
            if (shape.empty()) ctx.error() << "the states and scan inputs need a batch axis";
            if (batch >= 0 && shape[0] != batch) {
                ctx.error() << "the inputs' batch sizes differ: " << batch << " and " << shape[0];
            }
            batch = shape[0];
        }
    }
    int64_t length = ctx.static_shape(scans[0], "a scan input").at(1);
    if (Expr lens = ctx.optional_input(0); lens.defined()) {
        for (int64_t l : ctx.const_ints(lens, "sequence_lens")) {
            if (l != length) {
                ctx.error() << "sequence_lens " << l << " shorter than the scan inputs' length "
                            << length << " is not supported";
            }
        }
    }
    std::vector<int64_t> dirs = ctx.attr_ints("directions", std::vector<int64_t>(num_scan, 0));
    if (static_cast<int64_t>(dirs.size()) != num_scan) {
        ctx.error() << "attribute 'directions' must have " << num_scan << " value(s)";
    }
    auto element = [&](const Expr& x, int64_t b) {
        auto attrs = make_ref<ops::TakeAttrs>();
        return ctx.call("take", {x, ctx.constant_int64({b}, {})}, attrs);
    };
    SubgraphFunction body;
    std::vector<Exprs> per_batch;
    for (int64_t b = 0; b < batch; ++b) {
        Exprs s, x;
        for (const auto& v : states) s.push_back(element(v, b));
        for (const auto& v : scans) x.push_back(element(v, b));
        per_batch.push_back(scan_loop(ctx, s, x, std::vector<int64_t>(num_scan, 0), dirs, &body));
    }
    // Each output's batch elements stacked again.
    Exprs outs;
    for (size_t k = 0; k < per_batch[0].size(); ++k) {
        Exprs parts;
        for (const auto& one : per_batch) parts.push_back(expand_dims(ctx, one[k], 0));
        auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
        a->axis = 0;
        outs.push_back(parts.size() == 1 ? parts[0] : ctx.call("concatenate", parts, attrs));
    }
    return outs;
}

// SequenceMap: a loop over the first sequence's positions; the body gets element i of each
// sequence input (and each tensor input as it is) and its outputs are appended to the output
// sequences, which start empty.
Exprs convert_sequence_map(ConvertContext& ctx) {
    const ::onnx::GraphProto& g = ctx.attr_graph("body");
    Exprs inputs = ctx.inputs();
    if (static_cast<int>(inputs.size()) != g.input_size()) {
        ctx.error() << "the body takes " << g.input_size() << " input(s), the node gives "
                    << inputs.size();
    }
    if (!inputs[0]->type.is<graph::SequenceType>()) ctx.error() << "input 0 must be a sequence";
    Exprs initial;
    for (const auto& out : g.output()) {
        std::optional<DataType> dtype = out.type().has_tensor_type()
                                            ? dtype_from_onnx(out.type().tensor_type().elem_type())
                                            : std::nullopt;
        if (!dtype) ctx.error() << "the body's output '" << out.name() << "' must be a tensor";
        initial.push_back(ops::make_empty_sequence(*dtype, ctx.loc()));
    }
    std::vector<Type> carried = types_of(initial);
    size_t n = carried.size();
    SubgraphFunction body = loop_body(
        ctx, g, carried, types_of(inputs),
        [&](const std::vector<Ref<graph::Var>>& params) {
            Exprs bound;
            for (size_t k = 0; k < inputs.size(); ++k) {
                Expr value = params[2 + n + k];
                if (auto* st = value->type.as<graph::SequenceType>()) {
                    value = ops::make_sequence_at(value, params[0], sequence_element_type(ctx, *st),
                                                  ctx.loc());
                }
                bound.push_back(value);
            }
            return bound;
        },
        [&](Exprs outs, const std::vector<Ref<graph::Var>>& params) {
            Exprs results = {ctx.constant_scalar(DataType::bool_(), 1)};
            for (size_t k = 0; k < outs.size() && k < n; ++k) {
                results.push_back(ctx.call("seq.insert", {params[2 + k], outs[k]}));
            }
            return results;
        });
    std::vector<Type> known_types = types_of(inputs);
    for (const auto& c : body.captured) known_types.push_back(c->type);
    Type result = loop_result(ctx, body, carried, known_types);
    Exprs constants = inputs;
    constants.insert(constants.end(), body.captured.begin(), body.captured.end());
    Expr call = ops::make_loop(ctx.call("seq.length", {inputs[0]}),
                               ctx.constant_scalar(DataType::bool_(), 1), initial, constants,
                               body.name, result, ctx.loc());
    return items(ctx, call);
}

}  // namespace anvil::frontend
