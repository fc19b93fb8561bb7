#include "runtime/vm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "runtime/library_data.h"
#include "runtime/packed_func.h"
#include "runtime/param_blob.h"
#include "runtime/registry.h"
#include "runtime/shape_text.h"
#include "runtime/string_tensor.h"
#include "runtime/vm_sequence.h"
#include "runtime/vm_string.h"

namespace anvil::runtime {

namespace {

// The tensor operand of a string instruction.
const NDArray& tensor_in(const VMValue& v, const VMInstruction& in) {
    if (v.kind != VMValue::Kind::tensor) {
        user_error() << "vm: node '" << in.node << "': " << vm_op_name(in.op)
                     << " takes a tensor, not "
                     << (v.kind == VMValue::Kind::none ? "nothing" : "a tuple");
    }
    return v.tensor;
}

// A condition: non-zero (a float compares as a float, so 0.5 is true).
bool truthy(const NDArray& t) {
    DLDataType d = t.dtype();
    const auto* p = static_cast<const uint8_t*>(t.raw_data()) + t.tensor()->byte_offset;
    if (d.code == kDLFloat && d.bits == 32) {
        float f;
        std::memcpy(&f, p, 4);
        return f != 0.0f;
    }
    if (d.code == kDLFloat && d.bits == 64) {
        double f;
        std::memcpy(&f, p, 8);
        return f != 0.0;
    }
    return element_as_int64(t) != 0;
}

// "n = 4, seq = 7": the symbolic dimensions' values, for messages.
std::string slot_values(const VMFunction& f, const std::vector<int64_t>& slots) {
    std::string out;
    for (size_t s = 0; s < f.slot_names.size() && s < slots.size(); ++s) {
        out += (out.empty() ? "" : ", ") + f.slot_names[s] + " = " + std::to_string(slots[s]);
    }
    return out;
}

// Kernels require aligned data (they check and fail); an input that is not aligned is copied
// into aligned memory from the pool, so any alignment is accepted at the boundary.
void align_input(VMValue& v, const MemoryPool& pool) {
    if (v.kind == VMValue::Kind::tuple) {
        for (VMValue& f : v.fields) align_input(f, pool);
        return;
    }
    if (v.kind != VMValue::Kind::tensor || !v.tensor.defined()) return;
    const NDArray& t = v.tensor;
    auto address = reinterpret_cast<uintptr_t>(t.raw_data()) + t.tensor()->byte_offset;
    if (address % ANVIL_TENSOR_ALIGNMENT == 0 || is_string_dtype(t.dtype())) return;
    NDArray copy = pool.alloc({t.shape().begin(), t.shape().end()}, t.dtype());
    copy.copy_from(reinterpret_cast<const void*>(address), copy.nbytes());
    v = VMValue(copy);
}

void flatten(const VMValue& v, std::vector<NDArray>* out) {
    if (v.kind == VMValue::Kind::tensor) {
        out->push_back(v.tensor);
    } else if (v.kind == VMValue::Kind::tuple) {
        for (const auto& f : v.fields) flatten(f, out);
    }
}

}  // namespace

VMValue VMValue::tuple(std::vector<VMValue> fields) {
    VMValue v;
    v.kind = Kind::tuple;
    v.fields = std::move(fields);
    return v;
}

struct VirtualMachine::State {
    VMProgram program;
    Module module;
    ParamBlob params;
    Ref<MemoryPool> pool = make_ref<MemoryPool>();
    std::unordered_map<std::string, const VMFunction*> functions;
    std::unordered_map<std::string, PackedFunc> kernels;  // looked up once
    // Runs on several threads may time kernels at once: the flag is atomic, the times locked.
    std::atomic<bool> profiling{false};
    mutable std::mutex profile_mutex;
    int64_t profiled_runs = 0;
    std::map<std::string, KernelProfile> times;  // by kernel name; filled while profiling
    std::unordered_map<std::string, NDArray> param_views;
    std::vector<std::string> input_names;

