// Graph bindings: the ONNX importer, the graph IR's text form, single graph passes, and
// compiling a model to a deployable library.
#include <pybind11/stl.h>

#include "bindings.h"
#include "driver/compile.h"
#include "driver/pipeline.h"
#include "driver/shape_buckets.h"
#include "frontend/onnx/from_onnx.h"
#include "graph/parser.h"
#include "graph/passes/passes.h"
#include "graph/printer.h"
#include "ops/op_table.h"

namespace anvil::python {

namespace {

frontend::ImportOptions import_options(const std::map<std::string, std::vector<int64_t>>& shape) {
    frontend::ImportOptions o;
    o.input_shapes = shape;
    return o;
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

graph::PassContext pass_context() {
    graph::PassContext ctx;
    ctx.evaluate = [](const graph::Expr& e) { return driver::evaluate_constant(e); };
    return ctx;
}

// Runs the named graph pass alone (through the pipeline's runner, so it is verified like any
// other) for `target` (empty: the host); UserError listing the passes for an unknown name.
graph::IRModule run_graph_pass(const graph::IRModule& m, const std::string& name, int opt_level,
                               const std::string& target) {
    graph::PassContext ctx = pass_context();
    ctx.opt_level = opt_level;
    if (!target.empty()) ctx.target = Target::parse(target);
    return driver::run_graph_pass(m, name, ctx, pipeline_options(opt_level, {}));
}

// to_mixed_precision to `type` ("bfloat16" or "float16"), through the pipeline's runner:
// (module, the ops no table lists that stayed float32).
py::tuple to_mixed_precision(const graph::IRModule& m, const std::string& type) {
    DataType half;
    if (!DataType::parse(type, &half) ||
        (half != DataType::bfloat16() && half != DataType::float16())) {
        user_error() << "ToMixedPrecision: mixed_precision_type must be \"bfloat16\" or "
                     << "\"float16\", got \"" << type << "\"";
    }
    graph::PassContext ctx = pass_context();
    ctx.mixed_precision = half;
    graph::MixedPrecisionResult r = graph::convert_to_mixed_precision(m, half, ctx);
    graph::IRModule checked =
        driver::run_graph_pass(r.module, "infer_types", ctx, pipeline_options(ctx.opt_level, {}));
    return py::make_tuple(checked, r.missing_ops);
}

}  // namespace

void init_graph(py::module_& m) {
    py::class_<graph::IRModule>(m, "IRModule", "A graph IR module (the model's dataflow graph).")
        // str() leaves the weights out (a model's would be megabytes of base64); astext() has
        // them and parses back with anvil.parse.
        .def("__str__",
             [](const graph::IRModule& mod) {
                 return graph::print(mod, graph::PrintOptions{.metadata = false});
             })
        .def(
            "astext",
            [](const graph::IRModule& mod, bool metadata) {
                return graph::print(mod, graph::PrintOptions{.metadata = metadata});
            },
            py::arg("show_meta_data") = true,
            "The module's text; with show_meta_data (the default) it includes the weights and "
            "parses back with anvil.parse.");

    m.def(
        "from_onnx_path",
        [](const std::string& path, const std::map<std::string, std::vector<int64_t>>& shape) {
            return frontend::from_onnx(path, import_options(shape));
        },
        py::arg("path"), py::arg("shape"));
    m.def(
        "from_onnx_bytes",
        [](const py::bytes& bytes, const std::map<std::string, std::vector<int64_t>>& shape,
           const std::string& name) {
            std::string data = bytes;
            return frontend::from_onnx_bytes(data, import_options(shape), name);
        },
        py::arg("bytes"), py::arg("shape"), py::arg("name") = "");
    m.def("read_tensor_pb", &frontend::read_tensor_pb, py::arg("path"));

    m.def(
        "parse_module",
        [](const std::string& text) { return graph::parse_module(text, ops::op_table()); },
        py::arg("text"));
    m.def(
        "bind_params",
        [](const graph::IRModule& mod, const std::string& function, const py::dict& params) {
            std::map<std::string, runtime::NDArray> values;
            for (const auto& [name, value] : params) {
                py::object v = py::reinterpret_borrow<py::object>(value);
                runtime::NDArray view = py::isinstance<runtime::NDArray>(v)
                                            ? v.cast<runtime::NDArray>()
                                            : ndarray_from_numpy(py::array(v));
                // The module keeps its own copy: the caller may change the array afterwards.
                std::vector<int64_t> shape(view.shape().begin(), view.shape().end());
                runtime::NDArray copy = runtime::NDArray::empty(shape, view.dtype());
                copy.copy_from(view.raw_data(), view.nbytes());
                values[name.cast<std::string>()] = copy;
            }
            return graph::bind_params(mod, function, values);
        },
        py::arg("mod"), py::arg("function"), py::arg("params"));
    m.def("graph_pass_names", &driver::graph_pass_names);
    m.def("tir_pass_names", &driver::tir_pass_names);
    m.def("run_graph_pass", &run_graph_pass, py::arg("mod"), py::arg("name"),
          py::arg("opt_level") = 3, py::arg("target") = "");
    m.def("to_mixed_precision", &to_mixed_precision, py::arg("mod"),
          py::arg("mixed_precision_type"));

    py::class_<driver::CompiledModel>(m, "CompiledModel", "A model compiled for one target.")
        .def_property_readonly("module", [](const driver::CompiledModel& c) { return c.module; })
        .def_property_readonly("kernels", [](const driver::CompiledModel& c) { return c.kernels; })
        .def_property_readonly("target",
                               [](const driver::CompiledModel& c) { return c.target.str(); })
        .def_property_readonly(
            "tuning",
            [](const driver::CompiledModel& c) {
                py::list out;
                for (const auto& t : c.tuning) {
                    py::dict d;
                    d["kernel"] = t.kernel;
                    d["workload"] = t.workload;
                    d["calls"] = t.calls;
                    d["tunable"] = t.tunable;
                    d["applied"] = t.applied;
                    d["program"] = t.program;
                    d["record_cost"] = t.record_cost;
                    d["note"] = t.note;
                    out.append(d);
                }
                return out;
            },
            "How each kernel was scheduled: one dict per kernel (kernel, workload, calls, "
            "tunable, applied: a tuning record chose its configuration, program: an "
            "auto-scheduler record's program was replayed, record_cost, note: why a record "
            "found was not applied).")
        .def(
            "export_library",
            [](const driver::CompiledModel& c, const std::string& path,
               const std::string& executor) {
                return driver::export_model(c, path, driver::parse_executor(executor));
            },
            py::arg("path"), py::arg("executor") = "auto");
    m.def(
        "compile_model",
        [](const graph::IRModule& mod, const std::string& target, int opt_level,
           std::vector<std::string> disabled, driver::ShapeBuckets shape_buckets, bool checked,
           std::shared_ptr<tune::BestRecords> tuning_records) {
            driver::PipelineOptions options =
                pipeline_options(opt_level, std::move(disabled), checked);
            options.shape_buckets = std::move(shape_buckets);
            options.tuning_records = std::move(tuning_records);
            return driver::compile_model(mod, target, options);
        },
        py::arg("mod"), py::arg("target") = "llvm -mcpu=native", py::arg("opt_level") = 3,
        py::arg("disabled_passes") = std::vector<std::string>{},
        py::arg("shape_buckets") = driver::ShapeBuckets{}, py::arg("checked") = false,
        py::arg("tuning_records") = py::none(), py::call_guard<py::gil_scoped_release>());
}

}  // namespace anvil::python
