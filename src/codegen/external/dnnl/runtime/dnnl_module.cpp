// libanvil_runtime_dnnl.so: the module oneDNN's regions run in. At load it reads the regions
// dnnl_codegen.cpp wrote (dnnl_format.h) and creates every primitive once: weights reordered to
// the layouts the primitives chose, intermediate values allocated in those layouts, reorders
// inserted where a value is read in another layout. A call binds the caller's tensors to the
// region's inputs and outputs (plain NCHW / row-major) and executes the steps in order.

#include <algorithm>
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "anvil/runtime.h"
#include "codegen/external/dnnl/dnnl_format.h"
#include "codegen/external/dnnl/runtime/dnnl_check.h"
#include "runtime/last_error.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

// The two OpenMP calls this library makes, declared here rather than by <omp.h>: the runtime is
// libgomp, oneDNN's, whichever compiler builds Anvil (clang ships no <omp.h> without libomp).
extern "C" {
void omp_set_num_threads(int num_threads);
int omp_get_max_threads(void);
}

namespace anvil::codegen::dnnl {

namespace {

using nlohmann::json;

// The work one more OpenMP thread must have before a step uses it: about a millisecond of one
// core's scalar arithmetic, tens of microseconds of its vector units.
constexpr double kWorkPerThread = 1 << 20;

// Keeps the calling thread's OpenMP team size as it was: the steps set their own, and another
// OpenMP user on the thread (NumPy, PyTorch in the same process) must not inherit it.
class OmpThreadsKept {
public:
    OmpThreadsKept() : threads_(omp_get_max_threads()) {}
    ~OmpThreadsKept() { omp_set_num_threads(threads_); }
    OmpThreadsKept(const OmpThreadsKept&) = delete;
    OmpThreadsKept& operator=(const OmpThreadsKept&) = delete;

private:
    int threads_;
};

// Whether oneDNN's int8 kernels on this CPU sum u8 x s8 products in int32 (VNNI, AMX, and every
// CPU but x86 ones), not pairs of them in saturating int16 first.
bool sums_int8_in_int32() {
#if defined(__x86_64__) || defined(__i386__)
    auto isa = static_cast<unsigned>(::dnnl::get_effective_cpu_isa());
    auto has = [isa](::dnnl::cpu_isa want) {
        return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
    };
    return has(::dnnl::cpu_isa::avx512_core_vnni) || has(::dnnl::cpu_isa::avx2_vnni);
#else
    return true;
#endif
}

using tag = ::dnnl::memory::format_tag;
using dt = ::dnnl::memory::data_type;
using ::dnnl::memory;

memory::desc plain(const memory::dims& dims, dt type = dt::f32) {
    memory::dims strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return memory::desc(dims, type, strides);
}

memory::desc any(const memory::dims& dims, dt type = dt::f32) {
    return memory::desc(dims, type, tag::any);
}

// oneDNN's type of a value type (kValueTypes), which check_function accepted.
dt data_type(const ValueType& t) {
    static const std::map<std::string, dt> kTypes = {
        {"f32", dt::f32}, {"u8", dt::u8}, {"s8", dt::s8}, {"s32", dt::s32}};
    return kTypes.at(t.name);
}

::dnnl::algorithm eltwise_alg(const std::string& name) {
    using A = ::dnnl::algorithm;
    static const std::map<std::string, A> kAlgs = {
        {"relu", A::eltwise_relu},         {"clip", A::eltwise_clip_v2},
        {"gelu_erf", A::eltwise_gelu_erf}, {"gelu_tanh", A::eltwise_gelu_tanh},
        {"logistic", A::eltwise_logistic}, {"tanh", A::eltwise_tanh},
        {"exp", A::eltwise_exp},           {"log", A::eltwise_log},
        {"sqrt", A::eltwise_sqrt},         {"abs", A::eltwise_abs},
        {"elu", A::eltwise_elu},           {"hardswish", A::eltwise_hardswish},
        {"linear", A::eltwise_linear}};
    auto it = kAlgs.find(name);
    if (it == kAlgs.end()) user_error() << "unknown eltwise algorithm '" << name << "'";
    return it->second;
}

// One region: its primitives and memories, created once (from a region check_function accepted).
// A call runs the steps on the region's memories: calls of one region take turns (a mutex), as
// its intermediate values have one buffer each.
class DnnlFunction {
public:
    DnnlFunction(const json& fn, const char* weights, const ::dnnl::engine& engine)
        : engine_(engine), stream_(engine), weights_(weights) {
        symbol_ = fn.at("symbol").get<std::string>();
        for (const auto& s : fn.at("values")) shapes_.push_back(s.get<memory::dims>());
        for (const auto& d : fn.at("dtypes")) {
            types_.push_back(find_value_type(d.get<std::string>()));
            dtypes_.push_back(data_type(*types_.back()));
            dl_dtypes_.push_back(runtime::dl_dtype_from_string(types_.back()->anvil));
        }
        canonical_.resize(shapes_.size());
        user_arg_.assign(shapes_.size(), -1);
        alias_arg_.assign(shapes_.size(), -1);
        constant_.assign(shapes_.size(), nullptr);
        inputs_ = fn.at("inputs").get<std::vector<int>>();
        outputs_ = fn.at("outputs").get<std::vector<int>>();
        for (size_t i = 0; i < inputs_.size(); ++i) user_arg_.at(inputs_[i]) = static_cast<int>(i);
        for (size_t i = 0; i < outputs_.size(); ++i) {
            user_arg_.at(outputs_[i]) = static_cast<int>(inputs_.size() + i);
        }
        for (int v : inputs_) canonical_[v] = user_memory(plain_of(v), user_arg_[v]);
        for (int v : outputs_) canonical_[v] = user_memory(plain_of(v), user_arg_[v]);
        for (const auto& c : fn.at("constants")) {
            int v = c.at("value").get<int>();
            constant_.at(v) = weights_ + c.at("offset").get<size_t>();
            canonical_[v] = memory(plain_of(v), engine_, const_cast<char*>(constant_[v]));
        }
        OmpThreadsKept kept;
        int index = 0;
        for (const auto& step : fn.at("steps")) {
            try {
                add_step(step);
            } catch (const ::dnnl::error& e) {
                user_error() << "oneDNN region " << symbol_ << ", step " << index << " ("
                             << step.at("op").get<std::string>()
                             << "): oneDNN cannot create it: " << e.what();
            }
            ++index;
        }
        attach_scratchpads();
    }

