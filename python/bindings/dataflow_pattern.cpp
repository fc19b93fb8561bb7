// The dataflow pattern language from Python (anvil.graph.dataflow_pattern, TVM's
// relay.dataflow_pattern): patterns, matching, rewriting with Python callbacks, partitioning.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph/parser.h"
#include "graph/pattern/matcher.h"
#include "graph/pattern/partition.h"
#include "graph/pattern/rewrite.h"

namespace anvil::python {

namespace {

using graph::DFPattern;

// A has_attr value from Python: bool, int, float, str, or a list of ints.
DFPattern::AttrValue attr_value(const std::string& name, const py::handle& v) {
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
    if (py::isinstance<py::int_>(v)) return v.cast<int64_t>();
    if (py::isinstance<py::float_>(v)) return v.cast<double>();
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::vector<int64_t> ints;
        for (const auto& item : v) {
            if (!py::isinstance<py::int_>(item) || py::isinstance<py::bool_>(item)) {
                throw UserError("has_attr: attribute '" + name +
                                "': a list value must hold integers, not " +
                                py::repr(v).cast<std::string>());
            }
            ints.push_back(item.cast<int64_t>());
        }
        return ints;
    }
    throw UserError("has_attr: attribute '" + name +
                    "': a value is a bool, int, float, str or "
                    "a list of ints, not " +
                    py::repr(v).cast<std::string>());
}

DFPattern pattern_of(const py::handle& p, const std::string& what) {
    if (!py::isinstance<DFPattern>(p)) {
        throw UserError(what + " must be a dataflow pattern (is_op, wildcard, ...), not " +
                        py::repr(p).cast<std::string>());
    }
    return p.cast<DFPattern>();
}

std::vector<DFPattern> patterns_of(const py::handle& items, const std::string& what) {
    std::vector<DFPattern> out;
    for (const auto& a : items) out.push_back(pattern_of(a, what));
    return out;
}

std::string key_of(const py::handle& k, const std::string& what) {
    if (!py::isinstance<py::str>(k)) {
        throw UserError(what + ": the names are str, not " + py::repr(k).cast<std::string>());
    }
    return k.cast<std::string>();
}

graph::FunctionAttrs function_attrs(const py::object& attrs) {
    graph::FunctionAttrs out;
    if (attrs.is_none()) return out;
    if (!py::isinstance<py::dict>(attrs)) {
        throw UserError("partition: attrs must be a dict of str to str, not " +
                        py::repr(attrs).cast<std::string>());
    }
    for (const auto& [k, v] : attrs.cast<py::dict>()) {
        std::string name = key_of(k, "partition attrs");
        if (!py::isinstance<py::str>(v)) {
            throw UserError("partition: attribute '" + name +
                            "' must be a str (function attributes are strings)");
        }
        out[name] = v.cast<std::string>();
    }
    return out;
}

std::function<bool(const graph::Expr&)> check_of(const py::object& check) {
    if (check.is_none()) return nullptr;
    // Python truth, as `if check(root):` reads it.
    return [check](const graph::Expr& e) { return py::bool_(check(PyExpr{e})).cast<bool>(); };
}

// A Python DFPatternCallback as a C++ rewrite: its .pattern, .callback and .rewrite_once.
class PyRewrite : public graph::DFPatternRewrite {
public:
    explicit PyRewrite(py::object callback) : callback_(std::move(callback)) {
        py::object pattern = py::getattr(callback_, "pattern", py::none());
        if (pattern.is_none() || !py::isinstance<DFPattern>(pattern)) {
            throw UserError("rewrite: " + py::repr(callback_).cast<std::string>() +
                            " has no pattern (set self.pattern in its __init__)");
        }
        pattern_ = pattern.cast<DFPattern>();
        rewrite_once_ = py::getattr(callback_, "rewrite_once", py::bool_(false)).cast<bool>();
    }
    graph::Expr callback(const graph::Expr& pre, const graph::Expr& post,
                         const graph::NodeMap& node_map) const override {
        py::object out = callback_.attr("callback")(PyExpr{pre}, PyExpr{post}, node_map);
        if (!py::isinstance<PyExpr>(out)) {
            throw UserError("rewrite: the callback of " + graph::pattern_str(pattern_) +
                            " returned " + py::repr(out).cast<std::string>() +
                            ", not an expression (return post to keep the match)");
        }
        return out.cast<PyExpr>().e;
    }

private:
    py::object callback_;
};

}  // namespace