    VMValue call(const VMFunction& f, std::vector<VMValue> args, int depth);
    void match_shape(const VMFunction& f, const VMInstruction& in, const VMValue& v,
                     std::vector<int64_t>& slots) const;
    void match_value(const VMFunction& f, const VMInstruction& in, const VMValue& v,
                     std::vector<int64_t>& slots) const;
    void call_kernel(const VMInstruction& in, std::vector<VMValue>& regs,
                     const std::vector<int64_t>& slots);
    void call_packed(const VMInstruction& in, const std::string& callee, const PackedFunc& fn,
                     std::vector<VMValue>& regs, const std::vector<int64_t>& slots);
    NDArray reshape(const VMFunction& f, const VMInstruction& in, const std::vector<VMValue>& regs,
                    std::vector<int64_t>& slots);
    VMValue loop(const VMInstruction& in, const std::vector<VMValue>& regs,
                 const std::vector<int64_t>& slots, int depth);
    NDArray loop_scalar_tensor(int64_t value, DLDataType dtype) const;
};

VirtualMachine::VirtualMachine(VMProgram program, std::span<const std::byte> params, Module kernels)
    : VirtualMachine(std::move(program), params, std::move(kernels), nullptr) {}

VirtualMachine::VirtualMachine(VMProgram program, std::span<const std::byte> params, Module kernels,
                               Ref<Object> params_owner)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    validate_program(program, static_cast<int64_t>(params.size()));
    if (!kernels.defined()) user_error() << "vm: the kernel module is null";
    s.program = std::move(program);
    s.module = std::move(kernels);
    s.params = ParamBlob(params, std::move(params_owner));
    for (const auto& [name, p] : s.program.params) s.param_views[name] = s.params.view(p);
    for (const VMFunction& f : s.program.functions) {
        s.functions[f.name] = &f;
        for (const VMInstruction& in : f.code) {
            if (in.op != VMOp::call_kernel) continue;
            std::vector<std::string> names = {in.name};
            for (const auto& v : in.variants) names.push_back(v.kernel);
            for (const auto& name : names) {
                if (s.kernels.count(name)) continue;
                PackedFunc fn = s.module.get_function(name);
                if (!fn.defined()) {
                    user_error() << "vm: function '" << f.name << "' calls kernel '" << name
                                 << "', which the module does not have";
                }
                s.kernels[name] = fn;
            }
        }
    }
    s.input_names = s.program.functions[0].params;
}

VirtualMachine VirtualMachine::load(const std::string& so_path) {
    ModelArtifact a =
        open_model_artifact(so_path, ANVIL_VM_PROGRAM_SYMBOL,
                            "it holds no VM program (no " ANVIL_VM_PROGRAM_SYMBOL " symbol)");
    try {
        return VirtualMachine(program_from_json(a.document), a.params, std::move(a.module),
                              Ref<Object>(a.data));
    } catch (const UserError& e) {
        user_error() << "cannot load model '" << so_path << "': " << e.what();
    }
    ANVIL_UNREACHABLE();
}

VirtualMachine::VirtualMachine(VirtualMachine&&) noexcept = default;
VirtualMachine& VirtualMachine::operator=(VirtualMachine&&) noexcept = default;
VirtualMachine::~VirtualMachine() = default;

const std::vector<std::string>& VirtualMachine::input_names() const {
    return state_->input_names;
}
const std::vector<std::string>& VirtualMachine::output_names() const {
    return state_->program.outputs;
}

int VirtualMachine::input_index(const std::string& name) const {
    const auto& names = state_->input_names;
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) return static_cast<int>(i);
    }
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    user_error() << "vm: the model has no input named '" << name << "' (its inputs: " << known
                 << ")";
    ANVIL_UNREACHABLE();
}

std::vector<NDArray> VirtualMachine::run(const std::vector<NDArray>& inputs) {
    std::vector<NDArray> out;
    flatten(call_main({inputs.begin(), inputs.end()}), &out);
    return out;
}

std::vector<VMValue> VirtualMachine::run_values(std::vector<VMValue> inputs) {
    const VMProgram& p = state_->program;
    VMValue result = call_main(std::move(inputs));
    bool tuple = p.tuple_result || p.outputs.size() > 1;
    if (!tuple || result.kind != VMValue::Kind::tuple) return {std::move(result)};
    return std::move(result.fields);
}