    const std::string& symbol() const { return symbol_; }

    void run(const runtime::Args& args) {
        if (saturating_layer_) {
            user_error() << symbol_ << ": an int8 layer compiled for a CPU with VNNI or AMX; "
                         << "oneDNN's kernels on this CPU, which has neither, would saturate its "
                            "sums: compile the model for this CPU";
        }
        size_t n = inputs_.size() + outputs_.size();
        if (static_cast<size_t>(args.size()) != n) {
            user_error() << symbol_ << ": called with " << args.size() << " arguments, expected "
                         << n;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i = 0; i < n; ++i) {
            DLTensor* t = args[static_cast<int>(i)].as_tensor();
            int v = i < inputs_.size() ? inputs_[i] : outputs_[i - inputs_.size()];
            // A scalar is described as one element (dnnl_codegen.cpp).
            bool scalar = t && t->ndim == 0 && shapes_[v] == memory::dims{1};
            if (!t ||
                (!scalar && (t->ndim != static_cast<int>(shapes_[v].size()) ||
                             !std::equal(shapes_[v].begin(), shapes_[v].end(), t->shape))) ||
                !runtime::dl_dtype_equal(t->dtype, dl_dtypes_[v]) ||
                t->device.device_type != kDLCPU || !t->data || !is_compact(*t)) {
                user_error() << symbol_ << ": argument " << i << " is not the compact "
                             << types_[v]->anvil
                             << " CPU tensor of the shape the region was compiled for";
            }
        }
        for (auto& [mem, arg] : bindings_) {
            DLTensor* t = args[arg].as_tensor();
            mem.set_data_handle(static_cast<char*>(t->data) + t->byte_offset);
        }
        OmpThreadsKept kept;
        // Anvil's pool workers spin for a moment after a kernel; its OpenMP team needs the cores
        // (on two threads a MobileNetV2 of int8 regions ran 30 % slower than on one).
        if (step_threads_max_ > 1) runtime::park_idle_workers();
        // oneDNN's OpenMP threads: as many as Anvil's pool had when the region was loaded
        // (`anvil run --threads`), fewer for small steps, where waking a team costs more than it
        // saves (a transformer's regions of a few microseconds ran 10-40x slower on two threads
        // than on one).
        for (size_t i = 0; i < steps_.size(); ++i) {
            omp_set_num_threads(threads_[i]);
            steps_[i].first.execute(stream_, steps_[i].second);
        }
        stream_.wait();
    }

private:
    static bool is_compact(const DLTensor& t) {
        if (!t.strides) return true;
        int64_t expected = 1;
        for (int i = t.ndim; i-- > 0;) {
            if (t.shape[i] != 1 && t.strides[i] != expected) return false;
            expected *= t.shape[i];
        }
        return true;
    }

