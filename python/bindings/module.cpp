// The _anvil extension module: errors first, then each part of the API.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "support/error.h"

namespace py = pybind11;

PYBIND11_MODULE(_anvil, m) {
    m.doc() = "Anvil's C++ API (use the `anvil` package rather than this module)";
    // Every anvil::Error becomes anvil.AnvilError or one of its two subclasses; the message is
    // the compiler's, unchanged.
    static py::exception<anvil::Error> base(m, "AnvilError");
    static py::exception<anvil::UserError> user(m, "UserError", base.ptr());
    static py::exception<anvil::InternalError> internal(m, "InternalError", base.ptr());
    base.attr("__doc__") =
        "Base class of Anvil's errors; str(e) is the compiler's message, unchanged.";
    user.attr("__doc__") =
        "The model, schedule or arguments are wrong (anvil::UserError); the message says what "
        "and where (for an imported model: file, node name, op type and opset).";
    internal.attr("__doc__") =
        "A bug in Anvil (anvil::InternalError); the message names the C++ file and line that "
        "detected the broken invariant.";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const anvil::UserError& e) {
            PyErr_SetString(user.ptr(), e.what());
        } catch (const anvil::InternalError& e) {
            PyErr_SetString(internal.ptr(), e.what());
        } catch (const anvil::Error& e) {
            PyErr_SetString(base.ptr(), e.what());
        }
    });
    anvil::python::init_runtime(m);
    anvil::python::init_te(m);
    anvil::python::init_graph(m);
    anvil::python::init_graph_expr(m);
    anvil::python::init_dataflow_pattern(m);
    anvil::python::init_byoc(m);
    anvil::python::init_frontend_pytorch(m);
    anvil::python::init_frontend_tflite(m);
    anvil::python::init_autotvm(m);
    anvil::python::init_auto_scheduler(m);
    anvil::python::init_rpc(m);
}