VMValue VirtualMachine::call_main(std::vector<VMValue> inputs) {
    const VMFunction& main = state_->program.functions[0];
    if (inputs.size() != main.params.size()) {
        std::string names;
        for (const auto& n : main.params) names += (names.empty() ? "'" : ", '") + n + "'";
        user_error() << "vm: the model takes " << main.params.size() << " input(s), given "
                     << inputs.size() << " (its inputs: " << (names.empty() ? "none" : names)
                     << ")";
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].kind == VMValue::Kind::tensor && !inputs[i].tensor.defined()) {
            user_error() << "vm: input " << i << " '" << main.params[i] << "' is null";
        }
    }
    for (VMValue& v : inputs) align_input(v, *state_->pool);
    if (state_->profiling.load(std::memory_order_relaxed)) {
        std::lock_guard<std::mutex> lock(state_->profile_mutex);
        ++state_->profiled_runs;
    }
    return state_->call(main, std::move(inputs), 0);
}

VMValue VirtualMachine::invoke(const std::string& function, std::vector<VMValue> args) {
    auto it = state_->functions.find(function);
    if (it == state_->functions.end()) {
        user_error() << "vm: the program has no function named '" << function << "'";
    }
    if (args.size() != it->second->params.size()) {
        user_error() << "vm: '" << function << "' takes " << it->second->params.size()
                     << " argument(s), given " << args.size();
    }
    return state_->call(*it->second, std::move(args), 0);
}

DLDataType VirtualMachine::input_dtype(int index) const {
    const VMFunction& main = state_->program.functions[0];
    if (index < 0 || index >= static_cast<int>(main.params.size())) {
        user_error() << "vm: input index " << index << " out of range";
    }
    for (const VMInstruction& in : main.code) {
        if (in.op == VMOp::match_shape && in.reg == index) return in.dtype;
    }
    return {kDLFloat, 32, 1};
}

VMInputInfo VirtualMachine::input_info(int index) const {
    const VMFunction& main = state_->program.functions[0];
    if (index < 0 || index >= static_cast<int>(main.params.size())) {
        user_error() << "vm: input index " << index << " out of range";
    }
    VMInputInfo info{.name = main.params[index]};
    for (const VMInstruction& in : main.code) {
        if (in.op != VMOp::match_shape || in.reg != index) continue;
        info.dtype = in.dtype;
        info.sequence = (in.index & kMatchSequence) != 0;
        info.optional = (in.index & kMatchMayBeNone) != 0;
        break;
    }
    return info;
}

bool VirtualMachine::is_vm_artifact(const std::string& so_path) {
    return LibraryData(so_path).text(ANVIL_VM_PROGRAM_SYMBOL) != nullptr;
}

void VirtualMachine::set_profiling(bool on) {
    state_->profiling.store(on, std::memory_order_relaxed);
}

Profile VirtualMachine::profile() const {
    std::lock_guard<std::mutex> lock(state_->profile_mutex);
    Profile p;
    p.runs = state_->profiled_runs;
    for (const auto& [name, k] : state_->times) p.kernels.push_back(k);
    std::stable_sort(
        p.kernels.begin(), p.kernels.end(),
        [](const KernelProfile& a, const KernelProfile& b) { return a.total_ms > b.total_ms; });
    return p;
}

void VirtualMachine::reset_profile() {
    std::lock_guard<std::mutex> lock(state_->profile_mutex);
    state_->times.clear();
    state_->profiled_runs = 0;
}

NDArray VirtualMachine::get_param(const std::string& name) const {
    auto it = state_->param_views.find(name);
    if (it == state_->param_views.end()) {
        user_error() << "vm: the model has no param named '" << name << "'";
    }
    return it->second;
}

MemoryPoolStats VirtualMachine::pool_stats() const {
    return state_->pool->stats();
}
const VMProgram& VirtualMachine::program() const {
    return state_->program;
}