    // Every primitive takes its scratchpad from the region (one buffer: the steps run one at a
    // time), not from oneDNN's global one, which belongs to the thread that created the
    // primitive: regions are created on the compiler's or loader's thread and run on others.
    static ::dnnl::primitive_attr user_scratchpad() {
        ::dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(::dnnl::scratchpad_mode::user);
        return attr;
    }

    void push(const ::dnnl::primitive& p, const memory::desc& scratchpad,
              std::unordered_map<int, memory> args) {
        steps_.push_back({p, std::move(args)});
        scratchpads_.push_back(scratchpad);
        threads_.push_back(step_threads_);
        step_threads_max_ = std::max(step_threads_max_, step_threads_);
    }

    // About how many arithmetic operations a step does: 2 per multiply-add of a convolution,
    // dense layer or matrix product, one per window element of a pool, a few per element of the
    // rest.
    double work_of(const json& step) const {
        const std::string op = step.at("op");
        int dst = step.at("dst");
        if (op == "conv2d" || op == "inner_product") {
            const memory::dims& w = shapes_[step.at("weights").get<int>()];
            double reduction = 1;
            for (size_t i = 1; i < w.size(); ++i) reduction *= static_cast<double>(w[i]);
            return 2 * elements(dst) * reduction;
        }
        if (op == "matmul") {
            const memory::dims& a = shapes_[step.at("src0").get<int>()];
            return 2 * elements(dst) *
                   static_cast<double>(step.at("transpose_a").get<bool>() ? a[a.size() - 2]
                                                                          : a.back());
        }
        if (op == "pool") {
            auto k = step.at("kernel").get<memory::dims>();
            return elements(dst) * static_cast<double>(k[0]) * static_cast<double>(k[1]);
        }
        return 4 * elements(dst);
    }

    double elements(int v) const {
        double n = 1;
        for (int64_t d : shapes_[v]) n *= static_cast<double>(d);
        return n;
    }

    // Gives each step that needs one its view of the shared scratchpad buffer.
    void attach_scratchpads() {
        size_t most = 0;
        for (const auto& d : scratchpads_) most = std::max(most, d.get_size());
        if (most == 0) return;
        scratchpad_ = memory(memory::desc({static_cast<int64_t>(most)}, dt::u8, tag::a), engine_);
        for (size_t i = 0; i < steps_.size(); ++i) {
            if (scratchpads_[i].get_size() == 0) continue;
            steps_[i].second[DNNL_ARG_SCRATCHPAD] =
                memory(scratchpads_[i], engine_, scratchpad_.get_data_handle());
        }
    }

    // A step that copies `from` into `to`, converting the layout.
    void reorder_step(const memory& from, const memory& to) {
        ::dnnl::reorder::primitive_desc pd(from, to, user_scratchpad());
        push(::dnnl::reorder(pd), pd.scratchpad_desc(), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    }

    // The same copy done now, once (a constant's weights at load).
    void reorder_now(memory from, memory to) {
        ::dnnl::reorder::primitive_desc pd(from, to, user_scratchpad());
        std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        if (pd.scratchpad_desc().get_size() > 0) {
            args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine_);
        }
        ::dnnl::reorder(pd).execute(stream_, args);
        stream_.wait();
    }

    memory user_memory(const memory::desc& md, int arg) {
        memory m(md, engine_, DNNL_MEMORY_NONE);
        bindings_.emplace_back(m, arg);
        return m;
    }

    // Value v's layout in the caller's tensors: plain (row-major), of its element type.
    memory::desc plain_of(int v) const { return plain(shapes_[v], dtypes_[v]); }

    bool is_output(int v) const { return user_arg_[v] >= static_cast<int>(inputs_.size()); }

    // Value v's elements, plain, described by `md` (another shape of the same elements, or a
    // strided view): the same bytes, no copy.
    memory view(int v, const memory::desc& md) {
        if (user_arg_[v] >= 0) return user_memory(md, user_arg_[v]);
        if (alias_arg_[v] >= 0) return user_memory(md, alias_arg_[v]);
        if (constant_[v]) return memory(md, engine_, const_cast<char*>(constant_[v]));
        memory m = get(v, plain_of(v));
        return memory(md, engine_, m.get_data_handle());
    }

