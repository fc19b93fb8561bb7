#include "runtime/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "runtime/last_error.h"
#include "runtime/library_data.h"

namespace anvil::runtime {
namespace {

std::string shape_text(std::span<const int64_t> shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

struct KernelCall {
    int node;
    PackedFunc func;
    std::vector<AnvilValue> values;
    std::vector<int> codes;
};

// What run_profiled accumulates for one call of the plan (by index in State::calls).
struct CallTime {
    int64_t calls = 0;
    int64_t ns = 0;
};

}  // namespace

struct GraphExecutor::State {
    GraphPlan plan;
    Module module;
    ParamBlob params;
    std::vector<NDArray> storage;               // by index in plan.storage
    std::vector<std::vector<NDArray>> tensors;  // per node, per output: views
    std::vector<KernelCall> calls;
    std::vector<GraphTensorInfo> inputs, outputs;
    std::vector<NDArray> input_tensors, output_tensors;
    std::vector<CallTime> times;  // per call; filled by run_profiled only
    int64_t profiled_runs = 0;

    void call_kernel(const KernelCall& call) const;
};

void GraphExecutor::State::call_kernel(const KernelCall& call) const {
    AnvilValue ret{};
    int ret_code = kAnvilNull;
    int rc = call.func.call_packed(call.values.data(), call.codes.data(),
                                   static_cast<int>(call.values.size()), &ret, &ret_code);
    if (rc != 0) {
        const PlanNode& node = plan.nodes[call.node];
        user_error() << "graph executor: node " << call.node << " '" << node.name << "' (kernel '"
                     << node.kernel << "') failed: " << anvil_get_last_error();
    }
    if (ret_code == kAnvilFunction) {
        PackedFunc::adopt(static_cast<AnvilFunctionHandle>(ret.v_handle));  // released
    }
}

GraphExecutor::GraphExecutor(GraphPlan plan, std::span<const std::byte> params, Module kernels)
    : GraphExecutor(std::move(plan), params, std::move(kernels), nullptr) {}

GraphExecutor::GraphExecutor(const std::string& plan_json, std::span<const std::byte> params,
                             Module kernels)
    : GraphExecutor(plan_from_json(plan_json), params, std::move(kernels), nullptr) {}

GraphExecutor::GraphExecutor(GraphPlan plan, std::span<const std::byte> params, Module kernels,
                             Ref<Object> params_owner)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    validate_plan(plan, static_cast<int64_t>(params.size()));
    if (!kernels.defined()) user_error() << "graph executor: the kernel module is null";
    s.plan = std::move(plan);
    s.module = std::move(kernels);

    s.params = ParamBlob(params, std::move(params_owner));

    std::unordered_map<int, size_t> storage_index;
    for (const PlanStorage& st : s.plan.storage) {
        storage_index[st.id] = s.storage.size();
        NDArray buffer = NDArray::empty({st.bytes}, {kDLUInt, 8, 1});
        std::memset(buffer.raw_data(), 0, buffer.nbytes());
        s.storage.push_back(std::move(buffer));
    }

    s.tensors.resize(s.plan.nodes.size());
    for (size_t i = 0; i < s.plan.nodes.size(); ++i) {
        const PlanNode& node = s.plan.nodes[i];
        for (const PlanTensor& t : node.outputs) {
            if (node.kind == PlanNodeKind::param) {
                s.tensors[i].push_back(s.params.view(s.plan.params.at(node.name)));
            } else {
                const NDArray& buffer = s.storage[storage_index.at(t.storage)];
                s.tensors[i].push_back(buffer.view(t.shape, t.dtype));
            }
        }
    }

    for (size_t i = 0; i < s.plan.nodes.size(); ++i) {
        const PlanNode& node = s.plan.nodes[i];
        if (node.kind != PlanNodeKind::kernel) continue;
        KernelCall call{.node = static_cast<int>(i), .func = s.module.get_function(node.kernel)};
        if (!call.func.defined()) {
            user_error() << "graph executor: node " << i << " '" << node.name << "' calls kernel '"
                         << node.kernel << "', which the module does not define";
        }
        for (const PlanEntry& a : node.args) {
            call.values.push_back(AnvilValue{.v_handle = s.tensors[a.node][a.index].tensor()});
        }
        for (const NDArray& out : s.tensors[i]) {
            call.values.push_back(AnvilValue{.v_handle = out.tensor()});
        }
        call.codes.assign(call.values.size(), kAnvilDLTensor);
        s.calls.push_back(std::move(call));
    }

