// Shared helpers of the _anvil extension: conversions between Python values and runtime values.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "graph/expr.h"
#include "runtime/ndarray.h"
#include "runtime/packed_func.h"
#include "support/source_loc.h"

namespace anvil::python {

namespace py = pybind11;

void init_runtime(py::module_& m);
void init_te(py::module_& m);
void init_graph(py::module_& m);
void init_graph_expr(py::module_& m);
void init_dataflow_pattern(py::module_& m);
void init_byoc(py::module_& m);
void init_frontend_pytorch(py::module_& m);
void init_frontend_tflite(py::module_& m);
void init_autotvm(py::module_& m);
void init_auto_scheduler(py::module_& m);
void init_rpc(py::module_& m);

// A graph expression as Python holds it (anvil.graph.Expr).
struct PyExpr {
    graph::Expr e;
};

// The numpy array as an NDArray: a zero-copy view when it is C-contiguous, writable and its data
// is ANVIL_TENSOR_ALIGNMENT aligned, otherwise a copy into a new aligned tensor. `copied` (when
// given) says which.
runtime::NDArray ndarray_from_numpy(const py::array& array, bool* copied = nullptr);
// A numpy array viewing `a`'s data (zero copy); `base` keeps the data alive.
py::array ndarray_to_numpy(const runtime::NDArray& a, py::handle base);

// Wraps a Python callable as a PackedFunc: arguments arrive as Python values, UserError when the
// callable raises.
runtime::PackedFunc packed_from_callable(py::function f);

// The Python call site (file:line of the innermost Python frame), for TE source locations.
SourceLoc python_loc();

}  // namespace anvil::python