    // Value v in layout `md`: its memory, or a reordered copy (made once: at load for a
    // constant, by a step before each use otherwise).
    memory get(int v, const memory::desc& md) {
        if (canonical_[v].get_desc() == md) return canonical_[v];
        for (auto& [key, m] : converted_) {
            if (key == v && m.get_desc() == md) return m;
        }
        memory m(md, engine_);
        if (constant_[v]) {
            reorder_now(canonical_[v], m);
        } else {
            reorder_step(canonical_[v], m);
        }
        converted_.emplace_back(v, m);
        return m;
    }

    // The memory a step writes value v into: the caller's tensor for an output (which `md` must
    // describe: the step was created with a plain destination), else new memory in `md`.
    memory destination(int v, const memory::desc& md) {
        if (!is_output(v)) canonical_[v] = memory(md, engine_);
        return canonical_[v];
    }

    // Where a convolution, dense layer or pool writes value v in the layout it chose (`md`):
    // destination(), except for a region output in another layout than the caller's plain one,
    // which is written to a buffer of its own and copied out (copy_out) after the step. oneDNN's
    // blocked-layout kernels are that much faster than what it has for a plain destination
    // (an im2col GEMM) that the copy pays for itself many times over.
    memory written(int v, const memory::desc& md) {
        if (is_output(v) && canonical_[v].get_desc() != md) return memory(md, engine_);
        return destination(v, md);
    }
    void copy_out(int v, const memory& m) {
        if (m != canonical_[v]) reorder_step(m, canonical_[v]);
    }

    ::dnnl::primitive_attr post_ops(const json& step, bool sum) {
        ::dnnl::post_ops ops;
        if (sum) ops.append_sum(1.0f);
        // An int8 layer rounds its scaled sum before the clip and the result's zero point, as
        // requantize does: oneDNN adds the zero point first and rounds once, which differs at
        // ties where the zero point is odd (and one step there changes the next layers).
        if (step.contains("quantized"))
            ops.append_eltwise(1.0f, ::dnnl::algorithm::eltwise_round, 0, 0);
        if (step.contains("post_op") && !step["post_op"].is_null()) {
            const json& e = step["post_op"];
            ops.append_eltwise(1.0f, eltwise_alg(e.at("alg")), e.at("alpha").get<float>(),
                               e.at("beta").get<float>());
        }
        ::dnnl::primitive_attr attr = user_scratchpad();
        attr.set_post_ops(ops);
        return attr;
    }