    for (const PlanInput& in : s.plan.inputs) {
        const PlanTensor& t = s.plan.nodes[in.node].outputs[0];
        s.inputs.push_back({in.name, t.shape, t.dtype});
        s.input_tensors.push_back(s.tensors[in.node][0]);
    }
    for (const PlanOutput& out : s.plan.outputs) {
        const PlanTensor& t = s.plan.nodes[out.entry.node].outputs[out.entry.index];
        s.outputs.push_back({out.name, t.shape, t.dtype});
        s.output_tensors.push_back(s.tensors[out.entry.node][out.entry.index]);
    }
}

GraphExecutor GraphExecutor::load(const std::string& so_path) {
    ModelArtifact a =
        open_model_artifact(so_path, ANVIL_GRAPH_PLAN_SYMBOL,
                            "it is an Anvil module but holds no graph (no " ANVIL_GRAPH_PLAN_SYMBOL
                            " symbol); load it with load_module instead");
    try {
        return GraphExecutor(plan_from_json(a.document), a.params, std::move(a.module),
                             Ref<Object>(a.data));
    } catch (const UserError& e) {
        user_error() << "cannot load model '" << so_path << "': " << e.what();
    }
    ANVIL_UNREACHABLE();
}

GraphExecutor::GraphExecutor(GraphExecutor&&) noexcept = default;
GraphExecutor& GraphExecutor::operator=(GraphExecutor&&) noexcept = default;
GraphExecutor::~GraphExecutor() = default;

int GraphExecutor::num_inputs() const {
    return static_cast<int>(state_->inputs.size());
}

int GraphExecutor::num_outputs() const {
    return static_cast<int>(state_->outputs.size());
}

int GraphExecutor::input_index(const std::string& name) const {
    for (size_t i = 0; i < state_->inputs.size(); ++i) {
        if (state_->inputs[i].name == name) return static_cast<int>(i);
    }
    std::string known;
    for (const GraphTensorInfo& in : state_->inputs)
        known += (known.empty() ? "'" : ", '") + in.name + "'";
    user_error() << "graph executor: the model has no input named '" << name << "'; its inputs are "
                 << (known.empty() ? "none" : known);
    ANVIL_UNREACHABLE();
}

const GraphTensorInfo& GraphExecutor::input_info(int index) const {
    if (index < 0 || index >= num_inputs()) {
        user_error() << "graph executor: input index " << index
                     << " is out of range; the model has " << num_inputs() << " input(s)";
    }
    return state_->inputs[index];
}

const GraphTensorInfo& GraphExecutor::output_info(int index) const {
    if (index < 0 || index >= num_outputs()) {
        user_error() << "graph executor: output index " << index
                     << " is out of range; the model has " << num_outputs() << " output(s)";
    }
    return state_->outputs[index];
}

namespace {

// Checks that `value` is a compact CPU tensor of exactly `expected`'s shape and dtype.
void check_compatible(const std::string& what, const GraphTensorInfo& expected,
                      const DLTensor* value) {
    if (value == nullptr) user_error() << what << ": the tensor is NULL";
    std::span<const int64_t> shape(value->shape, static_cast<size_t>(value->ndim));
    if (value->device.device_type != kDLCPU) {
        user_error() << what << ": the tensor is on device type " << value->device.device_type
                     << "; the graph executor takes CPU tensors";
    }
    if (!dl_dtype_equal(value->dtype, expected.dtype) ||
        !std::equal(shape.begin(), shape.end(), expected.shape.begin(), expected.shape.end())) {
        user_error() << what << ": expected " << dl_dtype_to_string(expected.dtype)
                     << shape_text(expected.shape) << ", got " << describe_tensor(*value);
    }
    if (value->strides != nullptr) {
        int64_t stride = 1;
        for (int d = value->ndim - 1; d >= 0; --d) {
            if (value->shape[d] != 1 && value->strides[d] != stride) {
                user_error() << what << ": the tensor is not compact row-major (strides)";
            }
            stride *= value->shape[d];
        }
    }
}

}  // namespace

void GraphExecutor::set_input(int index, const DLTensor* value) {
    const GraphTensorInfo& info = input_info(index);
    check_compatible("set_input('" + info.name + "')", info, value);
    const NDArray& dst = state_->input_tensors[index];
    const char* src = static_cast<const char*>(value->data) + value->byte_offset;
    if (dst.nbytes() && src != dst.raw_data()) std::memcpy(dst.raw_data(), src, dst.nbytes());
}

NDArray GraphExecutor::get_input(int index) const {
    input_info(index);
    return state_->input_tensors[index];
}

void GraphExecutor::run() {
    const State& s = *state_;
    for (const KernelCall& call : s.calls) s.call_kernel(call);
}

void GraphExecutor::run_profiled() {
    State& s = *state_;
    s.times.resize(s.calls.size());
    for (size_t i = 0; i < s.calls.size(); ++i) {
        auto start = std::chrono::steady_clock::now();
        s.call_kernel(s.calls[i]);
        auto end = std::chrono::steady_clock::now();
        s.times[i].calls += 1;
        s.times[i].ns += std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    }
    ++s.profiled_runs;
}

Profile GraphExecutor::profile() const {
    const State& s = *state_;
    Profile p;
    p.runs = s.profiled_runs;
    std::unordered_map<std::string, size_t> index;  // kernel name → entry of p.kernels
    for (size_t i = 0; i < s.times.size(); ++i) {
        const PlanNode& node = s.plan.nodes[s.calls[i].node];
        auto [it, added] = index.emplace(node.kernel, p.kernels.size());
        if (added) p.kernels.push_back({.kernel = node.kernel, .flops = node.flops});
        KernelProfile& k = p.kernels[it->second];
        k.calls += s.times[i].calls;
        k.total_ms += static_cast<double>(s.times[i].ns) / 1e6;
        // Nodes of one kernel have the same count; an unknown one makes the kernel's unknown.
        if (node.flops != k.flops) k.flops = -1;
    }
    std::stable_sort(
        p.kernels.begin(), p.kernels.end(),
        [](const KernelProfile& a, const KernelProfile& b) { return a.total_ms > b.total_ms; });
    return p;
}

void GraphExecutor::reset_profile() {
    state_->times.clear();
    state_->profiled_runs = 0;
}

NDArray GraphExecutor::get_param(const std::string& name) const {
    const State& s = *state_;
    for (size_t i = 0; i < s.plan.nodes.size(); ++i) {
        if (s.plan.nodes[i].kind == PlanNodeKind::param && s.plan.nodes[i].name == name) {
            return s.tensors[i][0];
        }
    }
    user_error() << "graph executor: the model has no param named '" << name << "'";
    ANVIL_UNREACHABLE();
}

NDArray GraphExecutor::get_output(int index) const {
    output_info(index);
    return state_->output_tensors[index];
}

void GraphExecutor::copy_output(int index, DLTensor* dst) const {
    const GraphTensorInfo& info = output_info(index);
    check_compatible("copy_output(" + std::to_string(index) + ")", info, dst);
    const NDArray& src = state_->output_tensors[index];
    char* out = static_cast<char*>(dst->data) + dst->byte_offset;
    if (src.nbytes() && out != src.raw_data()) std::memcpy(out, src.raw_data(), src.nbytes());
}

int64_t GraphExecutor::planned_bytes() const {
    return plan_storage_bytes(state_->plan);
}

int64_t GraphExecutor::unshared_bytes() const {
    return plan_unshared_bytes(state_->plan);
}

int64_t GraphExecutor::param_bytes() const {
    int64_t total = 0;
    for (const auto& [name, p] : state_->plan.params) total += p.nbytes;
    return total;
}

const GraphPlan& GraphExecutor::plan() const {
    return state_->plan;
}

const Module& GraphExecutor::module() const {
    return state_->module;
}

}  // namespace anvil::runtime

