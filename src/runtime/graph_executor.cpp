#include "runtime/graph_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "runtime/bundle_module.h"
#include "runtime/last_error.h"
#include "runtime/library_data.h"
#include "runtime/tensor_check.h"

namespace anvil::runtime {
namespace {

struct KernelCall {
    int node;
    PackedFunc func;
    std::vector<AnvilValue> values;
    std::vector<int> codes;
};

// What run_profiled accumulates for one call of the plan (by index in Workspace::calls).
struct CallTime {
    int64_t calls = 0;
    int64_t ns = 0;
};

// The memory one run writes: the storage buffers, every node's tensors (views of the storage;
// param nodes view the shared parameter blob) and each kernel call's arguments, which point at
// those tensors. A run touches nothing else, so runs in different workspaces are independent.
struct Workspace {
    std::vector<NDArray> storage;               // by index in plan.storage
    std::vector<std::vector<NDArray>> tensors;  // per node, per output
    std::vector<KernelCall> calls;
    std::vector<NDArray> inputs, outputs;
};

// What get_output's views keep alive: the executor's output tensors (so the views outlive the
// executor), and the number of views still held. The count is decremented with release and read
// with acquire, so a run that sees a view dropped also sees every read made through it.
struct OutputViews : Object {
    std::vector<NDArray> outputs;
    mutable std::atomic<int> held{0};
};

// The owner of one get_output view.
struct OutputView : Object {
    explicit OutputView(Ref<OutputViews> v) : views(std::move(v)) {
        views->held.fetch_add(1, std::memory_order_relaxed);
    }
    ~OutputView() override { views->held.fetch_sub(1, std::memory_order_release); }
    Ref<OutputViews> views;
};

constexpr const char* kOneThreadAtATime =
    "set_input / run / get_output serve one thread at a time: call run_with (safe from many "
    "threads at once) instead, or give each thread its own executor";

}  // namespace

struct GraphExecutor::State {
    // Read-only after construction; shared by every run.
    GraphPlan plan;
    Module module;
    ParamBlob params;
    std::vector<NDArray> param_tensors;  // by node; defined for param nodes only
    std::vector<PackedFunc> kernels;     // by node; defined for kernel nodes only
    std::vector<GraphTensorInfo> inputs, outputs;

    // The stateful API's workspace and bookkeeping. Only the thread holding `busy` touches the
    // fields after it, so they need no lock of their own (see "Threads" in the header).
    std::unique_ptr<Workspace> own;
    mutable std::atomic<bool> busy{false};
    mutable std::vector<std::thread::id> input_setter;  // by input; id() when never set
    mutable std::thread::id last_runner;
    Ref<OutputViews> views;
    std::vector<CallTime> times;  // per call; filled by run_profiled only
    int64_t profiled_runs = 0;

    // run_with's workspaces, idle ones kept for the next call.
    mutable std::mutex pool_mutex;
    mutable std::vector<std::unique_ptr<Workspace>> idle;
    mutable int workspaces_made = 0;

    std::unique_ptr<Workspace> make_workspace() const;
    void call_kernel(const KernelCall& call) const;
    void run_calls(const Workspace& w) const;
    // Names a tensor of the stateful API or run_with in messages: "input 0 'x'".
    std::string describe(const char* role, int index) const;

    // Holds `busy` for the duration of one stateful call.
    class Use {
    public:
        Use(const State& s, const std::string& what);
        Use(const Use&) = delete;
        Use& operator=(const Use&) = delete;
        ~Use() { s_.busy.store(false, std::memory_order_release); }