    void add_step(const json& step) {
        // oneDNN's kernels fix their partition of the work when they are created, for the
        // OpenMP team size of that moment: the step's own (run() sets the same one).
        step_threads_ = static_cast<int>(std::clamp(work_of(step) / kWorkPerThread, 1.0,
                                                    double(std::max(1, anvil_num_threads()))));
        omp_set_num_threads(step_threads_);
        const std::string op = step.at("op");
        if (op == "conv2d" || op == "inner_product") {
            layer(step, op == "conv2d");
        } else if (op == "eltwise") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = is_output(dst) ? get(src, plain_of(src)) : canonical_[src];
            ::dnnl::eltwise_forward::primitive_desc pd(
                {::dnnl::prop_kind::forward_inference, eltwise_alg(step.at("alg")), s.get_desc(),
                 step.at("alpha").get<float>(), step.at("beta").get<float>()},
                user_scratchpad(), engine_);
            memory d = destination(dst, pd.dst_desc());
            push(::dnnl::eltwise_forward(pd), pd.scratchpad_desc(),
                 {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}});
        } else if (op == "binary") {
            binary(step);
        } else if (op == "pool") {
            pool(step);
        } else if (op == "softmax") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = get(src, plain_of(src));
            ::dnnl::softmax_forward::primitive_desc pd(
                {::dnnl::prop_kind::forward_inference, s.get_desc(), step.at("axis").get<int>()},
                user_scratchpad(), engine_);
            memory d = destination(dst, plain_of(dst));
            push(::dnnl::softmax_forward(pd), pd.scratchpad_desc(),
                 {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}});
        } else if (op == "concat") {
            concat(step);
        } else if (op == "matmul") {
            matmul(step);
        } else if (op == "copy") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = view(src, plain(shapes_[dst], dtypes_[src]));
            if (is_output(dst)) {
                reorder_step(s, canonical_[dst]);
            } else {
                // A reshape of a value read in place: the same bytes, so the same argument
                // (rebound at each call) or the same constant.
                canonical_[dst] = s;
                alias_arg_[dst] = user_arg_[src] >= 0 ? user_arg_[src] : alias_arg_[src];
                constant_[dst] = constant_[src];
            }
        } else {
            user_error() << "unknown step '" << op << "'";
        }
    }

    // An int8 layer's output scales and zero points (dnnl_format.h): the zero points are
    // run-time arguments (bind_zero_points), the only kind oneDNN 2.6's convolutions take.
    static void quantization(::dnnl::primitive_attr* attr, const json& q) {
        auto scales = q.at("scales").get<std::vector<float>>();
        attr->set_output_scales(scales.size() > 1 ? 1 << 1 : 0, scales);  // per dst channel
        if (q.at("src_zero_point").get<int32_t>() != 0) {
            attr->set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
        }
        if (q.at("dst_zero_point").get<int32_t>() != 0) {
            attr->set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
        }
    }
    void bind_zero_points(const json& q, std::unordered_map<int, memory>* args) {
        for (auto [key, arg] : {std::pair{"src_zero_point", DNNL_ARG_SRC},
                                std::pair{"dst_zero_point", DNNL_ARG_DST}}) {
            int32_t zp = q.at(key).get<int32_t>();
            if (zp == 0) continue;
            memory m(memory::desc({1}, dt::s32, tag::x), engine_);
            *static_cast<int32_t*>(m.get_data_handle()) = zp;
            (*args)[DNNL_ARG_ATTR_ZERO_POINTS | arg] = m;
        }
    }

    // The compiler offloads an int8 layer only where oneDNN sums it exactly on the CPUs of its
    // target (sums_int8_exactly, dnnl_compiler.h). A library compiled for a CPU with VNNI and
    // run on one without would compute saturated sums instead: it loads (to be exported by a
    // cross-compile) but refuses to run.
    bool sums_int8_exactly_here(const json& step, bool conv) const {
        static const bool exact_anyway = sums_int8_in_int32();
        if (exact_anyway) return true;
        int src = step.at("src"), w = step.at("weights");
        const auto* weights = reinterpret_cast<const int8_t*>(constant_[w]);
        if (!weights) return false;
        size_t n = 1;
        for (int64_t d : shapes_[w]) n *= static_cast<size_t>(d);
        return sums_exactly_without_vnni(weights, n, conv && dtypes_[src] == dt::s8);
    }

    void layer(const json& step, bool conv) {
        const json* q = step.contains("quantized") ? &step["quantized"] : nullptr;
        if (q && !sums_int8_exactly_here(step, conv)) saturating_layer_ = true;
        if (q && !conv) return quantized_dense(step, *q);
        int src = step.at("src"), w = step.at("weights"), bias = step.at("bias");
        int sum = step.at("sum"), dst = step.at("dst");
        const memory::dims& in = shapes_[src];
        memory::dims wdims = shapes_[w];
        int64_t groups = conv ? step.at("groups").get<int64_t>() : 1;
        if (groups > 1) {  // [O, I/g, KH, KW] is [g, O/g, I/g, KH, KW] in the same bytes
            wdims = {groups, wdims[0] / groups, wdims[1], wdims[2], wdims[3]};
        }
        memory::desc bias_md = bias >= 0 ? any({shapes_[dst][1]}, dtypes_[bias]) : memory::desc();
        ::dnnl::primitive_attr attr = post_ops(step, sum >= 0);
        if (q) quantization(&attr, *q);
        memory::desc dst_md = any(shapes_[dst], dtypes_[dst]);
        ::dnnl::primitive prim;
        memory::desc src_want, w_want, bias_want, dst_got, scratchpad;
        if (conv) {
            auto strides = step.at("strides").get<memory::dims>();
            auto pad = step.at("padding").get<memory::dims>();
            auto dilation = step.at("dilation").get<memory::dims>();
            for (auto& d : dilation) d -= 1;  // oneDNN counts the gaps
            ::dnnl::convolution_forward::desc d(
                ::dnnl::prop_kind::forward_inference, ::dnnl::algorithm::convolution_direct,
                any(in, dtypes_[src]), any(wdims, dtypes_[w]), bias_md, dst_md, strides, dilation,
                {pad[0], pad[1]}, {pad[2], pad[3]});
            ::dnnl::convolution_forward::primitive_desc pd(d, attr, engine_);
            prim = ::dnnl::convolution_forward(pd);
            scratchpad = pd.scratchpad_desc();
            src_want = pd.src_desc();
            w_want = pd.weights_desc();
            bias_want = pd.bias_desc();
            dst_got = pd.dst_desc();
        } else {
            ::dnnl::inner_product_forward::desc d(::dnnl::prop_kind::forward_inference, any(in),
                                                  any(wdims), bias_md, dst_md);
            ::dnnl::inner_product_forward::primitive_desc pd(d, attr, engine_);
            prim = ::dnnl::inner_product_forward(pd);
            scratchpad = pd.scratchpad_desc();
            src_want = pd.src_desc();
            w_want = pd.weights_desc();
            bias_want = pd.bias_desc();
            dst_got = pd.dst_desc();
        }
        std::unordered_map<int, memory> margs;
        margs[DNNL_ARG_SRC] = get(src, src_want);
        margs[DNNL_ARG_WEIGHTS] =
            groups > 1 ? reordered(view(w, plain(wdims, dtypes_[w])), w_want) : get(w, w_want);
        if (bias >= 0)
            margs[DNNL_ARG_BIAS] =
                reordered(view(bias, plain({shapes_[dst][1]}, dtypes_[bias])), bias_want);
        memory d = written(dst, dst_got);
        // The sum post-op adds what the destination holds: the summed value, copied there in
        // the destination's layout first.
        if (sum >= 0) reorder_step(canonical_[sum], d);
        margs[DNNL_ARG_DST] = d;
        if (q) bind_zero_points(*q, &margs);
        push(prim, scratchpad, margs);
        copy_out(dst, d);
    }

    // An int8 dense layer: oneDNN 2.6's inner product takes no zero points, its matmul does.
    // The [N, K] weights are the matmul's [K, N] operand transposed: a strided view, reordered
    // at load to the layout the matmul chose.
    void quantized_dense(const json& step, const json& q) {
        int src = step.at("src"), w = step.at("weights"), bias = step.at("bias");
        int dst = step.at("dst");
        const memory::dims& wd = shapes_[w];
        memory::desc transposed({wd[1], wd[0]}, dtypes_[w], memory::dims{1, wd[1]});
        memory::desc bias_md =
            bias >= 0 ? plain({1, shapes_[dst][1]}, dtypes_[bias]) : memory::desc();
        ::dnnl::primitive_attr attr = post_ops(step, false);
        quantization(&attr, q);
        ::dnnl::matmul::primitive_desc pd(
            {plain_of(src), any({wd[1], wd[0]}, dtypes_[w]), bias_md, plain_of(dst)}, attr,
            engine_);
        std::unordered_map<int, memory> margs;
        margs[DNNL_ARG_SRC] = get(src, plain_of(src));
        margs[DNNL_ARG_WEIGHTS] = reordered(view(w, transposed), pd.weights_desc());
        if (bias >= 0) margs[DNNL_ARG_BIAS] = view(bias, bias_md);
        margs[DNNL_ARG_DST] = destination(dst, pd.dst_desc());
        bind_zero_points(q, &margs);
        push(::dnnl::matmul(pd), pd.scratchpad_desc(), margs);
    }

    // A constant's memory in layout `md`, reordered now.
    memory reordered(memory from, const memory::desc& md) {
        if (from.get_desc() == md) return from;
        memory m(md, engine_);
        reorder_now(from, m);
        return m;
    }

    void binary(const json& step) {
        using A = ::dnnl::algorithm;
        static const std::map<std::string, A> kAlgs = {
            {"add", A::binary_add}, {"sub", A::binary_sub}, {"mul", A::binary_mul},
            {"div", A::binary_div}, {"max", A::binary_max}, {"min", A::binary_min}};
        int a = step.at("src0"), b = step.at("src1"), dst = step.at("dst");
        memory s0 = is_output(dst) ? get(a, plain_of(a)) : canonical_[a];
        memory s1;
        if (shapes_[b] == shapes_[dst]) {
            s1 = get(b, s0.get_desc());
        } else {  // broadcast: leading 1s to the result's rank, plain
            memory::dims dims(shapes_[dst].size() - shapes_[b].size(), 1);
            dims.insert(dims.end(), shapes_[b].begin(), shapes_[b].end());
            s1 = view(b, plain(dims));
        }
        ::dnnl::binary::primitive_desc pd(
            {kAlgs.at(step.at("alg")), s0.get_desc(), s1.get_desc(), s0.get_desc()},
            user_scratchpad(), engine_);
        memory d = destination(dst, pd.dst_desc());
        push(::dnnl::binary(pd), pd.scratchpad_desc(),
             {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, d}});
    }

    void pool(const json& step) {
        using A = ::dnnl::algorithm;
        int src = step.at("src"), dst = step.at("dst");
        std::string alg = step.at("alg");
        A a = alg == "max"           ? A::pooling_max
              : alg == "avg_include" ? A::pooling_avg_include_padding
                                     : A::pooling_avg_exclude_padding;
        auto pad = step.at("padding").get<memory::dims>();
        memory s = canonical_[src];
        ::dnnl::pooling_forward::primitive_desc pd({::dnnl::prop_kind::forward_inference,
                                                    a,
                                                    s.get_desc(),
                                                    any(shapes_[dst]),
                                                    step.at("strides").get<memory::dims>(),
                                                    step.at("kernel").get<memory::dims>(),
                                                    {pad[0], pad[1]},
                                                    {pad[2], pad[3]}},
                                                   user_scratchpad(), engine_);
        memory d = written(dst, pd.dst_desc());
        std::unordered_map<int, memory> margs = {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}};
        if (pd.workspace_desc().get_size() > 0) {
            margs[DNNL_ARG_WORKSPACE] = memory(pd.workspace_desc(), engine_);
        }
        push(::dnnl::pooling_forward(pd), pd.scratchpad_desc(), margs);
        copy_out(dst, d);
    }

    // Sources in the layouts they have (oneDNN concatenates blocked layouts block-wise when
    // they agree); where it has no kernel for that mix, in the plain layout.
    void concat(const json& step) {
        int dst = step.at("dst"), axis = step.at("axis");
        std::vector<int> srcs = step.at("srcs").get<std::vector<int>>();
        auto make = [&](bool plain_sources) {
            std::vector<memory> mems;
            std::vector<memory::desc> mds;
            for (int v : srcs) {
                mems.push_back(plain_sources ? get(v, plain_of(v)) : canonical_[v]);
                mds.push_back(mems.back().get_desc());
            }
            ::dnnl::concat::primitive_desc pd(any(shapes_[dst]), axis, mds, engine_,
                                              user_scratchpad());
            return std::make_pair(pd, mems);
        };
        std::pair<::dnnl::concat::primitive_desc, std::vector<memory>> made;
        try {
            made = make(false);
        } catch (const ::dnnl::error&) {
            made = make(true);
        }
        auto& [pd, mems] = made;
        memory d = written(dst, pd.dst_desc());
        std::unordered_map<int, memory> margs = {{DNNL_ARG_DST, d}};
        for (size_t i = 0; i < mems.size(); ++i) margs[DNNL_ARG_MULTIPLE_SRC + int(i)] = mems[i];
        push(::dnnl::concat(pd), pd.scratchpad_desc(), margs);
        copy_out(dst, d);
    }

    void matmul(const json& step) {
        int a = step.at("src0"), b = step.at("src1"), dst = step.at("dst");
        // A transposed operand is a strided view of the plain one: its last two dimensions swap.
        auto operand = [&](int v, bool transposed) {
            memory::dims dims = shapes_[v];
            if (!transposed) return get(v, plain(dims));
            memory::desc p = plain(dims);
            memory::dims strides(p.data.format_desc.blocking.strides,
                                 p.data.format_desc.blocking.strides + dims.size());
            size_t r = dims.size();
            std::swap(dims[r - 1], dims[r - 2]);
            std::swap(strides[r - 1], strides[r - 2]);
            return view(v, memory::desc(dims, dt::f32, strides));
        };
        memory s0 = operand(a, step.at("transpose_a").get<bool>());
        memory s1 = operand(b, step.at("transpose_b").get<bool>());
        ::dnnl::matmul::primitive_desc pd({s0.get_desc(), s1.get_desc(), plain_of(dst)},
                                          user_scratchpad(), engine_);
        memory d = destination(dst, pd.dst_desc());
        push(::dnnl::matmul(pd), pd.scratchpad_desc(),
             {{DNNL_ARG_SRC, s0}, {DNNL_ARG_WEIGHTS, s1}, {DNNL_ARG_DST, d}});
    }

    ::dnnl::engine engine_;
    ::dnnl::stream stream_;
    const char* weights_;
    std::string symbol_;
    std::vector<memory::dims> shapes_;
    std::vector<const ValueType*> types_;
    std::vector<dt> dtypes_;             // oneDNN's of types_
    std::vector<DLDataType> dl_dtypes_;  // the caller's tensors' of types_
    std::vector<memory> canonical_;
    std::vector<int> user_arg_;          // the call argument a value is bound to, or -1
    std::vector<int> alias_arg_;         // the argument a reshaped value's bytes are, or -1
    std::vector<const char*> constant_;  // a constant's bytes, or null
    std::vector<int> inputs_, outputs_;
    std::vector<std::pair<memory, int>> bindings_;
    std::vector<std::pair<int, memory>> converted_;
    std::vector<std::pair<::dnnl::primitive, std::unordered_map<int, memory>>> steps_;
    std::vector<memory::desc> scratchpads_;  // each step's
    std::vector<int> threads_;               // each step's OpenMP team
    bool saturating_layer_ = false;  // an int8 layer oneDNN would not sum exactly on this CPU
    int step_threads_ = 1;           // the team of the step being created
    int step_threads_max_ = 1;       // the largest team of a step
    memory scratchpad_;
    std::mutex mutex_;  // the steps share their memories: one call at a time
};

