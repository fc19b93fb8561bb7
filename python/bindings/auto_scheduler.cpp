// anvil.auto_scheduler bindings (the _anvil.auto_scheduler submodule): the template-free search
// of tune/sketch/ over a tensor-expression computation (EvolutionarySearch under the learned
// ProgramCostModel), the computations of a model's kernels, and the helpers the Python package
// (python/anvil/auto_scheduler) needs to replay programs. Model tasks are tuned by
// _anvil.autotvm.tune_tasks with search="auto"; a TE task's loop runs in Python, as autotvm's
// template loop does, because its computation is a Python function.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "bindings.h"
#include "codegen/target.h"
#include "driver/build.h"
#include "driver/count_flops.h"
#include "driver/lower_graph.h"
#include "driver/tune_tasks.h"
#include "ir/expr.h"
#include "ir/expr_printer.h"
#include "support/error.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "tune/program_cost_model.h"
#include "tune/record.h"
#include "tune/sketch/evolutionary_search.h"

namespace anvil::python {

namespace {

// Every operation the outputs read, producers before their readers (each once).
std::vector<Ref<te::Operation>> reachable_ops(const std::vector<te::Tensor>& outputs) {
    std::vector<Ref<te::Operation>> order;
    std::set<const te::Operation*> seen;
    std::function<void(const Ref<te::Operation>&)> visit = [&](const Ref<te::Operation>& op) {
        if (!seen.insert(op.get()).second) return;
        if (const auto* c = op.as<te::ComputeOp>()) {
            for (const auto& in : c->inputs) visit(in);
        }
        order.push_back(op);
    };
    for (const auto& t : outputs) visit(t.op);
    return order;
}

// TVM's "simple task": a kernel without a reduction (elementwise, injective) leaves little for
// a search to find, so extract_tasks(include_simple_tasks=False) leaves it out.
bool has_reduction(const std::vector<te::Tensor>& outputs) {
    for (const auto& op : reachable_ops(outputs)) {
        const auto* c = op.as<te::ComputeOp>();
        if (c && c->is_reduction()) return true;
    }
    return false;
}

std::string join_shape(const std::vector<PrimExpr>& shape) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << "]";
    return os.str();
}

// TVM's ComputeDAG text: one line per stage, producers first; a sum reads "C(i, j) += ...".
std::string compute_dag_text(const std::vector<te::Tensor>& outputs) {
    ExprPrinter printer;
    std::ostringstream os;
    for (const auto& op : reachable_ops(outputs)) {
        const auto* c = op.as<te::ComputeOp>();
        if (!c) {
            os << op->name << " = PLACEHOLDER " << join_shape(op->buffer->shape) << " "
               << op->buffer->dtype.str() << "\n";
            continue;
        }
        os << op->name << "(";
        for (size_t i = 0; i < c->axis.size(); ++i) {
            os << (i ? ", " : "") << c->axis[i]->var->name;
        }
        os << ")";
        const auto* r = c->body.as<Reduce>();
        if (!r) {
            os << " = " << printer.str(c->body) << "\n";
            continue;
        }
        const std::string& how = r->combiner->name;
        os << (how == "sum" ? " += " : " " + how + "= ") << printer.str(r->source);
        // A reduction over a subset (te.sum(..., where=cond)) says which.
        const int64_t* always = r->condition.defined() ? as_const_int(r->condition) : nullptr;
        if (r->condition.defined() && !(always && *always != 0)) {
            os << " where " << printer.str(r->condition);
        }
        os << "\n";
    }
    return os.str();
}

std::vector<te::Tensor> kernel_args(const std::vector<te::Tensor>& inputs,
                                    const std::vector<te::Tensor>& outputs) {
    std::vector<te::Tensor> args = inputs;
    args.insert(args.end(), outputs.begin(), outputs.end());
    return args;
}

// A schedule of the computation with a program's primitives replayed: what a measured program
// and an applied record are built from. UserError when the program does not apply.
te::Schedule replay(const std::vector<te::Tensor>& outputs, const te::ScheduleRecord& program) {
    te::Schedule s = te::create_schedule(outputs);
    s.apply(program);
    return s;
}

void bind_cost_model(py::module_& am) {
    py::class_<tune::ProgramCostModel, std::shared_ptr<tune::ProgramCostModel>>(
        am, "ProgramCostModel",
        "The learned cost model of programs (tune/program_cost_model.h): gradient-boosted trees "
        "over loop-IR features, trained on what a run measures.")
        .def(py::init<uint64_t>(), py::arg("seed") = 1)
        .def("load_pretrained", &tune::ProgramCostModel::load_pretrained, py::arg("path"),
             "Starts from the model saved in `path` (UserError naming it when it cannot be "
             "read).")
        .def_property_readonly("has_pretrained", &tune::ProgramCostModel::has_pretrained,
                               "Whether a pre-trained model was loaded.")
        .def_property_readonly("measured", &tune::ProgramCostModel::measured,
                               "Measured programs it has learned from.");
    am.def("default_cost_model_path", &tune::default_cost_model_path,
           "The pre-trained model shipped with Anvil: $ANVIL_COST_MODEL, else the source tree's "
           "data/cost_model/model.json when it exists, else \"\" (none).");
}

void bind_search(py::module_& am) {
    py::class_<tune::Program>(am, "Program", "One program of the search: a sketch's decisions.")
        .def_readonly("sketch", &tune::Program::sketch, "The index of its sketch.")
        .def_readonly("key", &tune::Program::key, "Its primitives as text (its identity).")
        .def("__repr__", [](const tune::Program& p) {
            return "Program(sketch=" + std::to_string(p.sketch) + ", " +
                   std::to_string(p.record.size()) + " primitives)";
        });
    py::class_<tune::EvolutionarySearch>(
        am, "EvolutionarySearch",
        "The auto-scheduler's search of one kernel (tune/sketch/evolutionary_search.h): "
        "batches of programs never proposed before, ranked by the cost model.")
        .def(py::init([](const std::string& task, std::vector<te::Tensor> inputs,
                         std::vector<te::Tensor> outputs, const std::string& target,
                         std::shared_ptr<tune::ProgramCostModel> model, uint64_t seed) {
                 tune::SearchKernel k;
                 k.task = task;
                 k.inputs = std::move(inputs);
                 k.outputs = std::move(outputs);
                 // The float32 lanes of the target's widest vector register, as anvil tune uses.
                 k.target.vector_lanes =
                     std::max(1, make_lower_context(Target::parse(target)).vector_bits / 32);
                 return tune::EvolutionarySearch(std::move(k), std::move(model), seed);
             }),
             py::arg("task"), py::arg("inputs"), py::arg("outputs"), py::arg("target"),
             py::arg("model"), py::arg("seed") = 1, py::call_guard<py::gil_scoped_release>())
        .def("next_batch", &tune::EvolutionarySearch::next_batch, py::arg("n"),
             py::call_guard<py::gil_scoped_release>(),
             "Up to n programs never proposed before (fewer when no more are found).")
        .def(
            "update",
            [](tune::EvolutionarySearch& s, const std::vector<tune::Program>& programs,
               const std::vector<double>& costs) {
                if (programs.size() != costs.size())
                    throw UserError("EvolutionarySearch.update: one cost per program");
                py::gil_scoped_release release;
                s.update(programs, costs);
            },
            py::arg("programs"), py::arg("costs"),
            "Costs in seconds (inf: failed) of programs next_batch returned.")
        .def(
            "resume",
            [](tune::EvolutionarySearch& s, const tune::TuningRecord& r) {
                if (r.search != tune::SearchKind::program)
                    throw UserError("EvolutionarySearch.resume: the record of workload '" +
                                    r.workload + "' is not an auto-scheduler record");
                const double cost =
                    r.ok() ? r.mean_cost() : std::numeric_limits<double>::infinity();
                py::gil_scoped_release release;
                return s.resume(r.schedule, cost);
            },
            py::arg("record"),
            "A program an earlier run measured (a record of the log): never proposed again, and "
            "the cost model learns from it. False when it does not apply to this computation "
            "(a record of an older Anvil), which then counts for nothing.")
        .def_property_readonly(
            "sketches",
            [](const tune::EvolutionarySearch& s) {
                std::vector<std::string> out;
                for (const auto& k : s.sketches()) out.push_back(k.describe());
                return out;
            },
            "Each sketch's description.")
        .def_property_readonly("invalid", &tune::EvolutionarySearch::invalid,
                               "Programs the rules made that did not lower (0 unless a rule has "
                               "a bug).");
}

void bind_computations(py::module_& am) {
    am.def(
        "program_schedule",
        [](const std::vector<te::Tensor>& outputs, const tune::Program& p) {
            return replay(outputs, p.record);
        },
        py::arg("outputs"), py::arg("program"),
        "A fresh schedule of `outputs` with the program's primitives applied.");
    am.def(
        "record_schedule",
        [](const std::vector<te::Tensor>& outputs, const tune::TuningRecord& r) {
            return replay(outputs, r.schedule);
        },
        py::arg("outputs"), py::arg("record"),
        "A fresh schedule of `outputs` with the record's primitives replayed.");
    am.def("compute_dag_text", &compute_dag_text, py::arg("outputs"),
           "The computation as text, one stage a line (TVM's ComputeDAG print).");
    am.def(
        "is_placeholder", [](const te::Tensor& t) { return t.op->kind == te::OpKind::Placeholder; },
        py::arg("tensor"), "Whether the tensor is an input (te.placeholder).");
    am.def("has_reduction", &has_reduction, py::arg("outputs"),
           "Whether a stage the outputs read is a reduction.");
    am.def(
        "count_flops",
        [](const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs,
           const std::string& target) {
            te::Schedule s = te::create_schedule(outputs);
            auto f = driver::lower(s, kernel_args(inputs, outputs), "flops", Target::parse(target));
            return driver::count_flops(*f);
        },
        py::arg("inputs"), py::arg("outputs"), py::arg("target"),
        "Floating-point operations of one run of the unscheduled computation (-1: unknown).");
    am.def(
        "task_computation",
        [](const driver::TuneTask& t) {
            if (!t.function)
                throw UserError("task '" + t.name + "' is a graph choice, not a kernel");
            driver::FunctionComputation c = driver::function_computation(*t.function);
            return std::make_pair(c.inputs, c.outputs);
        },
        py::arg("task"),
        "A model kernel's computation, unscheduled: (inputs, outputs) as the kernel takes them "
        "(parameters, then lifted constants; then outputs).");
    am.def(
        "task_with_weight",
        [](driver::TuneTask t, int weight) {
            if (weight < 1) throw UserError("a task's weight must be a positive integer");
            t.weight = weight;
            return t;
        },
        py::arg("task"), py::arg("weight"), "A copy of a model task with another weight.");
    am.def(
        "merge_best_records",
        [](const std::vector<std::shared_ptr<tune::BestRecords>>& parts) {
            auto out = std::make_shared<tune::BestRecords>();
            for (const auto& p : parts) {
                if (p) out->add_all(*p);
            }
            return out;
        },
        py::arg("parts"), "The best record per workload of several sets (the faster wins).");
}

}  // namespace

void init_auto_scheduler(py::module_& m) {
    py::module_ am =
        m.def_submodule("auto_scheduler", "The auto-scheduler (wrapped by anvil.auto_scheduler)");
    bind_cost_model(am);
    bind_search(am);
    bind_computations(am);
}

}  // namespace anvil::python