void VirtualMachine::State::match_shape(const VMFunction& f, const VMInstruction& in,
                                        const VMValue& v, std::vector<int64_t>& slots) const {
    // A model input's message also gives its index, as the graph executor's do.
    if (&f != &program.functions[0] || in.reg < 0 || in.reg >= static_cast<int>(f.params.size()) ||
        in.what != "input '" + f.params[in.reg] + "'") {
        match_value(f, in, v, slots);
        return;
    }
    try {
        match_value(f, in, v, slots);
    } catch (const UserError& e) {
        user_error() << e.what() << " (input " << in.reg << " of " << f.params.size() << ")";
    }
}

void VirtualMachine::State::match_value(const VMFunction& f, const VMInstruction& in,
                                        const VMValue& v, std::vector<int64_t>& slots) const {
    if (in.index & kMatchMayBeNone && v.kind == VMValue::Kind::none) return;
    if (in.index & kMatchSequence) {
        if (v.kind != VMValue::Kind::tuple)
            user_error() << "vm: " << in.what << " must be a sequence";
        for (size_t i = 0; i < v.fields.size(); ++i) {
            VMInstruction element = in;
            element.index = in.index & kMatchAnyRank;
            element.what = "element " + std::to_string(i) + " of " + in.what;
            match_value(f, element, v.fields[i], slots);
        }
        return;
    }
    if (v.kind != VMValue::Kind::tensor) {
        user_error() << "vm: " << in.what << " must be a tensor";
    }
    const NDArray& t = v.tensor;
    if (in.check_dtype && !dl_dtype_equal(t.dtype(), in.dtype)) {
        user_error() << "vm: " << in.what << " has dtype " << dl_dtype_to_string(t.dtype())
                     << ", expected " << dl_dtype_to_string(in.dtype);
    }
    if (in.index & kMatchAnyRank) return;
    auto expected = [&] {
        std::string s = "[";
        for (size_t k = 0; k < in.dims.size(); ++k) {
            const DimMatch& d = in.dims[k];
            std::string text =
                d.bind_slot >= 0
                    ? shape_code_text({{ShapeToken::Kind::slot, d.bind_slot}}, f.slot_names)
                : d.check.empty() ? "?"
                                  : shape_code_text(d.check, f.slot_names);
            s += (k ? ", " : "") + text;
        }
        return s + "]";
    };
    if (t.shape().size() != in.dims.size()) {
        user_error() << "vm: " << in.what << " has shape " << shape_text(t.shape()) << ", expected "
                     << expected();
    }
    for (size_t k = 0; k < in.dims.size(); ++k) {
        const DimMatch& d = in.dims[k];
        int64_t actual = t.shape()[k];
        if (d.bind_slot >= 0) {
            slots[d.bind_slot] = actual;
            continue;
        }
        if (d.check.empty()) continue;
        int64_t want = eval_shape_code(d.check, slots);
        if (want != actual) {
            std::string bound = slot_values(f, slots);
            user_error() << "vm: " << in.what << " has shape " << shape_text(t.shape())
                         << ", expected " << expected() << (bound.empty() ? "" : " with " + bound)
                         << " (dimension " << k << " is " << actual << ", expected " << want << ")";
        }
    }
}

// Calls the instruction's kernel, or the first of its variants whose condition holds (a kernel
// specialized for the bound sizes).
void VirtualMachine::State::call_kernel(const VMInstruction& in, std::vector<VMValue>& regs,
                                        const std::vector<int64_t>& slots) {
    const std::string* name = &in.name;
    for (const auto& v : in.variants) {
        if (eval_shape_code(v.when, slots) != 0) {
            name = &v.kernel;
            break;
        }
    }
    const PackedFunc& fn = kernels.at(*name);
    if (!profiling.load(std::memory_order_relaxed)) {
        call_packed(in, *name, fn, regs, slots);
        return;
    }
    auto start = std::chrono::steady_clock::now();
    call_packed(in, *name, fn, regs, slots);
    auto end = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(profile_mutex);
    KernelProfile& k = times[*name];
    k.kernel = *name;
    k.calls += 1;
    k.total_ms += std::chrono::duration<double, std::milli>(end - start).count();
}