// ---- C API ---------------------------------------------------------------------------------

struct AnvilGraphExecutorObj {
    anvil::runtime::GraphExecutor executor;
    std::string profile_text;  // what anvil_graph_executor_get_profile handed out last
};

using anvil::runtime::catch_to_status;
using anvil::runtime::GraphTensorInfo;

namespace {

anvil::runtime::GraphExecutor& executor_of(AnvilGraphExecutorHandle h, const char* fn) {
    if (h == nullptr) anvil::user_error() << fn << ": the executor handle is NULL";
    return h->executor;
}

void write_info(const GraphTensorInfo& info, const char** name, int* ndim, const int64_t** shape,
                DLDataType* dtype) {
    if (name) *name = info.name.c_str();
    if (ndim) *ndim = static_cast<int>(info.shape.size());
    if (shape) *shape = info.shape.data();
    if (dtype) *dtype = info.dtype;
}

}  // namespace

extern "C" {

int anvil_graph_executor_create_from_file(const char* path, AnvilGraphExecutorHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr)
            anvil::user_error() << "anvil_graph_executor_create_from_file: out is NULL";
        *out = nullptr;
        if (path == nullptr) {
            anvil::user_error() << "anvil_graph_executor_create_from_file: path is NULL";
        }
        *out = new AnvilGraphExecutorObj{anvil::runtime::GraphExecutor::load(path)};
        return 0;
    });
}