    private:
        const State& s_;
    };
    // The checks of run() and of reading outputs, for the calling thread.
    void check_inputs_are_ours(const char* what) const;
    void check_last_run_is_ours(const std::string& what) const;
};

GraphExecutor::State::Use::Use(const State& s, const std::string& what) : s_(s) {
    bool expected = false;
    if (!s.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
        user_error() << "graph executor: " << what
                     << " was called while another thread is inside set_input, run or "
                        "get_output of the same executor; "
                     << kOneThreadAtATime;
    }
}

void GraphExecutor::State::check_inputs_are_ours(const char* what) const {
    const std::thread::id me = std::this_thread::get_id();
    for (size_t i = 0; i < input_setter.size(); ++i) {
        if (input_setter[i] != std::thread::id() && input_setter[i] != me) {
            user_error() << "graph executor: " << what << ": "
                         << describe("input", static_cast<int>(i))
                         << " was last set by another thread; " << kOneThreadAtATime;
        }
    }
    // Another thread's output views would silently change under it.
    if (last_runner != std::thread::id() && last_runner != me &&
        views->held.load(std::memory_order_acquire) > 0) {
        user_error() << "graph executor: " << what
                     << ": the outputs of another thread's run are still held (get_output views) "
                        "and this run would overwrite them; "
                     << kOneThreadAtATime;
    }
}

void GraphExecutor::State::check_last_run_is_ours(const std::string& what) const {
    if (last_runner != std::thread::id() && last_runner != std::this_thread::get_id()) {
        user_error() << "graph executor: " << what << ": the last run was made by another thread; "
                     << kOneThreadAtATime;
    }
}

std::string GraphExecutor::State::describe(const char* role, int index) const {
    const auto& list = std::string_view(role) == "input" ? inputs : outputs;
    return std::string(role) + " " + std::to_string(index) + " '" + list[index].name + "'";
}

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

void GraphExecutor::State::run_calls(const Workspace& w) const {
    for (const KernelCall& call : w.calls) call_kernel(call);
}

std::unique_ptr<Workspace> GraphExecutor::State::make_workspace() const {
    auto w = std::make_unique<Workspace>();
    std::unordered_map<int, size_t> storage_index;
    for (const PlanStorage& st : plan.storage) {
        storage_index[st.id] = w->storage.size();
        NDArray buffer = NDArray::empty({st.bytes}, {kDLUInt, 8, 1});
        std::memset(buffer.raw_data(), 0, buffer.nbytes());
        w->storage.push_back(std::move(buffer));
    }
    w->tensors.resize(plan.nodes.size());
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlanNode& node = plan.nodes[i];
        if (node.kind == PlanNodeKind::param) {
            w->tensors[i].push_back(param_tensors[i]);  // shared, never written
            continue;
        }
        for (const PlanTensor& t : node.outputs) {
            const NDArray& buffer = w->storage[storage_index.at(t.storage)];
            w->tensors[i].push_back(buffer.view(t.shape, t.dtype));
        }
    }
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlanNode& node = plan.nodes[i];
        if (node.kind != PlanNodeKind::kernel) continue;
        KernelCall call{.node = static_cast<int>(i), .func = kernels[i]};
        for (const PlanEntry& a : node.args) {
            call.values.push_back(AnvilValue{.v_handle = w->tensors[a.node][a.index].tensor()});
        }
        for (const NDArray& out : w->tensors[i]) {
            call.values.push_back(AnvilValue{.v_handle = out.tensor()});
        }
        call.codes.assign(call.values.size(), kAnvilDLTensor);
        w->calls.push_back(std::move(call));
    }
    for (const PlanInput& in : plan.inputs) w->inputs.push_back(w->tensors[in.node][0]);
    for (const PlanOutput& out : plan.outputs) {
        w->outputs.push_back(w->tensors[out.entry.node][out.entry.index]);
    }
    return w;
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

    s.param_tensors.resize(s.plan.nodes.size());
    s.kernels.resize(s.plan.nodes.size());
    for (size_t i = 0; i < s.plan.nodes.size(); ++i) {
        const PlanNode& node = s.plan.nodes[i];
        if (node.kind == PlanNodeKind::param) {
            s.param_tensors[i] = s.params.view(s.plan.params.at(node.name));
        } else if (node.kind == PlanNodeKind::kernel) {
            s.kernels[i] = s.module.get_function(node.kernel);
            if (!s.kernels[i].defined()) {
                user_error() << "graph executor: node " << i << " '" << node.name
                             << "' calls kernel '" << node.kernel
                             << "', which the module does not define";
            }
        }
    }
    for (const PlanInput& in : s.plan.inputs) {
        const PlanTensor& t = s.plan.nodes[in.node].outputs[0];
        s.inputs.push_back({in.name, t.shape, t.dtype});
    }
    for (const PlanOutput& out : s.plan.outputs) {
        const PlanTensor& t = s.plan.nodes[out.entry.node].outputs[out.entry.index];
        s.outputs.push_back({out.name, t.shape, t.dtype});
    }
    s.own = s.make_workspace();
    s.input_setter.assign(s.inputs.size(), std::thread::id());
    auto views = make_ref<OutputViews>();
    const_cast<OutputViews*>(views.get())->outputs = s.own->outputs;
    s.views = std::move(views);
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