void VirtualMachine::State::call_packed(const VMInstruction& in, const std::string& callee,
                                        const PackedFunc& fn, std::vector<VMValue>& regs,
                                        const std::vector<int64_t>& slots) {
    std::vector<AnvilValue> values(in.args.size() + in.shape.size());
    std::vector<int> codes(values.size());
    // A kernel's scalar parameters (symbolic dimensions) follow its tensors.
    for (size_t i = 0; i < in.shape.size(); ++i) {
        values[in.args.size() + i].v_int64 = eval_shape_code(in.shape[i], slots);
        codes[in.args.size() + i] = kAnvilInt;
    }
    for (size_t i = 0; i < in.args.size(); ++i) {
        const VMValue& v = regs[in.args[i]];
        if (v.kind == VMValue::Kind::tensor) {
            values[i].v_handle = v.tensor.tensor();
            codes[i] = kAnvilDLTensor;
        } else if (v.kind == VMValue::Kind::none) {
            values[i].v_handle = nullptr;
            codes[i] = kAnvilNull;
        } else {
            user_error() << "vm: node '" << in.node << "': " << callee << " argument " << i
                         << " is a tuple; packed calls take tensors";
        }
    }
    RetValue ret;
    try {
        ret = fn.call(values.data(), codes.data(), static_cast<int>(values.size()));
    } catch (const UserError& e) {
        user_error() << "vm: node '" << in.node << "' ("
                     << (in.op == VMOp::call_kernel ? "kernel " : "function ") << callee
                     << ") failed: " << e.what();
    }
    if (in.dst < 0) return;
    // A returned value is copied into a tensor the VM owns (a returned DLTensor* is borrowed).
    switch (ret.type_code()) {
        case kAnvilInt: {
            NDArray t = NDArray::empty({}, {kDLInt, 64, 1});
            *static_cast<int64_t*>(t.raw_data()) = ret.as_int();
            regs[in.dst] = VMValue(t);
            break;
        }
        case kAnvilFloat: {
            NDArray t = NDArray::empty({}, {kDLFloat, 32, 1});
            *static_cast<float*>(t.raw_data()) = static_cast<float>(ret.as_float());
            regs[in.dst] = VMValue(t);
            break;
        }
        case kAnvilDLTensor: {
            DLTensor* src = ret.as_tensor();
            if (is_string_dtype(src->dtype)) {
                // Its strings belong to the callee: nothing here could keep them alive.
                user_error() << "vm: node '" << in.node << "': " << callee
                             << " returned a string tensor; return strings through an output "
                                "argument instead";
            }
            std::vector<int64_t> shape(src->shape, src->shape + src->ndim);
            NDArray t = pool->alloc(shape, src->dtype);
            NDArray view = NDArray::wrap(static_cast<char*>(src->data) + src->byte_offset, shape,
                                         src->dtype, nullptr);
            std::memcpy(t.raw_data(), view.raw_data(), view.nbytes());
            regs[in.dst] = VMValue(t);
            break;
        }
        default:
            regs[in.dst] = VMValue();
    }
}

// ONNX Reshape at run time: the target comes from a tensor's values; 0 copies the input's
// dimension (unless allowzero), one -1 is inferred; the element counts must agree. The result is
// a view of the input (same storage), and its dimensions are bound to the instruction's slots.
NDArray VirtualMachine::State::reshape(const VMFunction& f, const VMInstruction& in,
                                       const std::vector<VMValue>& regs,
                                       std::vector<int64_t>& slots) {
    const VMValue& x = regs[in.reg];
    const VMValue& target = regs[in.args[0]];
    const std::string where = "vm: node '" + in.node + "': ";
    if (x.kind != VMValue::Kind::tensor || target.kind != VMValue::Kind::tensor ||
        target.tensor.num_elements() != static_cast<int64_t>(in.slots.size())) {
        user_error() << where << "reshape expects a tensor and " << in.slots.size()
                     << " integer(s) giving a shape";
    }
    std::span<const int64_t> in_shape = x.tensor.shape();
    std::vector<int64_t> shape(in.slots.size());
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        int64_t v = element_as_int64(target.tensor, i);
        if (v == 0 && in.index == 0) {
            if (i >= in_shape.size()) {
                user_error() << where << "the shape's entry " << i
                             << " is 0 (copy the input's dimension) but "
                             << "the input has " << in_shape.size() << " dimension(s)";
            }
            v = in_shape[i];
        } else if (v == -1) {
            if (infer >= 0) user_error() << where << "the shape has more than one -1";
            infer = static_cast<int>(i);
            continue;
        } else if (v < 0) {
            user_error() << where << "the shape's entry " << i << " is " << v;
        }
        shape[i] = v;
        known *= v;
    }
    int64_t total = x.tensor.num_elements();
    if (infer >= 0) {
        if (known == 0 || total % known != 0) {
            user_error() << where << "cannot reshape " << x.tensor.str() << " (" << total
                         << " elements) with a -1 beside dimensions totalling " << known;
        }
        shape[infer] = total / known;
    } else if (known != total) {
        std::string dims;
        for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        user_error() << where << "cannot reshape " << x.tensor.str() << " (" << total
                     << " elements) into [" << dims << "] (" << known << " elements)";
    }
    for (size_t i = 0; i < shape.size(); ++i) slots[in.slots[i]] = shape[i];
    return x.tensor.view(shape, x.tensor.dtype());
}

