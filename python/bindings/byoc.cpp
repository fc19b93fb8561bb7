// Python bindings of the BYOC passes (TVM's relay.transform.MergeComposite, AnnotateTarget,
// and relay.op.contrib.get_pattern_table / register_op_attr("target.<compiler>")).
#include <pybind11/stl.h>

#include "bindings.h"
#include "codegen/external/external_compiler.h"
#include "graph/passes/passes.h"

namespace anvil::python {

namespace {

// A Python predicate on expressions as C++ sees one; Python truth, as `if check(e):` reads it.
std::function<bool(const graph::Expr&)> predicate_of(const py::object& f, const char* what) {
    if (f.is_none()) return nullptr;
    if (!PyCallable_Check(f.ptr())) {
        throw UserError(std::string(what) + " must be callable, not " +
                        py::repr(f).cast<std::string>());
    }
    return [f](const graph::Expr& e) { return py::bool_(f(PyExpr{e})).cast<bool>(); };
}

// (name, pattern[, check]) tuples, as TVM's pattern tables are written.
codegen::PatternTable table_of(const py::iterable& entries) {
    codegen::PatternTable table;
    for (const auto& item : entries) {
        py::tuple t;
        try {
            t = item.cast<py::tuple>();
        } catch (const py::cast_error&) {
            throw UserError(
                "MergeComposite: a pattern table entry must be a tuple (name, "
                "pattern[, check]), not " +
                py::repr(item).cast<std::string>());
        }
        if (t.size() < 2 || t.size() > 3 || !py::isinstance<py::str>(t[0]) ||
            !py::isinstance<graph::DFPattern>(t[1])) {
            throw UserError(
                "MergeComposite: a pattern table entry must be (name: str, pattern: "
                "DFPattern[, check]), not " +
                py::repr(item).cast<std::string>());
        }
        codegen::PatternTableEntry e{t[0].cast<std::string>(), t[1].cast<graph::DFPattern>(),
                                     nullptr};
        if (t.size() == 3) e.check = predicate_of(t[2], "a pattern table entry's check");
        table.push_back(std::move(e));
    }
    return table;
}

}  // namespace

void init_byoc(py::module_& m) {
    m.def(
        "byoc_pattern_table",
        [](const std::string& compiler, const std::string& target) {
            const codegen::ExternalCompiler& c = codegen::external_compiler(compiler);
            py::list out;
            for (const auto& e :
                 c.pattern_table(target.empty() ? Target::host() : Target::parse(target))) {
                auto check = e.check;
                py::object f = py::none();
                if (check) {
                    f = py::cpp_function([check](const PyExpr& x) { return check(x.e); });
                }
                out.append(py::make_tuple(e.name, e.pattern, f));
            }
            return out;
        },
        py::arg("compiler"), py::arg("target") = "");
    m.def(
        "byoc_merge_composite",
        [](const graph::IRModule& mod, const py::iterable& table) {
            return graph::merge_composite(mod, table_of(table));
        },
        py::arg("mod"), py::arg("pattern_table"));
    m.def(
        "byoc_annotate_target",
        [](const graph::IRModule& mod, const std::vector<std::string>& compilers) {
            return graph::annotate_target(mod, compilers);
        },
        py::arg("mod"), py::arg("compilers"));
    m.def(
        "byoc_register_support_check",
        [](const std::string& compiler, const std::string& op, const py::object& check) {
            // A built-in compiler's checks run inside compiles, on the compiler's own thread
            // without the GIL: only Python-defined compilers (annotated from Python) get Python
            // checks.
            if (codegen::find_external_compiler(compiler)) {
                throw UserError("register_op_attr: '" + compiler +
                                "' is a built-in external code generator, whose support checks "
                                "are its own; register checks under another compiler name");
            }
            auto pred = predicate_of(check, "a support check");
            if (!pred) throw UserError("a support check must be callable, not None");
            codegen::register_support_check(compiler, op, [pred](const graph::Call& call) {
                return pred(graph::Expr(Ref<graph::Call>(&call)));
            });
        },
        py::arg("compiler"), py::arg("op_name"), py::arg("check"));
    m.def("byoc_compilers", [] { return codegen::external_compiler_list(); });
}

}  // namespace anvil::python