GraphExecutor GraphExecutor::from_bundle(const AnvilBundle& bundle) {
    Module kernels = bundle_module(bundle);
    std::span<const std::byte> params(static_cast<const std::byte*>(bundle.params),
                                      bundle.params_size);
    std::string plan(bundle.plan_json, bundle.plan_size);
    try {
        // The parameters are static data of the program: read in place (the module stands in as
        // their owner).
        return GraphExecutor(plan_from_json(plan), params, kernels, Ref<Object>(kernels.node()));
    } catch (const UserError& e) {
        user_error() << "cannot run the bundled model: " << e.what();
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

namespace {

std::string name_list(const std::vector<GraphTensorInfo>& list) {
    std::string known;
    for (const GraphTensorInfo& t : list) known += (known.empty() ? "'" : ", '") + t.name + "'";
    return known.empty() ? "none" : known;
}

}  // namespace

int GraphExecutor::input_index(const std::string& name) const {
    for (size_t i = 0; i < state_->inputs.size(); ++i) {
        if (state_->inputs[i].name == name) return static_cast<int>(i);
    }
    user_error() << "graph executor: the model has no input named '" << name << "'; its inputs are "
                 << name_list(state_->inputs);
    ANVIL_UNREACHABLE();
}

const GraphTensorInfo& GraphExecutor::input_info(int index) const {
    if (index < 0 || index >= num_inputs()) {
        user_error() << "graph executor: input index " << index
                     << " is out of range; the model has " << num_inputs()
                     << " input(s): " << name_list(state_->inputs);
    }
    return state_->inputs[index];
}

const GraphTensorInfo& GraphExecutor::output_info(int index) const {
    if (index < 0 || index >= num_outputs()) {
        user_error() << "graph executor: output index " << index
                     << " is out of range; the model has " << num_outputs()
                     << " output(s): " << name_list(state_->outputs);
    }
    return state_->outputs[index];
}

namespace {

void copy_in(const NDArray& dst, const DLTensor* src) {
    const char* data = static_cast<const char*>(src->data) + src->byte_offset;
    if (dst.nbytes() && data != dst.raw_data()) std::memmove(dst.raw_data(), data, dst.nbytes());
}

void copy_out(const NDArray& src, DLTensor* dst) {
    char* data = static_cast<char*>(dst->data) + dst->byte_offset;
    if (src.nbytes() && data != src.raw_data()) std::memmove(data, src.raw_data(), src.nbytes());
}

}  // namespace

void GraphExecutor::set_input(int index, const DLTensor* value) {
    const GraphTensorInfo& info = input_info(index);
    State& s = *state_;
    const std::string where = "graph executor: set_input: " + s.describe("input", index);
    check_boundary_tensor(where, value, info.shape, info.dtype);
    State::Use use(s, "set_input");
    copy_in(s.own->inputs[index], value);
    s.input_setter[index] = std::this_thread::get_id();
}

NDArray GraphExecutor::get_input(int index) const {
    input_info(index);
    const State& s = *state_;
    State::Use use(s, "get_input");
    // The caller may fill it: it counts as set by this thread.
    s.input_setter[index] = std::this_thread::get_id();
    return s.own->inputs[index];
}

void GraphExecutor::run() {
    State& s = *state_;
    State::Use use(s, "run");
    s.check_inputs_are_ours("run");
    s.last_runner = std::this_thread::get_id();
    s.run_calls(*s.own);
}

void GraphExecutor::run_profiled() {
    State& s = *state_;
    State::Use use(s, "run_profiled");
    s.check_inputs_are_ours("run_profiled");
    s.last_runner = std::this_thread::get_id();
    s.times.resize(s.own->calls.size());
    for (size_t i = 0; i < s.own->calls.size(); ++i) {
        auto start = std::chrono::steady_clock::now();
        s.call_kernel(s.own->calls[i]);
        auto end = std::chrono::steady_clock::now();
        s.times[i].calls += 1;
        s.times[i].ns += std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    }
    ++s.profiled_runs;
}

Profile GraphExecutor::profile() const {
    const State& s = *state_;
    State::Use use(s, "profile");
    Profile p;
    p.runs = s.profiled_runs;
    std::unordered_map<std::string, size_t> index;  // kernel name → entry of p.kernels
    for (size_t i = 0; i < s.times.size(); ++i) {
        const PlanNode& node = s.plan.nodes[s.own->calls[i].node];
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
    State::Use use(*state_, "reset_profile");
    state_->times.clear();
    state_->profiled_runs = 0;
}

NDArray GraphExecutor::get_param(const std::string& name) const {
    const State& s = *state_;
    for (size_t i = 0; i < s.plan.nodes.size(); ++i) {
        if (s.plan.nodes[i].kind == PlanNodeKind::param && s.plan.nodes[i].name == name) {
            return s.param_tensors[i];
        }
    }
    user_error() << "graph executor: the model has no param named '" << name << "'";
    ANVIL_UNREACHABLE();
}

NDArray GraphExecutor::get_output(int index) const {
    const GraphTensorInfo& info = output_info(index);
    const State& s = *state_;
    const std::string what = "get_output(" + std::to_string(index) + ")";
    State::Use use(s, what);
    s.check_last_run_is_ours(what);
    // A view counted in `views`, so that run() knows whether any is still held.
    return NDArray::wrap(s.own->outputs[index].raw_data(), info.shape, info.dtype,
                         make_ref<OutputView>(s.views));
}

DLTensor* GraphExecutor::borrow_output(int index) const {
    output_info(index);
    const State& s = *state_;
    const std::string what = "get_output(" + std::to_string(index) + ")";
    State::Use use(s, what);
    s.check_last_run_is_ours(what);
    return s.own->outputs[index].tensor();
}

void GraphExecutor::copy_output(int index, DLTensor* dst) const {
    const GraphTensorInfo& info = output_info(index);
    const State& s = *state_;
    const std::string what = "copy_output(" + std::to_string(index) + ")";
    check_boundary_tensor("graph executor: " + what + ": " + s.describe("output", index), dst,
                          info.shape, info.dtype);
    State::Use use(s, what);
    s.check_last_run_is_ours(what);
    copy_out(s.own->outputs[index], dst);
}

void GraphExecutor::run_with(std::span<const DLTensor* const> inputs,
                             std::span<DLTensor* const> outputs) const {
    const State& s = *state_;
    if (inputs.size() != s.inputs.size()) {
        user_error() << "graph executor: run_with: the model takes " << s.inputs.size()
                     << " input(s) (" << name_list(s.inputs) << "), given " << inputs.size();
    }
    if (outputs.size() != s.outputs.size()) {
        user_error() << "graph executor: run_with: the model has " << s.outputs.size()
                     << " output(s) (" << name_list(s.outputs) << "), given " << outputs.size()
                     << " to write";
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        check_boundary_tensor(
            "graph executor: run_with: " + s.describe("input", static_cast<int>(i)), inputs[i],
            s.inputs[i].shape, s.inputs[i].dtype);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
        check_boundary_tensor(
            "graph executor: run_with: " + s.describe("output", static_cast<int>(i)), outputs[i],
            s.outputs[i].shape, s.outputs[i].dtype);
    }
    // A workspace of this call's own: from the idle ones, else a new one.
    std::unique_ptr<Workspace> w;
    {
        std::lock_guard<std::mutex> lock(s.pool_mutex);
        if (!s.idle.empty()) {
            w = std::move(s.idle.back());
            s.idle.pop_back();
        } else {
            ++s.workspaces_made;
        }
    }
    if (!w) w = s.make_workspace();
    // Back to the pool however the call ends; the next call overwrites all it reads.
    struct GiveBack {
        const State& s;
        std::unique_ptr<Workspace>& w;
        ~GiveBack() {
            std::lock_guard<std::mutex> lock(s.pool_mutex);
            s.idle.push_back(std::move(w));
        }
    } give_back{s, w};
    for (size_t i = 0; i < inputs.size(); ++i) copy_in(w->inputs[i], inputs[i]);
    s.run_calls(*w);
    for (size_t i = 0; i < outputs.size(); ++i) copy_out(w->outputs[i], outputs[i]);
}

std::vector<NDArray> GraphExecutor::run_with(const std::vector<NDArray>& inputs) const {
    std::vector<const DLTensor*> in;
    for (const NDArray& a : inputs) in.push_back(a.defined() ? a.tensor() : nullptr);
    std::vector<NDArray> out;
    std::vector<DLTensor*> out_tensors;
    for (const GraphTensorInfo& info : state_->outputs) {
        out.push_back(NDArray::empty(info.shape, info.dtype));
        out_tensors.push_back(out.back().tensor());
    }
    run_with(in, out_tensors);
    return out;
}

int GraphExecutor::num_workspaces() const {
    std::lock_guard<std::mutex> lock(state_->pool_mutex);
    return state_->workspaces_made;
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

int anvil_graph_executor_create_from_bundle(const AnvilBundle* bundle,
                                            AnvilGraphExecutorHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr)
            anvil::user_error() << "anvil_graph_executor_create_from_bundle: out is NULL";
        *out = nullptr;
        if (bundle == nullptr) {
            anvil::user_error() << "anvil_graph_executor_create_from_bundle: bundle is NULL";
        }
        *out = new AnvilGraphExecutorObj{anvil::runtime::GraphExecutor::from_bundle(*bundle)};
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
        *out = executor_of(h, "anvil_graph_executor_get_output").borrow_output(index);
        return 0;
    });
}

int anvil_graph_executor_copy_output(AnvilGraphExecutorHandle h, int index, DLTensor* dst) {
    return catch_to_status([&] {
        executor_of(h, "anvil_graph_executor_copy_output").copy_output(index, dst);
        return 0;
    });
}

int anvil_graph_executor_run_with(AnvilGraphExecutorHandle h, const DLTensor* const* inputs,
                                  int num_inputs, DLTensor* const* outputs, int num_outputs) {
    return catch_to_status([&] {
        const char* fn = "anvil_graph_executor_run_with";
        auto& ex = executor_of(h, fn);
        if (num_inputs < 0 || num_outputs < 0) {
            anvil::user_error() << fn << ": num_inputs (" << num_inputs << ") and num_outputs ("
                                << num_outputs << ") must not be negative";
        }
        if (inputs == nullptr && num_inputs > 0) {
            anvil::user_error() << fn << ": inputs is NULL but num_inputs is " << num_inputs;
        }
        if (outputs == nullptr && num_outputs > 0) {
            anvil::user_error() << fn << ": outputs is NULL but num_outputs is " << num_outputs;
        }
        ex.run_with({inputs, static_cast<size_t>(num_inputs)},
                    {outputs, static_cast<size_t>(num_outputs)});
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