// A one-element tensor argument of a loop.
const NDArray& loop_scalar(const VMValue& v, const std::string& node, const char* what) {
    if (v.kind != VMValue::Kind::tensor || v.tensor.num_elements() != 1) {
        user_error() << "vm: node '" << node << "': the loop's " << what
                     << " must be a one-element tensor";
    }
    return v.tensor;
}

NDArray VirtualMachine::State::loop_scalar_tensor(int64_t value, DLDataType dtype) const {
    NDArray t = pool->alloc({}, dtype);
    if (dtype.bits == 64) {
        *static_cast<int64_t*>(t.raw_data()) = value;
    } else {
        *static_cast<uint8_t*>(t.raw_data()) = static_cast<uint8_t>(value != 0);
    }
    return t;
}

VMValue VirtualMachine::State::loop(const VMInstruction& in, const std::vector<VMValue>& regs,
                                    const std::vector<int64_t>& slots, int depth) {
    const VMFunction& body = *functions.at(in.name);
    int64_t max_trip = element_as_int64(loop_scalar(regs[in.args[0]], in.node, "trip count"));
    bool cond = truthy(loop_scalar(regs[in.args[1]], in.node, "condition"));
    size_t carried = static_cast<size_t>(in.index);
    std::vector<VMValue> values;  // carried values, then the constants
    for (size_t i = 2; i < in.args.size(); ++i) values.push_back(regs[in.args[i]]);
    size_t num_scans = in.scan_ranks.size();
    std::vector<std::vector<NDArray>> scans(num_scans);
    for (int64_t i = 0; i < max_trip && cond; ++i) {
        // The body sees the condition it runs under: true.
        std::vector<VMValue> args = {VMValue(loop_scalar_tensor(i, {kDLInt, 64, 1})),
                                     VMValue(loop_scalar_tensor(1, {kDLUInt, 1, 1}))};
        args.insert(args.end(), values.begin(), values.end());
        VMValue out = call(body, std::move(args), depth + 1);
        if (out.kind != VMValue::Kind::tuple || out.fields.size() != 1 + carried + num_scans) {
            user_error() << "vm: node '" << in.node << "': the loop body '" << body.name
                         << "' must return the condition, " << carried << " carried and "
                         << num_scans << " scan value(s)";
        }
        cond = truthy(loop_scalar(out.fields[0], in.node, "condition"));
        for (size_t k = 0; k < carried; ++k) values[k] = std::move(out.fields[1 + k]);
        for (size_t k = 0; k < num_scans; ++k) {
            const VMValue& s = out.fields[1 + carried + k];
            if (s.kind != VMValue::Kind::tensor) {
                user_error() << "vm: node '" << in.node << "': scan output " << k
                             << " is not a tensor";
            }
            scans[k].push_back(s.tensor);
        }
    }
    std::vector<VMValue> result(values.begin(), values.begin() + carried);
    size_t dim = 0;
    for (size_t k = 0; k < num_scans; ++k) {
        std::vector<int64_t> empty_shape = {0};
        for (int d = 0; d < in.scan_ranks[k]; ++d) {
            empty_shape.push_back(eval_shape_code(in.shape[dim++], slots));
        }
        result.push_back(VMValue(
            scans[k].empty() ? pool->alloc(empty_shape, in.scan_dtypes[k])
                             : concat_tensors(scans[k], 0, true, *pool, in.node, "iteration")));
    }
    return VMValue::tuple(std::move(result));
}