void init_dataflow_pattern(py::module_& m) {
    py::class_<DFPattern>(m, "DFPattern", "A dataflow pattern (anvil.graph.dataflow_pattern).")
        .def(
            "__call__",
            [](const DFPattern& p, const py::args& args) {
                return p(patterns_of(args, "an argument of a call pattern"));
            },
            "A call of this op pattern with these argument patterns.")
        .def("__or__", [](const DFPattern& a,
                          const py::object& b) { return a | pattern_of(b, "the right side of |"); })
        .def(
            "has_attr",
            [](const DFPattern& p, const py::dict& attrs) {
                std::vector<std::pair<std::string, DFPattern::AttrValue>> values;
                for (const auto& [k, v] : attrs) {
                    std::string name = key_of(k, "has_attr");
                    values.emplace_back(name, attr_value(name, v));
                }
                return p.has_attr(std::move(values));
            },
            py::arg("attrs"))
        .def(
            "has_type",
            [](const DFPattern& p, const py::object& type) {
                // A type as text ("Tensor[(1, 3), float32]", as Expr.checked_type gives it).
                return p.has_type(graph::parse_type(py::str(type).cast<std::string>()));
            },
            py::arg("type"))
        .def(
            "has_dtype",
            [](const DFPattern& p, const std::string& dtype) {
                DataType t;
                if (!DataType::parse(dtype, &t))
                    throw UserError("has_dtype: unknown dtype '" + dtype + "'");
                return p.has_dtype(t);
            },
            py::arg("dtype"))
        .def(
            "has_shape",
            [](const DFPattern& p, const std::vector<int64_t>& shape) {
                return p.has_shape(shape);
            },
            py::arg("shape"))
        .def(
            "optional",
            [](const DFPattern& p, const py::function& wrap) {
                return p.optional([&](const DFPattern& x) {
                    return pattern_of(wrap(x), "what optional's function returns");
                });
            },
            py::arg("option_constructor"))
        .def(
            "match", [](const DFPattern& p, const PyExpr& e) { return graph::match(p, e.e); },
            py::arg("expr"))
        .def(
            "partition",
            [](const DFPattern& p, const PyExpr& e, const py::object& attrs,
               const py::object& check) {
                return PyExpr{graph::partition(p, e.e, function_attrs(attrs), check_of(check))};
            },
            py::arg("expr"), py::arg("attrs") = py::none(), py::arg("check") = py::none())
        .def("__str__", [](const DFPattern& p) { return graph::pattern_str(p); })
        .def("__repr__", [](const DFPattern& p) { return graph::pattern_str(p); });

    py::class_<graph::NodeMap>(m, "NodeMap", "What each pattern of a match matched.")
        .def("__getitem__",
             [](const graph::NodeMap& map, const DFPattern& p) {
                 if (!map.contains(p)) throw py::key_error(graph::pattern_str(p));
                 std::vector<PyExpr> out;
                 for (const auto& e : map[p]) out.push_back(PyExpr{e});
                 return out;
             })
        .def("__contains__",
             [](const graph::NodeMap& map, const DFPattern& p) { return map.contains(p); });

    m.def("dfp_wildcard", &graph::wildcard);
    m.def("dfp_is_op", &graph::is_op, py::arg("op_name"));
    m.def("dfp_is_constant", &graph::is_constant);
    m.def("dfp_is_var", &graph::is_var, py::arg("name") = "");
    m.def(
        "dfp_is_expr", [](const PyExpr& e) { return graph::is_expr(e.e); }, py::arg("expr"));
    m.def(
        "dfp_is_tuple",
        [](const py::list& fields) {
            return graph::is_tuple(patterns_of(fields, "a field of is_tuple"));
        },
        py::arg("fields"));
    m.def(
        "dfp_is_tuple_get_item",
        [](const py::object& tuple, int index) {
            return graph::is_tuple_get_item(pattern_of(tuple, "the tuple of is_tuple_get_item"),
                                            index);
        },
        py::arg("tuple"), py::arg("index") = -1);
    m.def(
        "dfp_dominates",
        [](const py::object& parent, const py::object& path, const py::object& child) {
            return graph::dominates(pattern_of(parent, "the parent of dominates"),
                                    pattern_of(path, "the path of dominates"),
                                    pattern_of(child, "the child of dominates"));
        },
        py::arg("parent"), py::arg("path"), py::arg("child"));
    m.def(
        "dfp_rewrite",
        [](const py::list& callbacks, const PyExpr& e) {
            std::vector<Ref<graph::DFPatternRewrite>> rewrites;
            for (const auto& c : callbacks) {
                rewrites.push_back(make_ref<PyRewrite>(py::reinterpret_borrow<py::object>(c)));
            }
            return PyExpr{graph::rewrite(rewrites, e.e)};
        },
        py::arg("callbacks"), py::arg("expr"));
}

}  // namespace anvil::python
