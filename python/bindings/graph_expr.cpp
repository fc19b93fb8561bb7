// Building graph expressions from Python: variables, constants, op calls with keyword attributes,
// tuples and functions (anvil.graph.var, anvil.graph.op.nn.conv2d(...), ...).
#include <pybind11/stl.h>

#include <set>

#include "bindings.h"
#include "graph/expr.h"
#include "graph/module.h"
#include "graph/printer.h"
#include "graph/type.h"
#include "ops/op_table.h"

namespace anvil::python {

namespace {

// Writes Python keyword arguments into an op's attribute struct through its visit_fields, so
// only fields the op declares can be set, each with its own kind of value.
class KwargsWriter : public graph::AttrVisitor {
public:
    KwargsWriter(const py::dict& kwargs, std::string op) : kwargs_(kwargs), op_(std::move(op)) {}
    void visit(const char* name, int64_t* v) override { set(name, v); }
    void visit(const char* name, double* v) override { set(name, v); }
    void visit(const char* name, bool* v) override { set(name, v); }
    void visit(const char* name, std::string* v) override { set(name, v); }
    // Nested sequences read row by row: TVM's pad_width=((0, 0), (1, 1)).
    void visit(const char* name, std::vector<int64_t>* v) override {
        if (!kwargs_.contains(name)) return;
        used_.insert(name);
        try {
            *v = flattened(kwargs_[name], name).cast<std::vector<int64_t>>();
        } catch (const py::cast_error&) {
            wrong_kind(name);
        }
    }
    void visit(const char* name, std::vector<double>* v) override { set(name, v); }
    void visit(const char* name, std::vector<std::string>* v) override { set(name, v); }
    void visit(const char* name, DataType* v) override {
        if (!kwargs_.contains(name)) return;
        used_.insert(name);
        auto text = py::str(kwargs_[name]).cast<std::string>();
        if (!DataType::parse(text, v))
            throw UserError(op_ + ": attribute '" + name + "': unknown dtype '" + text + "'");
    }
    // A shape from Python is a list of integers (symbolic dimensions come only from the text
    // format and the importers).
    void visit(const char* name, std::vector<PrimExpr>* v) override {
        std::vector<int64_t> dims;
        set(name, &dims);
        if (!kwargs_.contains(name)) return;
        v->clear();
        for (int64_t d : dims) v->push_back(make_int(DataType::int64(), d));
    }
    void check_all_used() const {
        for (auto item : kwargs_) {
            auto key = item.first.cast<std::string>();
            if (!used_.count(key)) throw UserError(op_ + " has no attribute '" + key + "'");
        }
    }

private:
    template <typename T>
    void set(const char* name, T* v) {
        if (!kwargs_.contains(name)) return;
        used_.insert(name);
        try {
            *v = kwargs_[name].cast<T>();
        } catch (const py::cast_error&) {
            wrong_kind(name);
        }
    }
    [[noreturn]] void wrong_kind(const char* name) const {
        throw UserError(op_ + ": attribute '" + name + "' has the wrong kind of value (" +
                        py::str(kwargs_[name]).cast<std::string>() + ")");
    }
    // The rows of a sequence of sequences of one length, joined (anything else as it is);
    // UserError for rows of different lengths.
    py::object flattened(const py::handle& value, const char* name) const {
        auto sequence = [](const py::handle& h) {
            return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h);
        };
        if (!sequence(value) || py::len(value) == 0 || !sequence(value[py::int_(0)])) {
            return py::reinterpret_borrow<py::object>(value);
        }
        size_t width = py::len(value[py::int_(0)]);
        py::list out;
        for (const py::handle row : value) {
            if (!sequence(row) || py::len(row) != width) {
                throw UserError(op_ + ": attribute '" + name +
                                "' must be rows of one length, as ((0, 0), (1, 1))");
            }
            for (const py::handle leaf : row) out.append(leaf);
        }
        return out;
    }
    const py::dict& kwargs_;
    std::string op_;
    std::set<std::string> used_;
};

graph::Expr to_graph_expr(const py::handle& h) {
    if (py::isinstance<PyExpr>(h)) return h.cast<PyExpr>().e;
    // A number or an array becomes a constant: a Python float is float32 (the models' dtype), a
    // Python int int32 where it fits (as relay.const makes it: QNN's zero points are int32); a
    // NumPy scalar keeps its type and stays a scalar.
    py::object np = py::module_::import("numpy");
    py::object dtype = py::none();
    if (py::isinstance<py::float_>(h)) dtype = py::str("float32");
    if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) {
        py::int_ v = py::reinterpret_borrow<py::int_>(h);
        bool fits = v >= py::int_(INT32_MIN) && v <= py::int_(INT32_MAX);
        dtype = py::str(fits ? "int32" : "int64");
    }
    auto array = py::array::ensure(
        np.attr("require")(np.attr("asarray")(h, py::arg("dtype") = dtype), py::none(), "C"));
    if (!array) throw UserError("expected a graph expression, a number or an array");
    runtime::NDArray data = ndarray_from_numpy(array);
    runtime::NDArray owned = runtime::NDArray::empty(
        std::vector<int64_t>(data.shape().begin(), data.shape().end()), data.dtype());
    owned.copy_from(data.raw_data(), data.nbytes());
    return graph::make_constant(owned);
}