VMValue VirtualMachine::State::call(const VMFunction& f, std::vector<VMValue> args, int depth) {
    constexpr int kMaxDepth = 1000;
    if (depth > kMaxDepth) user_error() << "vm: call depth exceeds " << kMaxDepth;
    std::vector<VMValue> regs(f.num_registers);
    std::vector<int64_t> slots(f.num_slots, 0);
    for (size_t i = 0; i < args.size(); ++i) regs[i] = std::move(args[i]);
    size_t pc = 0;
    while (pc < f.code.size()) {
        const VMInstruction& in = f.code[pc++];
        switch (in.op) {
            case VMOp::match_shape:
                match_shape(f, in, regs[in.reg], slots);
                break;
            case VMOp::load_param:
                regs[in.dst] = VMValue(param_views.at(in.name));
                break;
            case VMOp::alloc: {
                std::vector<int64_t> shape;
                for (const auto& c : in.shape) {
                    int64_t d = eval_shape_code(c, slots);
                    if (d < 0) {
                        // Run-time broadcasting gives -1 for sizes that do not fit.
                        user_error() << "vm: node '" << in.node << "': dimension "
                                     << shape_code_text(c, f.slot_names) << " is negative (" << d
                                     << ") with " << slot_values(f, slots)
                                     << ": the operands' shapes do not fit together (e.g. they "
                                        "cannot be broadcast)";
                    }
                    shape.push_back(d);
                }
                regs[in.dst] = VMValue(pool->alloc(shape, in.dtype));
                break;
            }
            case VMOp::call_kernel:
                call_kernel(in, regs, slots);
                break;
            case VMOp::call_packed: {
                PackedFunc fn = get_global_func(in.name);
                if (!fn.defined()) {
                    user_error() << "vm: node '" << in.node << "' calls '" << in.name
                                 << "', which is not a registered function";
                }
                call_packed(in, in.name, fn, regs, slots);
                break;
            }
            case VMOp::call_func: {
                std::vector<VMValue> call_args;
                for (int a : in.args) call_args.push_back(regs[a]);
                regs[in.dst] = call(*functions.at(in.name), std::move(call_args), depth + 1);
                break;
            }
            case VMOp::load_shape: {
                const VMValue& v = regs[in.reg];
                if (v.kind != VMValue::Kind::tensor ||
                    v.tensor.num_elements() != static_cast<int64_t>(in.slots.size())) {
                    user_error() << "vm: node '" << in.node << "': expected a tensor of "
                                 << in.slots.size() << " integer(s) giving a shape";
                }
                for (size_t i = 0; i < in.slots.size(); ++i) {
                    slots[in.slots[i]] = element_as_int64(v.tensor, i);
                }
                break;
            }
            case VMOp::check_shape:
                if (eval_shape_code(in.shape[0], slots) == 0) {
                    user_error() << "vm: node '" << in.node << "': " << in.what << " (the check "
                                 << shape_code_text(in.shape[0], f.slot_names) << " failed with "
                                 << slot_values(f, slots) << ")";
                }
                break;
            case VMOp::reshape:
                regs[in.dst] = VMValue(reshape(f, in, regs, slots));
                break;
            case VMOp::shape_tensor: {
                std::vector<int64_t> shape;
                if (in.index == 0) shape.push_back(static_cast<int64_t>(in.shape.size()));
                NDArray t = NDArray::empty(shape, in.dtype);
                for (size_t i = 0; i < in.shape.size(); ++i) {
                    int64_t v = eval_shape_code(in.shape[i], slots);
                    if (in.dtype.bits == 64) {
                        static_cast<int64_t*>(t.raw_data())[i] = v;
                    } else {
                        static_cast<int32_t*>(t.raw_data())[i] = static_cast<int32_t>(v);
                    }
                }
                regs[in.dst] = VMValue(t);
                break;
            }
            case VMOp::tuple: {
                std::vector<VMValue> fields;
                for (int a : in.args) fields.push_back(regs[a]);
                regs[in.dst] = VMValue::tuple(std::move(fields));
                break;
            }
            case VMOp::get_item: {
                const VMValue& t = regs[in.reg];
                if (t.kind != VMValue::Kind::tuple || in.index < 0 ||
                    in.index >= static_cast<int64_t>(t.fields.size())) {
                    user_error() << "vm: node '" << in.node << "': no item " << in.index;
                }
                regs[in.dst] = VMValue(t.fields[in.index]);
                break;
            }
            case VMOp::seq_length:
                regs[in.dst] = VMValue(sequence_length(regs[in.reg], in.node));
                break;
            case VMOp::seq_at:
                regs[in.dst] = sequence_at(regs[in.reg], regs[in.args[0]], in.node);
                break;
            case VMOp::seq_insert:
                regs[in.dst] =
                    sequence_insert(regs[in.reg], regs[in.args[0]],
                                    in.args.size() > 1 ? &regs[in.args[1]] : nullptr, in.node);
                break;
            case VMOp::seq_erase:
                regs[in.dst] = sequence_erase(
                    regs[in.reg], in.args.empty() ? nullptr : &regs[in.args[0]], in.node);
                break;
            case VMOp::seq_split:
                regs[in.dst] = split_to_sequence(tensor_in(regs[in.reg], in),
                                                 in.args.empty() ? nullptr : &regs[in.args[0]],
                                                 in.index, in.name == "squeeze", *pool, in.node);
                break;
            case VMOp::seq_concat:
            case VMOp::seq_stack:
                regs[in.dst] = VMValue(concat_sequence(regs[in.reg], in.index,
                                                       in.op == VMOp::seq_stack, *pool, in.node));
                break;
            case VMOp::str_normalize:
                regs[in.dst] = VMValue(normalize_strings(tensor_in(regs[in.reg], in),
                                                         case_change_from_string(in.name),
                                                         in.index == 1, in.strings, in.node));
                break;
            case VMOp::str_format:
                regs[in.dst] = VMValue(format_strings(tensor_in(regs[in.reg], in), in.node));
                break;
            case VMOp::str_parse:
                regs[in.dst] =
                    VMValue(parse_strings(tensor_in(regs[in.reg], in), in.dtype, in.node));
                break;
            case VMOp::str_const: {
                std::vector<int64_t> shape;
                for (const auto& c : in.shape) shape.push_back(eval_shape_code(c, slots));
                regs[in.dst] = VMValue(make_string_tensor(shape, in.strings));
                break;
            }
            case VMOp::none:
                regs[in.dst] = VMValue();
                break;
            case VMOp::has_value: {
                NDArray t = NDArray::empty({}, {kDLUInt, 1, 1});
                *static_cast<uint8_t*>(t.raw_data()) = regs[in.reg].kind != VMValue::Kind::none;
                regs[in.dst] = VMValue(t);
                break;
            }
            case VMOp::get_value:
                if (regs[in.reg].kind == VMValue::Kind::none) {
                    user_error() << "vm: node '" << in.node << "': the optional is empty";
                }
                regs[in.dst] = regs[in.reg];
                break;
            case VMOp::move:
                regs[in.dst] = regs[in.reg];
                break;
            case VMOp::kill:
                for (int a : in.args) regs[a] = VMValue();
                break;
            case VMOp::loop:
                regs[in.dst] = loop(in, regs, slots, depth);
                break;
            case VMOp::if_false: {
                const VMValue& c = regs[in.reg];
                if (c.kind != VMValue::Kind::tensor || c.tensor.num_elements() < 1) {
                    user_error() << "vm: node '" << in.node << "': the condition is not a tensor";
                }
                if (!truthy(c.tensor)) pc = static_cast<size_t>(in.index);
                break;
            }
            case VMOp::goto_:
                pc = static_cast<size_t>(in.index);
                break;
            case VMOp::ret:
                return regs[in.reg];
        }
    }
    user_error() << "vm: function '" << f.name << "' ran past its end";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::runtime