int anvil_graph_executor_create(const char* plan_json, const void* params, size_t params_size,
                                AnvilModuleHandle module, AnvilGraphExecutorHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_graph_executor_create: out is NULL";
        *out = nullptr;
        if (plan_json == nullptr)
            anvil::user_error() << "anvil_graph_executor_create: plan is NULL";
        if (params == nullptr && params_size != 0) {
            anvil::user_error() << "anvil_graph_executor_create: params is NULL";
        }
        std::span<const std::byte> bytes(static_cast<const std::byte*>(params), params_size);
        *out = new AnvilGraphExecutorObj{anvil::runtime::GraphExecutor(
            std::string(plan_json), bytes, anvil::runtime::module_from_handle(module))};
        return 0;
    });
}

int anvil_graph_executor_get_num_inputs(AnvilGraphExecutorHandle h, int* out) {
    return catch_to_status([&] {
        int n = executor_of(h, "anvil_graph_executor_get_num_inputs").num_inputs();
        if (out) *out = n;
        return 0;
    });
}

int anvil_graph_executor_get_num_outputs(AnvilGraphExecutorHandle h, int* out) {
    return catch_to_status([&] {
        int n = executor_of(h, "anvil_graph_executor_get_num_outputs").num_outputs();
        if (out) *out = n;
        return 0;
    });
}

int anvil_graph_executor_get_input_info(AnvilGraphExecutorHandle h, int index, const char** name,
                                        int* ndim, const int64_t** shape, DLDataType* dtype) {
    return catch_to_status([&] {
        auto& ex = executor_of(h, "anvil_graph_executor_get_input_info");
        write_info(ex.input_info(index), name, ndim, shape, dtype);
        return 0;
    });
}

int anvil_graph_executor_get_output_info(AnvilGraphExecutorHandle h, int index, const char** name,
                                         int* ndim, const int64_t** shape, DLDataType* dtype) {
    return catch_to_status([&] {
        auto& ex = executor_of(h, "anvil_graph_executor_get_output_info");
        write_info(ex.output_info(index), name, ndim, shape, dtype);
        return 0;
    });
}

int anvil_graph_executor_set_input(AnvilGraphExecutorHandle h, const char* name,
                                   const DLTensor* value) {
    return catch_to_status([&] {
        auto& ex = executor_of(h, "anvil_graph_executor_set_input");
        if (name == nullptr) anvil::user_error() << "anvil_graph_executor_set_input: name is NULL";
        ex.set_input(std::string(name), value);
        return 0;
    });
}

int anvil_graph_executor_set_input_index(AnvilGraphExecutorHandle h, int index,
                                         const DLTensor* value) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_set_input_index").set_input(index, value);
        return 0;
    });
}

int anvil_graph_executor_run(AnvilGraphExecutorHandle h) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_run").run();
        return 0;
    });
}

int anvil_graph_executor_run_profiled(AnvilGraphExecutorHandle h) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_run_profiled").run_profiled();
        return 0;
    });
}

int anvil_graph_executor_get_profile(AnvilGraphExecutorHandle h, const char** text) {
    return catch_to_status([&] {
        if (text == nullptr)
            anvil::user_error() << "anvil_graph_executor_get_profile: text is NULL";
        auto& ex = executor_of(h, "anvil_graph_executor_get_profile");
        h->profile_text = anvil::runtime::format_profile(ex.profile());
        *text = h->profile_text.c_str();
        return 0;
    });
}

int anvil_graph_executor_reset_profile(AnvilGraphExecutorHandle h) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_reset_profile").reset_profile();
        return 0;
    });
}

int anvil_graph_executor_get_output(AnvilGraphExecutorHandle h, int index, DLTensor** out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_graph_executor_get_output: out is NULL";
        *out = nullptr;
        *out = executor_of(h, "anvil_graph_executor_get_output").get_output(index).tensor();
        return 0;
    });
}

int anvil_graph_executor_copy_output(AnvilGraphExecutorHandle h, int index, DLTensor* dst) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_copy_output").copy_output(index, dst);
        return 0;
    });
}

int anvil_graph_executor_get_memory(AnvilGraphExecutorHandle h, int64_t* planned_bytes,
                                    int64_t* unshared_bytes, int64_t* param_bytes) {
    return catch_to_status([&] {
        auto& ex = executor_of(h, "anvil_graph_executor_get_memory");
        if (planned_bytes) *planned_bytes = ex.planned_bytes();
        if (unshared_bytes) *unshared_bytes = ex.unshared_bytes();
        if (param_bytes) *param_bytes = ex.param_bytes();
        return 0;
    });
}

int anvil_graph_executor_free(AnvilGraphExecutorHandle h) {
    delete h;
    return 0;
}

}  // extern "C"
