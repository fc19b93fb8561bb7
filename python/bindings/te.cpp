// Tensor-expression bindings: expressions, placeholder/compute/reduce_axis, reductions,
// schedules and their primitives, lower and build.
#include <pybind11/functional.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "codegen/target.h"
#include "driver/build.h"
#include "ir/expr.h"
#include "te/math.h"
#include "te/reduction.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "tir/printer.h"

namespace anvil::python {

namespace {

// Handles with const nodes do not suit pybind11 holders; these small wrappers carry them.
struct PyIterVar {
    Ref<IterVar> iv;
};
struct PyPrimFunc {
    Ref<tir::PrimFunc> f;
};

PrimExpr to_expr(const py::handle& h) {
    if (py::isinstance<PrimExpr>(h)) return h.cast<PrimExpr>();
    if (py::isinstance<PyIterVar>(h)) return PrimExpr(h.cast<PyIterVar>().iv->var);
    if (py::isinstance<py::bool_>(h)) return make_bool(h.cast<bool>());
    if (py::isinstance<py::int_>(h)) {
        auto v = h.cast<int64_t>();
        if (v >= INT32_MIN && v <= INT32_MAX) return PrimExpr(static_cast<int>(v));
        return make_int(DataType::int64(), v);
    }
    if (py::isinstance<py::float_>(h)) return PrimExpr(static_cast<float>(h.cast<double>()));
    throw UserError("expected an expression, an axis or a number, got " +
                    py::str(h.get_type().attr("__name__")).cast<std::string>());
}

std::vector<PrimExpr> to_exprs(const py::handle& h) {
    std::vector<PrimExpr> out;
    if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
        for (auto item : h) out.push_back(to_expr(item));
    } else {
        out.push_back(to_expr(h));
    }
    return out;
}

DataType parse_dtype(const std::string& text) {
    DataType t;
    if (!DataType::parse(text, &t)) throw UserError("unknown dtype '" + text + "'");
    return t;
}

std::vector<Ref<IterVar>> to_axes(const py::handle& h) {
    std::vector<Ref<IterVar>> out;
    if (py::isinstance<PyIterVar>(h)) {
        out.push_back(h.cast<PyIterVar>().iv);
    } else {
        for (auto item : h) out.push_back(item.cast<PyIterVar>().iv);
    }
    return out;
}

py::list wrap_axes(const std::vector<Ref<IterVar>>& axes) {
    py::list out;
    for (const auto& a : axes) out.append(PyIterVar{a});
    return out;
}

std::string expr_str(const PrimExpr& e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

py::object shape_to_python(const std::vector<PrimExpr>& shape) {
    py::list out;
    for (const auto& d : shape) {
        if (const auto* imm = d.as<IntImm>())
            out.append(py::int_(imm->value));
        else
            out.append(py::cast(d));
    }
    return py::tuple(out);
}

// Binds the arithmetic operators on a class whose values convert with to_expr.
template <typename C>
void def_arith(C& cls) {
    using H = const py::object&;
    cls.def("__add__", [](H a, H b) { return to_expr(a) + to_expr(b); })
        .def("__radd__", [](H a, H b) { return to_expr(b) + to_expr(a); })
        .def("__sub__", [](H a, H b) { return to_expr(a) - to_expr(b); })
        .def("__rsub__", [](H a, H b) { return to_expr(b) - to_expr(a); })
        .def("__mul__", [](H a, H b) { return to_expr(a) * to_expr(b); })
        .def("__rmul__", [](H a, H b) { return to_expr(b) * to_expr(a); })
        .def("__truediv__", [](H a, H b) { return to_expr(a) / to_expr(b); })
        .def("__rtruediv__", [](H a, H b) { return to_expr(b) / to_expr(a); })
        .def("__floordiv__", [](H a, H b) { return floordiv(to_expr(a), to_expr(b)); })
        .def("__rfloordiv__", [](H a, H b) { return floordiv(to_expr(b), to_expr(a)); })
        .def("__mod__", [](H a, H b) { return floormod(to_expr(a), to_expr(b)); })
        .def("__rmod__", [](H a, H b) { return floormod(to_expr(b), to_expr(a)); })
        .def("__neg__", [](H a) { return -to_expr(a); })
        .def("__lt__", [](H a, H b) { return to_expr(a) < to_expr(b); })
        .def("__le__", [](H a, H b) { return to_expr(a) <= to_expr(b); })
        .def("__gt__", [](H a, H b) { return to_expr(a) > to_expr(b); })
        .def("__ge__", [](H a, H b) { return to_expr(a) >= to_expr(b); });
}

te::Tensor compute_py(const py::object& shape, const py::function& f, const std::string& name) {
    std::vector<PrimExpr> dims = to_exprs(shape);
    std::vector<std::string> names;
    // Axis names from the lambda's parameter names, as TVM does.
    if (py::hasattr(f, "__code__")) {
        py::object code = f.attr("__code__");
        auto argc = code.attr("co_argcount").cast<size_t>();
        auto varnames = code.attr("co_varnames").cast<std::vector<std::string>>();
        if (argc == dims.size())
            names.assign(varnames.begin(), varnames.begin() + static_cast<long>(argc));
    }
    auto fn = [&f](std::span<const PrimExpr> idx) {
        py::tuple args(idx.size());
        for (size_t i = 0; i < idx.size(); ++i) args[i] = py::cast(idx[i]);
        return to_expr(f(*args));
    };
    return te::compute(dims, fn, name, python_loc(), names);
}

Ref<IterVar> reduce_axis_py(const py::object& dom, const std::string& name) {
    if (py::isinstance<py::tuple>(dom) || py::isinstance<py::list>(dom)) {
        auto bounds = to_exprs(dom);
        if (bounds.size() != 2)
            throw UserError("reduce_axis: the domain is an extent or a (min, max) pair");
        return te::reduce_axis(Range{bounds[0], bounds[1] - bounds[0]}, name);
    }
    return te::reduce_axis(to_expr(dom), name);
}

using Reduction = PrimExpr (*)(PrimExpr, const te::Axes&, PrimExpr);

template <Reduction R>
PrimExpr reduce_py(const py::object& e, const py::object& axis, const py::object& where) {
    return R(to_expr(e), to_axes(axis), where.is_none() ? PrimExpr() : to_expr(where));
}

std::vector<te::Tensor> to_tensors(const py::handle& h) {
    if (py::isinstance<te::Tensor>(h)) return {h.cast<te::Tensor>()};
    return h.cast<std::vector<te::Tensor>>();
}

// `checked` (PassContext config "tir.instrument_bound_checkers") adds to ANVIL_CHECKED.
driver::PipelineOptions pipeline_options(int opt_level, std::vector<std::string> disabled,
                                         bool checked = false) {
    driver::PipelineOptions o;
    o.opt_level = opt_level;
    o.disabled_passes = std::move(disabled);
    if (checked && o.checked == tir::BoundChecks::off) o.checked = tir::BoundChecks::on;
    return o;
}

}  // namespace

void init_te(py::module_& m) {
    py::class_<PrimExpr> expr(m, "PrimExpr", "A scalar expression of a tensor-expression body.");
    expr.def_property_readonly(
            "dtype", [](const PrimExpr& e) { return e.dtype().str(); },
            "The expression's type (\"float32\", \"int32\", \"bool\", ...).")
        .def("__str__", &expr_str)
        .def("__repr__", &expr_str)
        .def(
            "astype",
            [](const PrimExpr& e, const std::string& t) { return cast(parse_dtype(t), e); },
            py::arg("dtype"), "This expression converted to `dtype` (same as te.cast).");
    def_arith(expr);

    py::class_<PyIterVar> iv(m, "IterVar", "A loop axis: data-parallel or reduction.");
    iv.def_property_readonly(
          "var", [](const PyIterVar& v) { return PrimExpr(v.iv->var); },
          "The axis's loop variable as an expression.")
        .def_property_readonly(
            "dom",
            [](const PyIterVar& v) { return py::make_tuple(v.iv->dom.min, v.iv->dom.extent); },
            "The axis's range as (min, extent).")
        .def_property_readonly(
            "name", [](const PyIterVar& v) { return v.iv->var->name; }, "The axis's name.")
        .def("__repr__", [](const PyIterVar& v) { return "IterVar(" + v.iv->var->name + ")"; })
        .def("__hash__", [](const PyIterVar& v) { return reinterpret_cast<uintptr_t>(v.iv.get()); })
        .def("__eq__", [](const PyIterVar& a, const py::object& b) {
            return py::isinstance<PyIterVar>(b) && a.iv.same_as(b.cast<PyIterVar>().iv);
        });
    def_arith(iv);

    py::class_<te::Operation, std::unique_ptr<te::Operation, py::nodelete>>(m, "Operation");
    py::class_<te::Tensor> tensor(m, "Tensor", "The output of a placeholder or compute.");
    tensor.def_property_readonly("name", &te::Tensor::name, "The tensor's name.")
        .def_property_readonly(
            "shape", [](const te::Tensor& t) { return shape_to_python(t.shape()); },
            "The dimensions: ints, or PrimExprs for symbolic ones.")
        .def_property_readonly(
            "dtype", [](const te::Tensor& t) { return t.dtype().str(); },
            "The element type (\"float32\", ...).")
        .def_property_readonly("ndim", &te::Tensor::ndim, "The number of dimensions.")
        // TVM's spelling: C.op.axis, C.op.reduce_axis; here `op` is the tensor itself.
        .def_property_readonly(
            "op", [](py::object self) { return self; },
            "The tensor itself (TVM's C.op; C.op.axis works as in TVM).")
        .def_property_readonly(
            "axis", [](const te::Tensor& t) { return wrap_axes(t.axis()); },
            "The data-parallel axes of a compute, one IterVar per dimension.")
        .def_property_readonly(
            "reduce_axis", [](const te::Tensor& t) { return wrap_axes(t.reduce_axis()); },
            "The reduction axes of a compute whose body is a sum/max/min.")
        .def("__getitem__",
             [](const te::Tensor& t, const py::object& idx) { return t(to_exprs(idx)); })
        .def("__call__", [](const te::Tensor& t, py::args idx) { return t(to_exprs(idx)); })
        .def("__hash__",
             [](const te::Tensor& t) { return reinterpret_cast<uintptr_t>(t.op.get()); })
        .def("__eq__",
             [](const te::Tensor& a, const py::object& b) {
                 return py::isinstance<te::Tensor>(b) && a.same_as(b.cast<te::Tensor>());
             })
        .def("__repr__", [](const te::Tensor& t) { return "Tensor(" + t.name() + ")"; });

    m.def(
        "te_placeholder",
        [](const py::object& shape, const std::string& dtype, const std::string& name) {
            return te::placeholder(to_exprs(shape), parse_dtype(dtype), name, python_loc());
        },
        py::arg("shape"), py::arg("dtype") = "float32", py::arg("name") = "placeholder",
        "placeholder(shape, dtype, name): an input tensor.");
    m.def("te_compute", &compute_py, py::arg("shape"), py::arg("fcompute"),
          py::arg("name") = "compute",
          "compute(shape, lambda i, j: ..., name): out[i, j] = fcompute(i, j); the "
          "lambda's parameter names name the axes.");
    m.def(
        "te_reduce_axis",
        [](const py::object& dom, const std::string& name) {
            return PyIterVar{reduce_axis_py(dom, name)};
        },
        py::arg("dom"), py::arg("name") = "k",
        "reduce_axis(extent or (min, max), name): a reduction axis for sum/max/min.");
    m.def("te_sum", &reduce_py<te::sum>, py::arg("expr"), py::arg("axis"),
          py::arg("where") = py::none(),
          "sum(expr, axis, where=None): the sum over reduction axes (one or a list).");
    m.def("te_max", &reduce_py<te::max>, py::arg("expr"), py::arg("axis"),
          py::arg("where") = py::none(),
          "max(expr, axis, where=None): the maximum over reduction axes (one or a list).");
    m.def("te_min", &reduce_py<te::min>, py::arg("expr"), py::arg("axis"),
          py::arg("where") = py::none(),
          "min(expr, axis, where=None): the minimum over reduction axes (one or a list).");
    m.def(
        "te_const",
        [](const py::object& value, const std::string& dtype) {
            return make_const(parse_dtype(dtype), value.cast<double>());
        },
        py::arg("value"), py::arg("dtype") = "float32",
        "const(value, dtype=\"float32\"): a constant of type dtype.");
    m.def(
        "te_var",
        [](const std::string& name, const std::string& dtype) {
            return PrimExpr(make_var(name, parse_dtype(dtype)));
        },
        py::arg("name") = "v", py::arg("dtype") = "int32",
        "var(name=\"v\", dtype=\"int32\"): a scalar variable (a symbolic size or parameter).");
    m.def(
        "te_if_then_else",
        [](const py::object& c, const py::object& t, const py::object& f) {
            return te::if_then_else(to_expr(c), to_expr(t), to_expr(f));
        },
        py::arg("cond"), py::arg("t"), py::arg("f"),
        "if_then_else(cond, t, f): t where cond holds, else f; only the chosen one is evaluated.");
    m.def(
        "te_cast",
        [](const std::string& t, const py::object& e) { return cast(parse_dtype(t), to_expr(e)); },
        py::arg("dtype"), py::arg("value"), "cast(dtype, value): value converted to dtype.");
#define ANVIL_UNARY(name, doc) \
    m.def(                     \
        "te_" #name, [](const py::object& x) { return te::name(to_expr(x)); }, py::arg("x"), doc);
    ANVIL_UNARY(exp, "exp(x): e to the power x, elementwise on a float expression.")
    ANVIL_UNARY(log, "log(x): the natural logarithm of x.")
    ANVIL_UNARY(sqrt, "sqrt(x): the square root of x.")
    ANVIL_UNARY(rsqrt, "rsqrt(x): 1 / sqrt(x).")
    ANVIL_UNARY(tanh, "tanh(x): the hyperbolic tangent of x.")
    ANVIL_UNARY(sigmoid, "sigmoid(x): 1 / (1 + exp(-x)).")
    ANVIL_UNARY(erf, "erf(x): the Gauss error function of x.")
    ANVIL_UNARY(abs, "abs(x): the absolute value of x (integer or float).")
    ANVIL_UNARY(floor, "floor(x): the largest integer value not above x (same type as x).")
    ANVIL_UNARY(ceil, "ceil(x): the smallest integer value not below x (same type as x).")
    ANVIL_UNARY(round, "round(x): x rounded to the nearest integer value, ties to even.")
#undef ANVIL_UNARY
    m.def(
        "te_pow",
        [](const py::object& x, const py::object& y) { return te::pow(to_expr(x), to_expr(y)); },
        py::arg("x"), py::arg("y"), "power(x, y): x to the power y.");
    m.def(
        "te_maximum",
        [](const py::object& x, const py::object& y) { return max(to_expr(x), to_expr(y)); },
        py::arg("x"), py::arg("y"),
        "maximum(x, y): the larger of two expressions (elementwise; te.max reduces).");
    m.def(
        "te_minimum",
        [](const py::object& x, const py::object& y) { return min(to_expr(x), to_expr(y)); },
        py::arg("x"), py::arg("y"),
        "minimum(x, y): the smaller of two expressions (elementwise; te.min reduces).");

    py::class_<te::StageRef>(m, "Stage", "s[C]: one stage of a schedule and its primitives.")
        .def_property_readonly("name", &te::StageRef::name, "The name of the stage's tensor.")
        .def(
            "split",
            [](te::StageRef& st, const PyIterVar& axis, const py::object& factor,
               const py::object& nparts) {
                if (factor.is_none() == nparts.is_none())
                    throw UserError("split: give exactly one of factor and nparts");
                auto [outer, inner] = factor.is_none()
                                          ? st.split_nparts(axis.iv, nparts.cast<int64_t>())
                                          : st.split(axis.iv, factor.cast<int64_t>());
                return py::make_tuple(PyIterVar{outer}, PyIterVar{inner});
            },
            py::arg("axis"), py::arg("factor") = py::none(), py::arg("nparts") = py::none(),
            "split(axis, factor=None, nparts=None) -> (outer, inner): splits a loop into two, "
            "the inner of extent `factor` or the outer of extent `nparts` (give one).")
        .def(
            "tile",
            [](te::StageRef& st, const PyIterVar& x, const PyIterVar& y, int64_t xf, int64_t yf) {
                return py::tuple(wrap_axes(st.tile(x.iv, y.iv, xf, yf)));
            },
            py::arg("x_parent"), py::arg("y_parent"), py::arg("x_factor"), py::arg("y_factor"),
            "tile(x, y, x_factor, y_factor) -> (xo, yo, xi, yi): splits two loops and orders "
            "them outer, outer, inner, inner.")
        .def(
            "reorder", [](te::StageRef& st, py::args axes) { st.reorder(to_axes(axes)); },
            "reorder(*axes): puts these loops in this order (the others stay where they are).")
        .def(
            "fuse",
            [](te::StageRef& st, py::args axes) { return PyIterVar{st.fuse(to_axes(axes))}; },
            "fuse(*axes) -> IterVar: merges adjacent loops, outermost first, into one.")
        .def(
            "vectorize", [](te::StageRef& st, const PyIterVar& a) { st.vectorize(a.iv); },
            py::arg("axis"),
            "Makes `axis` (the innermost loop, not a reduction) into vector operations.")
        .def(
            "parallel", [](te::StageRef& st, const PyIterVar& a) { st.parallel(a.iv); },
            py::arg("axis"), "Runs the iterations of `axis` on the runtime's thread pool.")
        .def(
            "unroll", [](te::StageRef& st, const PyIterVar& a) { st.unroll(a.iv); },
            py::arg("axis"), "Unrolls `axis` completely (when its extent is a constant).")
        .def(
            "bind",
            [](te::StageRef& st, const PyIterVar& a, const std::string& tag) {
                st.bind(a.iv, tag);
            },
            py::arg("axis"), py::arg("thread_tag"),
            "Binds `axis` to a GPU thread index (\"blockIdx.x\", \"threadIdx.x\", ...).")
        .def(
            "compute_at",
            [](te::StageRef& st, te::StageRef& parent, const PyIterVar& a) {
                st.compute_at(parent, a.iv);
            },
            py::arg("parent"), py::arg("axis"),
            "compute_at(s[D], axis): computes this stage inside D's loop `axis`, only the part "
            "that iteration needs.")
        .def("compute_inline", &te::StageRef::compute_inline,
             "Substitutes this stage's expression into its consumers (no buffer of its own).")
        .def("compute_root", &te::StageRef::compute_root,
             "Computes this stage in its own loop nest at the top (undoes compute_at/inline).")
        .def_property_readonly(
            "op", [](te::StageRef& st) { return py::cast(st); },
            "The stage itself (TVM's s[C].op; s[C].op.axis works as in TVM).")
        .def_property_readonly(
            "axis", [](te::StageRef& st) { return wrap_axes(st.op_axis()); },
            "The data-parallel root axes of the stage's op (before any split or fuse).")
        .def_property_readonly(
            "reduce_axis", [](te::StageRef& st) { return wrap_axes(st.op_reduce_axis()); },
            "The reduction root axes of the stage's op.")
        .def_property_readonly(
            "leaf_iter_vars", [](te::StageRef& st) { return wrap_axes(st.leaf_axes()); },
            "The current loops of the stage, outermost first (after splits, fuses, reorders).");

    py::class_<te::Schedule>(m, "Schedule", "How a tensor-expression computation becomes loops.")
        .def(
            "__getitem__",
            [](te::Schedule& s, const py::object& key) {
                if (py::isinstance<py::str>(key)) return s[key.cast<std::string>()];
                return s[key.cast<te::Tensor>()];
            },
            py::keep_alive<0, 1>())
        .def(
            "cache_read",
            [](te::Schedule& s, const te::Tensor& t, const std::string& scope,
               const py::object& readers) { return s.cache_read(t, scope, to_tensors(readers)); },
            py::arg("tensor"), py::arg("scope"), py::arg("readers"),
            "cache_read(T, scope, readers) -> tensor: a copy of T in `scope` that `readers` "
            "(tensors) read instead of T; place it with compute_at.")
        .def("cache_write", &te::Schedule::cache_write, py::arg("tensor"), py::arg("scope"),
             "cache_write(C, scope) -> tensor: computes C into a stage in `scope` that C then "
             "copies from; schedule the new stage with compute_at.")
        .def(
            "rfactor",
            [](te::Schedule& s, const te::Tensor& t, const PyIterVar& axis, int factor_axis) {
                return s.rfactor(t, axis.iv, factor_axis);
            },
            py::arg("tensor"), py::arg("axis"), py::arg("factor_axis") = 0,
            "rfactor(C, axis, factor_axis=0) -> tensor: factors the reduction loop `axis` of C "
            "(made from C's reduction axes by splits) out into a new stage C.rf, whose extra "
            "dimension at `factor_axis` holds a partial reduction per value of `axis`; C then "
            "reduces over it. The new dimension is an ordinary loop of C.rf: reorder it inward "
            "and vectorize it, or parallelize it.")
        .def_property_readonly("outputs", &te::Schedule::outputs,
                               "The output tensors the schedule was created for.")
        .def("__str__", [](const te::Schedule& s) { return te::print_record(s.record()); });
    m.def("te_create_schedule",
          [](const py::object& outputs) { return te::create_schedule(to_tensors(outputs)); });

    py::class_<PyPrimFunc>(m, "PrimFunc", "A function in the loop IR.")
        .def_property_readonly("name", [](const PyPrimFunc& f) { return f.f->name; })
        .def("__str__", [](const PyPrimFunc& f) { return tir::print(f.f); })
        .def("astext", [](const PyPrimFunc& f) { return tir::print(f.f); });
    m.def(
        "lower",
        [](const te::Schedule& s, const py::object& args, const std::string& name,
           const std::string& target, int opt_level, std::vector<std::string> disabled,
           bool checked) {
            Target t = target.empty() ? Target::host() : Target::parse(target);
            return PyPrimFunc{
                driver::lower(s, to_tensors(args), name, t,
                              pipeline_options(opt_level, std::move(disabled), checked))};
        },
        py::arg("schedule"), py::arg("args"), py::arg("name") = "main", py::arg("target") = "",
        py::arg("opt_level") = 3, py::arg("disabled_passes") = std::vector<std::string>{},
        py::arg("checked") = false);
    m.def(
        "build_te",
        [](const te::Schedule& s, const py::object& args, const std::string& target,
           const std::string& name, int opt_level, std::vector<std::string> disabled,
           bool checked) {
            return driver::build(s, to_tensors(args), target, name,
                                 pipeline_options(opt_level, std::move(disabled), checked));
        },
        py::arg("schedule"), py::arg("args"), py::arg("target") = "llvm -mcpu=native",
        py::arg("name") = "main", py::arg("opt_level") = 3,
        py::arg("disabled_passes") = std::vector<std::string>{}, py::arg("checked") = false);
}

}  // namespace anvil::python