class DnnlModule : public runtime::ModuleNode {
public:
    DnnlModule(const void* data, size_t size)
        : bytes_(static_cast<const char*>(data), size), engine_(::dnnl::engine::kind::cpu, 0) {
        if (size < 16 || std::memcmp(data, kDnnlMagic, 8) != 0) {
            user_error() << "the bytes are no oneDNN regions (bad header)";
        }
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i)
            n |= uint64_t(static_cast<unsigned char>(bytes_[8 + i])) << (8 * i);
        if (n > size - 16) user_error() << "the oneDNN regions are truncated";
        uint64_t weights_at = (16 + n + 63) / 64 * 64;
        if (weights_at > size) user_error() << "the oneDNN regions are truncated";
        json doc;
        try {
            doc = json::parse(bytes_.substr(16, n));
            if (!doc.is_object() || doc.value("version", -1) != kDnnlFormatVersion) {
                user_error() << "oneDNN regions of another format version than "
                             << kDnnlFormatVersion;
            }
            if (!doc.contains("functions") || !doc["functions"].is_array()) {
                user_error() << "oneDNN regions without a list of functions";
            }
            for (const auto& fn : doc["functions"]) check_function(fn, size - weights_at);
        } catch (const json::exception& e) {
            user_error() << "malformed oneDNN regions: " << e.what();
        }
        const char* weights = bytes_.data() + weights_at;
        for (const auto& fn : doc["functions"]) {
            auto f = std::make_unique<DnnlFunction>(fn, weights, engine_);
            if (functions_.count(f->symbol())) {
                user_error() << "oneDNN region " << f->symbol() << " defined twice";
            }
            names_.push_back(f->symbol());
            functions_[f->symbol()] = std::move(f);
        }
    }

    runtime::PackedFunc get_function(const std::string& name) override {
        auto it = functions_.find(name);
        if (it == functions_.end()) return runtime::PackedFunc();
        DnnlFunction* f = it->second.get();
        Ref<Object> keep(this);
        return runtime::PackedFunc(
            [f, keep](const runtime::Args& args, runtime::RetValue*) { f->run(args); });
    }
    std::vector<std::string> function_names() const override { return names_; }
    std::string type_key() const override { return "dnnl"; }

private:
    std::string bytes_;  // the weights are read in place
    ::dnnl::engine engine_;
    std::vector<std::string> names_;
    std::map<std::string, std::unique_ptr<DnnlFunction>> functions_;
};

}  // namespace

}  // namespace anvil::codegen::dnnl

extern "C" ANVIL_API int anvil_external_module_create(const void* bytes, size_t size,
                                                      AnvilModuleHandle* out) {
    return anvil::runtime::catch_to_status([&] {
        *out = nullptr;
        try {
            auto node = anvil::make_ref<anvil::codegen::dnnl::DnnlModule>(bytes, size);
            *out = anvil::runtime::module_new_handle(anvil::runtime::Module(node));
        } catch (const ::dnnl::error& e) {
            anvil::user_error() << "oneDNN: " << e.what();
        }
        return 0;
    });
}