PyExpr call_op(const std::string& name, const py::tuple& args, const py::dict& kwargs) {
    const graph::Op* op = ops::op_table().find(name);
    if (!op) throw UserError("unknown op '" + name + "'");
    std::vector<graph::Expr> operands;
    for (auto a : args) {
        if (py::isinstance<py::list>(a) || py::isinstance<py::tuple>(a)) {
            // A list argument of a variadic op (concatenate) is a tuple.
            std::vector<graph::Expr> fields;
            for (auto f : a) fields.push_back(to_graph_expr(f));
            operands.push_back(graph::make_tuple(fields));
        } else {
            operands.push_back(to_graph_expr(a));
        }
    }
    Ref<graph::Attrs> attrs;
    if (op->make_default_attrs) {
        attrs = op->make_default_attrs()->clone();
        KwargsWriter writer(kwargs, name);
        const_cast<graph::Attrs*>(attrs.get())->visit_fields(writer);
        writer.check_all_used();
    } else if (!kwargs.empty()) {
        throw UserError(name + " takes no attributes");
    }
    return PyExpr{graph::make_call(*op, std::move(operands), attrs, python_loc())};
}

std::string expr_text(const PyExpr& e) {
    return graph::print(e.e);
}

}  // namespace

void init_graph_expr(py::module_& m) {
    py::class_<PyExpr> expr(m, "Expr", "A graph IR expression.");
    expr.def("__str__", &expr_text)
        .def("astext", &expr_text, "The expression in the graph IR's text form.")
        .def_property_readonly(
            "checked_type", [](const PyExpr& e) { return graph::type_str(e.e->type); },
            "The expression's inferred type as text, e.g. \"Tensor[(1, 4), float32]\".")
        .def("__getitem__",
             [](const PyExpr& e, int i) { return PyExpr{graph::make_tuple_get_item(e.e, i)}; })
        .def("__add__",
             [](const PyExpr& a, const py::object& b) {
                 return call_op("add", py::make_tuple(a, b), py::dict());
             })
        .def("__sub__",
             [](const PyExpr& a, const py::object& b) {
                 return call_op("subtract", py::make_tuple(a, b), py::dict());
             })
        .def("__mul__",
             [](const PyExpr& a, const py::object& b) {
                 return call_op("multiply", py::make_tuple(a, b), py::dict());
             })
        .def("__truediv__",
             [](const PyExpr& a, const py::object& b) {
                 return call_op("divide", py::make_tuple(a, b), py::dict());
             })
        .def("__neg__",
             [](const PyExpr& a) { return call_op("negative", py::make_tuple(a), py::dict()); });

    m.def(
        "graph_var",
        [](const std::string& name, const std::vector<int64_t>& shape, const std::string& dtype) {
            DataType t;
            if (!DataType::parse(dtype, &t)) throw UserError("unknown dtype '" + dtype + "'");
            return PyExpr{graph::make_var(name, graph::make_tensor_type(shape, t), python_loc())};
        },
        py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32");
    m.def("graph_const", [](const py::object& v) { return PyExpr{to_graph_expr(v)}; });
    m.def("graph_call", &call_op);
    m.def("graph_tuple", [](const std::vector<PyExpr>& fields) {
        std::vector<graph::Expr> f;
        for (const auto& e : fields) f.push_back(e.e);
        return PyExpr{graph::make_tuple(f)};
    });
    m.def("graph_function", [](const std::vector<PyExpr>& params, const PyExpr& body) {
        std::vector<Ref<graph::Var>> vars;
        for (const auto& p : params) {
            if (!p.e.is<graph::Var>()) throw UserError("function parameters must be graph.var");
            vars.push_back(p.e.cast<graph::Var>());
        }
        return PyExpr{graph::Expr(graph::make_function(vars, body.e))};
    });
    m.def("graph_module_from_expr", [](const PyExpr& f) {
        if (!f.e.is<graph::Function>())
            throw UserError("IRModule.from_expr expects a function (anvil.graph.function)");
        graph::IRModule mod;
        mod.functions["main"] = f.e.cast<graph::Function>();
        return mod;
    });
    m.def("graph_op_names", [] {
        std::vector<std::string> names;
        for (const auto& op : ops::op_table().all()) names.push_back(op->name);
        return names;
    });
}

}  // namespace anvil::python
